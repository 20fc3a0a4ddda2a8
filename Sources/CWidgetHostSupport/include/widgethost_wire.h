/*
 * widgethost_wire.h — the framed protocol between the host and
 * `widgethost-runner`, the child process that loads and calls a plugin.
 *
 * This is private to widgethost (plugins never see it); both sides are
 * built from this one header, so the constants cannot drift apart.
 *
 * The channel is a SOCK_STREAM Unix socket on the child's fd 3
 * (WH_WIRE_FD). Each message is a 16-byte header followed by `length`
 * bytes of payload, all integers little-endian:
 *
 *     uint32 magic    WH_WIRE_MAGIC ("WHW1")
 *     uint16 version  WH_WIRE_VERSION
 *     uint16 type     a wh_wire_type
 *     uint32 length   payload bytes, at most WH_WIRE_MAX_PAYLOAD
 *     uint32 reserved zero
 *
 * Payloads are sequences of fields: u32, i32, u64 (little-endian),
 * f64 (IEEE 754 bits as a little-endian u64) and str (u32 byte length,
 * then the bytes, no NUL). The fields of each message are listed below,
 * in order.
 *
 * A conversation: host sends LOAD; the runner answers LOADED or
 * LOAD_FAILED. Then, for each call, host sends CALL and the runner
 * answers RESULT or CALL_FAILED. When the host closes the socket the
 * runner exits. In fork-server mode (LOAD's mode) each CALL is answered
 * by a forked child on its own channel: the server announces each child
 * with CHILD_STARTED (the host's end of the child's socket attached), the
 * host sends the CALL on that socket and the child answers RESULT or
 * CALL_FAILED there; the server sends CHILD_EXITED when it reaped it.
 * A fork server whose plugin has a warm_up runs it after LOADED and
 * reports WARMED before the first CHILD_STARTED.
 */
#ifndef WIDGETHOST_WIRE_H
#define WIDGETHOST_WIRE_H

#include <stdint.h>

/* Constants are enumerators (not macros with expressions) so that Swift
 * imports them too. */
enum {
    WH_WIRE_MAGIC = 0x31574857u, /* "WHW1" little-endian */
    WH_WIRE_VERSION = 8u,
    WH_WIRE_HEADER_SIZE = 16u,
    /** Largest payload either side accepts (16 MiB). */
    WH_WIRE_MAX_PAYLOAD = 16u * 1024u * 1024u,
    /** The child's fd for the protocol socket. */
    WH_WIRE_FD = 3,
    /** Limits on a result, checked in the runner and again in the host. */
    WH_LIMIT_MAX_ENTRIES = 400u,
    WH_LIMIT_MAX_RESULT_BYTES = 10u * 1024u * 1024u,
    /** A plugin's error_message is cut to this many bytes (the rest is
     *  dropped and the message says so). */
    WH_LIMIT_MAX_ERROR_MESSAGE_BYTES = 64u * 1024u
};

