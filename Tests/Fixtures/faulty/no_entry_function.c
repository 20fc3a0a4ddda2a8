/* no_entry_function: exports no widgethost_provider_entry at all; only a
 * misspelled lookalike. */
#define FX_NAME "no_entry_function"
#include "fixture.h"

FX_KINDS(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok);

static const wh_plugin_descriptor descriptor =
    FX_DESCRIPTOR_INIT(sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, WH_ABI_VERSION, NULL);

const wh_plugin_descriptor *widgethost_plugin_entry(const wh_host_offer *offer);

WH_EXPORT const wh_plugin_descriptor *widgethost_plugin_entry(const wh_host_offer *offer) {
    (void)offer;
    return &descriptor;
}
