/* refuses: answers abi_version 0 (refusal) to every host, with the reason
 * "this plugin needs widgethost ABI 3 or newer". */
#define FX_NAME "refuses"
#include "fixture.h"

FX_KINDS(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok);

static const wh_plugin_descriptor descriptor = FX_DESCRIPTOR_INIT(
    sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, 0u, "this plugin needs widgethost ABI 3 or newer");

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    (void)offer;
    return &descriptor;
}