typedef enum wh_wire_type {
    /* host -> runner */
    /** str plugin_path, u32 abi_min, u32 abi_max, str host_version;
     *  since version 2 the sandbox policy, applied before dlopen:
     *  str data_directory (the plugin's only writable place; its cwd),
     *  u32 allow_network (0: no network namespace interface, no internet
     *  sockets, no TCP), u32 sandbox_flags (wh_sandbox_layer bits),
     *  u64 address_space_bytes, u64 cpu_seconds, u64 open_files,
     *  u64 file_size_bytes, u64 processes (rlimits; 0 leaves one as
     *  inherited); since version 3: u32 mode (WH_RUNNER_*),
     *  u64 max_tasks (the pids cgroup's pids.max; 0: no pids cgroup),
     *  u32 read_only_count then that many str (extra Landlock read-only
     *  paths), u32 read_write_count then that many str (extra read-write
     *  paths); since version 5: u32 warm_up (1: a fork server runs the
     *  plugin's warm_up, if it has one, before forking call children) */
    WH_MSG_LOAD = 1,
    /** u32 entry_point, u32 family, u32 is_preview, f64 display_width,
     *  f64 display_height, f64 now, f64 timeout, str kind,
     *  str configuration_json, str locale, str data_directory; since
     *  version 8: str push_token (empty: none; wh_context.push_token) */
    WH_MSG_CALL = 2,
    /** Fork server only, host -> server (the only message the server reads
     *  after LOAD): the host is done with this call child (it answered,
     *  failed or timed out) and has killed its process group. u32 pid */
    WH_MSG_CALL_ENDED = 3,

    /* runner -> host */
    /** u32 abi_version, u32 descriptor_size, str id, str name, str version,
     *  str vendor, str sdk_version, u64 load_nanoseconds, u32 thread_count,
     *  u32 kind_count, then per kind: str id, str display_name,
     *  str description, u32 families, u32 flags, u32 entry_points (bit 0
     *  placeholder, bit 1 snapshot, bit 2 timeline present),
     *  u32 parameter_count, then per parameter: str name, u32 type,
     *  u32 has_default, str default_json, str description; since version 5,
     *  last: u32 has_warm_up (the descriptor has a warm_up function) */
    WH_MSG_LOADED = 101,
    /** u32 wh_load_failure, str detail (dlerror or similar),
     *  str field, str expected, str found */
    WH_MSG_LOAD_FAILED = 102,
    /** i32 status, u32 policy, f64 policy_date, i32 error_code,
     *  str error_message, u64 call_nanoseconds (entry call to completion),
     *  u32 completed_on_calling_thread, u32 entry_count, then per entry:
     *  u32 flags, f64 date, f64 relevance_score, f64 relevance_duration,
     *  str content_json; and last u32 duplicate_completions (extra calls of
     *  the completion seen before the result was sent) */
    WH_MSG_RESULT = 103,
    /** u32 wh_call_failure, str detail, u64 found, u64 limit */
    WH_MSG_CALL_FAILED = 104,
    /** Fork server only. From the server when it forked a call child,
     *  with two descriptors attached (SCM_RIGHTS, on the frame's first
     *  byte): the host's end of the child's own socket (already
     *  O_NONBLOCK) and a pidfd of the child. u32 pid (the child's pid, also
     *  its process group id) */
    WH_MSG_CHILD_STARTED = 105,
    /** Fork server only. From the server, after it reaped a call child:
     *  u32 pid, i32 wait_status; since version 6 the CPU time (user +
     *  system, ns) the child used in all (its setup, prefault, call and
     *  teardown, from wait4) and the server's own CPU time so far (its
     *  forks and reaping): u64 child_cpu_ns, u64 server_cpu_ns */
    WH_MSG_CHILD_EXITED = 106,
    /** From the runner's SIGSYS handler, just before the process kills
     *  itself, when seccomp trapped a forbidden system call (one write, so
     *  it never interleaves with another frame's bytes): u32 pid (the
     *  process that made the call), u32 syscall number, u32 audit
     *  architecture (AUDIT_ARCH_*), str name ("" if not known). Written by
     *  code inside the sandbox: the host trusts it only to name the call of
     *  a process that did die of SIGSYS. In a fork server's call child (and
     *  what it starts) it arrives on the child's own channel. */
    WH_MSG_FORBIDDEN_SYSCALL = 107,
    /** Fork server only, right after LOADED when LOAD asked for the warm-up
     *  and the plugin has one: u64 warm_up_nanoseconds, u32 thread_count
     *  (after the warm-up; more than 1: the server will not fork) */
    WH_MSG_WARMED = 108
} wh_wire_type;

/** LOAD's mode. With WH_RUNNER_FORK_SERVER, a runner that is still
 *  single-threaded after LOADED (and WARMED) becomes a fork server
 *  (docs/isolation.md): it reads only CALL_ENDED from fd 3 and is the only
 *  writer of it. It keeps WH_FORK_SERVER_STANDBYS standby call children,
 *  each forked with its own socketpair and announced with CHILD_STARTED; a
 *  child reads one CALL on its socket, answers RESULT or CALL_FAILED there
 *  and exits (the host kills its process group). When a standby takes a call the server forks its
 *  replacement once no call is running any more (CALL_ENDED, or the child's
 *  exit), so the fork does not compete with the call for a CPU, or at once
 *  if no standby is left; it reaps children as they exit and sends
 *  CHILD_EXITED. A child that reads EOF exits with status 0; the server
 *  exits when the host closes fd 3. */
