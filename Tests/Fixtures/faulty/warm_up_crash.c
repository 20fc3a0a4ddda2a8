/* warm_up_crash: BAD — its warm_up writes through a NULL pointer (SIGSEGV
 * in the fork server). The host must say so and run the plugin without the
 * warm-up. */
static int *volatile fx_null;

#define FX_NAME "warm_up_crash"
#define FX_WARM_UP_BEHAVIOUR (*(volatile int *)fx_null = 1)
#include "warm_up.h"
