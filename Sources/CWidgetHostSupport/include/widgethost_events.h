/*
 * widgethost_events.h — the daemon's event sources, as file descriptors one
 * poll(2) can wait on: signals (signalfd), a wall-clock deadline that also
 * reports clock jumps (timerfd), and a wakeup from worker threads (eventfd).
 * Plus sd_notify(3) without linking libsystemd.
 */
#ifndef WIDGETHOST_EVENTS_H
#define WIDGETHOST_EVENTS_H

#ifdef __cplusplus
extern "C" {
#endif

/** Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (threads started
 *  afterwards inherit the mask), ignores SIGPIPE, and returns a signalfd
 *  (non-blocking, close-on-exec) that reports those three, or -1 with errno.
 *  Call it before any other thread starts. Children started with wh_spawn
 *  get an empty mask back. */
int wh_signalfd_open(void);

/** For a command whose threads are already running (where a signalfd cannot
 *  be used): catches SIGINT, SIGTERM and SIGHUP, unless the process was
 *  started with one ignored, and returns the read end of a pipe (blocking,
 *  close-on-exec) on which each caught signal arrives as one byte, its
 *  number; -1 with errno. Call it once. The handler only writes that byte,
 *  once per signal (a second one takes the default action). */
int wh_interrupt_pipe_open(void);

/** Unblocks, in the calling thread, the signals wh_interrupt_pipe_open
 *  catches: a process started with them blocked (a mask its parent's thread
 *  had) still gets them, in this thread. */
void wh_interrupt_unblock(void);

/** Reads one pending signal from a wh_signalfd_open descriptor: its number,
 *  0 if none is pending, -1 on error. */
int wh_signalfd_read(int fd);

/** A CLOCK_REALTIME timerfd (non-blocking, close-on-exec), or -1. */
int wh_timerfd_open(void);

/** Arms the timer for the absolute wall-clock time `seconds` (since 1970)
 *  with TFD_TIMER_CANCEL_ON_SET, so a jump of the clock wakes the reader;
 *  `seconds` < 0 disarms it. Returns 0 or -1. */
int wh_timerfd_arm(int fd, double seconds);

/** Reads the timer: 1 if it expired, 2 if the wall clock was set (a jump),
 *  0 if neither, -1 on another error. */
int wh_timerfd_read(int fd);

/** An eventfd (non-blocking, close-on-exec), or -1. */
int wh_eventfd_open(void);

/** Adds one to the eventfd (wakes a poller). Safe from any thread. */
void wh_eventfd_signal(int fd);

/** Resets the eventfd to zero. */
void wh_eventfd_drain(int fd);

/** Sends `state` (e.g. "READY=1") to $NOTIFY_SOCKET as sd_notify(3) does.
 *  Returns 1 if sent, 0 if there is no $NOTIFY_SOCKET, -1 on error. */
int wh_sd_notify(const char *state);

/** CLOCK_MONOTONIC in seconds. */
double wh_monotonic_seconds(void);

/** The uid and pid of the peer of a connected Unix socket (SO_PEERCRED).
 *  Returns 0, or -1 with errno set. */
int wh_peer_credentials(int fd, unsigned int *uid, int *pid);

#ifdef __cplusplus
}
#endif

#endif
