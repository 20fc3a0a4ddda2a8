/* warm_up_counter: a well-behaved warm_up (it only records what it saw);
 * calls report it (warm_up.h). */
#define FX_NAME "warm_up_counter"
#define FX_WARM_UP_BEHAVIOUR ((void)0)
#include "warm_up.h"
