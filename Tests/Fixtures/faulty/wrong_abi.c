/* wrong_abi: the descriptor says abi_version 2 whatever the host offers
 * (it ignores WH_NEGOTIATE). */
#define FX_NAME "wrong_abi"
#include "fixture.h"

FX_KINDS(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok);

static const wh_plugin_descriptor descriptor =
    FX_DESCRIPTOR_INIT(sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, 2u, NULL);

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    (void)offer;
    return &descriptor;
}
