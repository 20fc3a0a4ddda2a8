/* small_descriptor: the descriptor's struct_size is 8, smaller than any
 * descriptor ABI v1 can describe. */
#define FX_NAME "small_descriptor"
#include "fixture.h"

FX_KINDS(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok);

static const wh_plugin_descriptor descriptor = FX_DESCRIPTOR_INIT(8u, WH_PLUGIN_MAGIC, WH_ABI_VERSION, NULL);

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    (void)offer;
    return &descriptor;
}
