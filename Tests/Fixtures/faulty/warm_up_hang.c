/* warm_up_hang: BAD — its warm_up never returns. The host must give up at
 * the load timeout, say so and run the plugin without the warm-up. */
#include <unistd.h>

#define FX_NAME "warm_up_hang"
#define FX_WARM_UP_BEHAVIOUR \
    for (;;) pause()
#include "warm_up.h"
