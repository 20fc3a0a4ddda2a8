#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The thread every `widgethost-runner` is spawned from: started once, it
/// lives as long as the host.
///
/// A runner asks the kernel to kill it when its parent dies
/// (`PR_SET_PDEATHSIG`, so that no runner outlives a host killed with
/// `kill -9`), and its parent, for that signal, is the *thread* that
/// spawned it. Spawned from a pool thread (a dispatch queue's, which
/// libdispatch ends after about 5 s idle), a warm worker was killed a few
/// seconds after its last call, and the next call paid a cold start; the
/// SIGCHLD woke the idle daemon. Spawned from this thread, a runner dies
/// with the host process and only then.
///
/// ```swift
/// let rc = LauncherThread.shared?.run { wh_spawn(runner, argv, envp, …) }
/// ```
///
/// The spawns run one at a time (a `posix_spawn` takes a fraction of a
/// millisecond); callers wait for theirs.
final class LauncherThread: @unchecked Sendable {
    /// The host's launcher thread, started at its first use; nil if the
    /// thread could not be created (out of threads: a host fault).
    static let shared: LauncherThread? = LauncherThread()

    /// A spawn to run, and whether it ran: guarded by `lock`.
    private final class Job: @unchecked Sendable {
        let work: () -> Void
        var finished = false
        init(_ work: @escaping () -> Void) { self.work = work }
    }

    /// A job's result, written by the launcher thread before the job is
    /// marked finished (under the lock), read by the caller after.
    private final class Answer<T>: @unchecked Sendable {
        var value: T?
    }

    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when a job is queued.
    private let queued = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Broadcast when a job finished.
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `lock`.
    private var jobs: [Job] = []

    private init?() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(queued, nil)
        pthread_cond_init(finished, nil)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        guard
            pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<LauncherThread>.fromOpaque(context!).takeUnretainedValue().serve()
                },
                context) == 0
        else {
            Unmanaged<LauncherThread>.fromOpaque(context).release()
            return nil
        }
        pthread_detach(thread)
    }

    /// Runs `body` on the launcher thread and returns its result, once it ran.
    func run<T>(_ body: @escaping () -> T) -> T {
        let result = Answer<T>()
        let job = Job { result.value = body() }
        pthread_mutex_lock(lock)
        jobs.append(job)
        pthread_cond_signal(queued)
        while !job.finished { pthread_cond_wait(finished, lock) }
        pthread_mutex_unlock(lock)
        return result.value!
    }

    /// The thread's loop: runs the jobs in order, never returns.
    private func serve() -> Never {
        while true {
            pthread_mutex_lock(lock)
            while jobs.isEmpty { pthread_cond_wait(queued, lock) }
            let job = jobs.removeFirst()
            pthread_mutex_unlock(lock)
            job.work()
            pthread_mutex_lock(lock)
            job.finished = true
            pthread_cond_broadcast(finished)
            pthread_mutex_unlock(lock)
        }
    }
}
