/* entry_returns_null: widgethost_provider_entry returns NULL. */
#define FX_NAME "entry_returns_null"
#include "fixture.h"

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    (void)offer;
    return NULL;
}
