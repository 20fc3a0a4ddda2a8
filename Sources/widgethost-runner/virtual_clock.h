#ifndef WIDGETHOST_VIRTUAL_CLOCK_H
#define WIDGETHOST_VIRTUAL_CLOCK_H

/** Makes the plugin's wall clock (clock_gettime(CLOCK_REALTIME),
 *  gettimeofday, time) read `now` (seconds since the epoch) at this instant,
 *  and advance in real time from there. */
void wh_virtual_clock_set(double now);

#endif