enum {
    WH_RUNNER_ONE_CALL = 0u,
    WH_RUNNER_FORK_SERVER = 1u,
    /** A warm worker: after LOADED (and WARMED) it answers every CALL on
     *  fd 3 itself, one at a time, until the host closes the channel or
     *  kills it (docs/isolation.md, "Warm workers"). */
    WH_RUNNER_WORKER = 2u
};
enum {
    WH_FORK_SERVER_STANDBYS = 2u
};

/** The sandbox layers (LOAD's sandbox_flags); docs/sandbox.md. The
 *  session layer (own session, PDEATHSIG, fds 0-3, clean environment,
 *  cwd, stdin) is always applied. */
typedef enum wh_sandbox_layer {
    WH_SANDBOX_RLIMITS = 1u << 0,
    WH_SANDBOX_NO_NEW_PRIVS = 1u << 1,
    WH_SANDBOX_LANDLOCK = 1u << 2,
    WH_SANDBOX_SECCOMP = 1u << 3,
    WH_SANDBOX_NETNS = 1u << 4,
    /** A pids cgroup (pids.max = LOAD's max_tasks) around the runner and
     *  all it starts: a process limit that binds root too. */
    WH_SANDBOX_PIDS = 1u << 5,
    /** A PID namespace whose init is the runner's own: every process a
     *  plugin starts dies with the runner, and /proc (with
     *  WH_SANDBOX_MOUNTNS) shows only the plugin's processes. */
    WH_SANDBOX_PIDNS = 1u << 6,
    /** A mount namespace with a minimal read-only root: the system paths,
     *  the plugin, its data directory (the only writable place) and the
     *  policy's extra paths; no other path, socket or device. */
    WH_SANDBOX_MOUNTNS = 1u << 7,
    WH_SANDBOX_ALL = 0xffu
} wh_sandbox_layer;

/** Default rlimits (overridable per plugin through LOAD). */
enum {
    WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB = 4096u,
    WH_SANDBOX_DEFAULT_CPU_SECONDS = 30u,
    WH_SANDBOX_DEFAULT_OPEN_FILES = 256u,
    WH_SANDBOX_DEFAULT_FILE_SIZE_MIB = 128u,
    WH_SANDBOX_DEFAULT_PROCESSES = 4096u,
    /** pids.max of the pids cgroup: processes and threads together. */
    WH_SANDBOX_DEFAULT_MAX_TASKS = 512u,
    /** At most this many extra paths of each kind in LOAD. */
    WH_SANDBOX_MAX_EXTRA_PATHS = 64u
};

/** Why the runner could not load a plugin (WH_MSG_LOAD_FAILED). */
typedef enum wh_load_failure {
    WH_LOAD_FILE_NOT_FOUND = 1,
    WH_LOAD_NOT_READABLE = 2,
    WH_LOAD_NOT_ELF = 3,
    WH_LOAD_WRONG_MACHINE = 4,
    WH_LOAD_NOT_SHARED_OBJECT = 5,
    WH_LOAD_MISSING_DEPENDENCY = 6,
    WH_LOAD_UNRESOLVED_SYMBOL = 7,
    WH_LOAD_DLOPEN_FAILED = 8,
    WH_LOAD_NO_ENTRY_FUNCTION = 9,
    WH_LOAD_ENTRY_RETURNED_NULL = 10,
    WH_LOAD_ABI_MISMATCH = 11,
    WH_LOAD_PLUGIN_REFUSED = 12,
    WH_LOAD_INVALID_DESCRIPTOR = 13,
    /** A sandbox layer the kernel offers could not be applied (detail says
     *  which and why); the plugin was not loaded. */
    WH_LOAD_SANDBOX_FAILED = 14
} wh_load_failure;

/** Why a call produced no result (WH_MSG_CALL_FAILED). */
typedef enum wh_call_failure {
    WH_CALL_UNKNOWN_KIND = 1,
    WH_CALL_MISSING_ENTRY_POINT = 2,
    WH_CALL_NULL_RESULT = 3,
    WH_CALL_BAD_RESULT_STRUCT = 4,
    WH_CALL_TOO_MANY_ENTRIES = 5,
    WH_CALL_RESULT_TOO_LARGE = 6,
    WH_CALL_NOT_LOADED = 7
} wh_call_failure;

#endif /* WIDGETHOST_WIRE_H */
