/* bad_magic: the descriptor's magic is 0x12345678 instead of WH_PLUGIN_MAGIC. */
#define FX_NAME "bad_magic"
#include "fixture.h"

FX_KINDS(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok);

static const wh_plugin_descriptor descriptor =
    FX_DESCRIPTOR_INIT(sizeof(wh_plugin_descriptor), 0x12345678u, WH_ABI_VERSION, NULL);

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    (void)offer;
    return &descriptor;
}
