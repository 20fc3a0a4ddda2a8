import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A job a ``ShardWorker`` runs: a function of one pointer (no closure, so
/// posting one allocates nothing).
typealias ShardJob = @convention(c) (UnsafeMutableRawPointer) -> Void

/// A thread that runs one shard's part of a ``ShardSet``'s wakeup: it spins
/// a while after each job for the next (a wakeup's issue and its batch's
/// completions come microseconds apart when the driver calls nothing in
/// between), then parks on a condition variable, so that an idle engine's
/// thread does not wake (a parked thread costs nothing between due events).
///
/// One poster: the set's thread posts a job and waits for it; the worker
/// writes only what the job's pointer names (its shard's lane and core,
/// or its half of a merge) meanwhile.
final class ShardWorker: @unchecked Sendable {
    /// Jobs posted, and done.
    private let posted = Atomic<Int>(0)
    private let done = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Held by the poster from ``claim()`` to ``release()``.
    private let claimed = Atomic<Bool>(false)
    /// The job and its pointer, written before `posted` is raised (which
    /// publishes them) and read after the worker sees it raised.
    private var job: ShardJob?
    private var context: UnsafeMutableRawPointer?
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let wake: UnsafeMutablePointer<pthread_cond_t>
    /// Spin turns before parking (about 1-2 ms on this project's VM: longer
    /// than a wakeup of 100,000 instances takes between its parts).
    private let spins: Int

    /// A worker on a thread of its own; nil when the system would not start
    /// the thread (its limit of threads or memory reached).
    init?(spins: Int = 2_000_000) {
        self.spins = spins
        lock = .allocate(capacity: 1)
        wake = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(wake, nil)
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self)
        let created = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let worker = Unmanaged<ShardWorker>.fromOpaque(raw).takeRetainedValue()
                worker.loop()
                return nil
            }, me.toOpaque())
        guard created == 0 else {
            me.release()
            return nil
        }
        pthread_detach(thread)
    }

    deinit {
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(lock)
        wake.deallocate()
        lock.deallocate()
    }

    /// Whether this caller now holds the worker (none did): only its holder
    /// posts to it, and releases it after.
    func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    /// Lets go of this caller's claim.
    func release() {
        claimed.store(false, ordering: .releasing)
    }

    /// Runs `job(context)` on the worker's thread; ``wait()`` for it.
    func post(_ job: ShardJob, _ context: UnsafeMutableRawPointer) {
        self.job = job
        self.context = context
        posted.add(1, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent) { signal() }
    }

    /// Returns once the job posted last is done.
    func wait() {
        let target = posted.load(ordering: .relaxed)
        var turns = 0
        while done.load(ordering: .acquiring) != target {
            // On a busy machine the worker may be off its core: let it in.
            turns += 1
            if turns % 256 == 0 { sched_yield() }
        }
    }

    /// Ends the thread after its job (the thread holds the worker until then).
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        posted.add(1, ordering: .sequentiallyConsistent)
        signal()
    }

    private func signal() {
        pthread_mutex_lock(lock)
        pthread_cond_signal(wake)
        pthread_mutex_unlock(lock)
    }

    private func loop() {
        var seen = 0
        while true {
            var turns = 0
            while posted.load(ordering: .acquiring) == seen {
                turns += 1
                if turns < spins { continue }
                pthread_mutex_lock(lock)
                sleeping.store(true, ordering: .sequentiallyConsistent)
                while posted.load(ordering: .sequentiallyConsistent) == seen { pthread_cond_wait(wake, lock) }
                sleeping.store(false, ordering: .sequentiallyConsistent)
                pthread_mutex_unlock(lock)
                turns = 0
            }
            seen = posted.load(ordering: .acquiring)
            if stopping.load(ordering: .sequentiallyConsistent) { return }
            if let job, let context { job(context) }
            done.store(seen, ordering: .releasing)
        }
    }
}

/// The shard workers of the process: a ``ShardSet`` takes the threads it
/// needs at its first wakeup large enough to share, and gives them back
/// when it ends, so that a copy of a scheduler (a journal's copy, a copy
/// taken to compare) does not start threads of its own each time. Idle
/// workers are parked.
final class ShardWorkerPool: Sendable {
    static let shared = ShardWorkerPool()

    private let idle = Mutex<[ShardWorker]>([])

    /// `count` workers, idle ones first, new ones started for the rest;
    /// fewer when the system would not start a thread.
    func take(_ count: Int) -> [ShardWorker] {
        var workers = idle.withLock { idle in
            var taken: [ShardWorker] = []
            while taken.count < count, let worker = idle.popLast() { taken.append(worker) }
            return taken
        }
        while workers.count < count, let worker = ShardWorker() { workers.append(worker) }
        return workers
    }

    /// Takes `workers` back, idle (none of them running a job).
    func give(_ workers: [ShardWorker]) {
        guard !workers.isEmpty else { return }
        idle.withLock { $0.append(contentsOf: workers) }
    }
}
