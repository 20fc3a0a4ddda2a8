import CWidgetHostSupport
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the state database takes writes, and what the loop owes it while
/// it does not.
///
/// A write that fails because of the storage (the disk is full, the file
/// system read-only, an I/O error: ``StateStoreError.isStorageFault(_:)``) puts
/// the daemon in this mode: it stops acting on what it could not store (no
/// reload is issued, a request that changes state is refused with
/// `storage-unavailable` and undone), answers what it can from memory
/// (`status`, `explain`, `hello`), logs once, and retries every
/// ``retryInterval``; the first write that succeeds writes what it owes and
/// ends the mode (logged once).
struct StorageHealth {
    /// Why writes fail, while they do.
    var fault: String?
    /// When they started failing (wall clock).
    var since: Double = 0
    /// The next retry (monotonic seconds).
    var nextRetry: Double = 0
    /// Instances whose completed reload could not be stored: written first
    /// once the store takes writes again.
    var dirty: Set<String> = []
    /// The whole scheduler state is owed (a configuration reload, a clock jump).
    var dirtyAll = false

    static let retryInterval = 1.0

    var isAvailable: Bool { fault == nil }
}

extension Daemon {
    /// Commits `body` in one transaction, preceded by what the scheduler
    /// changed since the last commit (the instances it touched:
    /// ``ReloadScheduler/touched``, the free ledger and the apps when they
    /// differ from what was written) and whatever the daemon owes the store.
    /// Returns false (after logging a change of state once) when it could
    /// not: the caller undoes what it did in memory (``apply(_:at:kind:message:)``)
    /// or keeps it, owed (the instances are written with the next commit that succeeds).
    ///
    /// Only what changed is written: an event that touched 3 instances of
    /// 100,000 writes 3 rows, with statements prepared once (group commit).
    @discardableResult
    func commit(_ what: String, _ body: (StateTransaction) throws -> Void) -> Bool {
        stateGeneration &+= 1
        let touched = scheduler.takeTouched()
        let owed = storage.dirty
        let owedAll = storage.dirtyAll
        let written = owedAll ? [] : touched.union(owed)
        let timelines = changedTimelines
        let freeLedger = scheduler.freeLedger
        let apps = scheduler.apps
        do {
            try store.transaction { tx in
                if owedAll {
                    try tx.replaceSchedulerState(scheduler.state)
                } else {
                    for id in written.sorted() {
                        if let state = scheduler.instanceState(id) {
                            try tx.upsert(state, timeline: owed.contains(id) || timelines.contains(id))
                        } else {
                            try tx.removeInstance(id)
                        }
                    }
                    if freeLedger != persisted.freeLedger { try tx.replaceFreeLedger(freeLedger) }
                    if apps != persisted.apps { try tx.replaceApps(apps) }
                }
                try body(tx)
            }
        } catch {
            // What the scheduler changed is owed (a caller that undoes its
            // change makes that a harmless rewrite of the stored values).
            storage.dirty.formUnion(touched)
            storageFailed(error, what: what)
            return false
        }
        storage.dirty.subtract(owed)
        changedTimelines.subtract(timelines)
        persisted = (freeLedger, apps)
        if owedAll { storage.dirtyAll = false }
        watch.committed = true
        if let fault = storage.fault {
            let down = Timestamp.duration(max(0, clock.now() - storage.since))
            storage.fault = nil
            logger.notice(
                "storage available again after \(down) (was: \(fault)); \(owedAll ? "the whole state" : "\(owed.count) instances") written, reloads resume"
            )
            _ = try? store.appendEvent(time: clock.now(), kind: "storage", message: "available again after \(down)")
        }
        return true
    }

    /// Records a failed write: a storage fault starts the unavailable mode
    /// (logged once); anything else is logged as the bug it is.
    func storageFailed(_ error: any Error, what: String) {
        guard StateStoreError.isStorageFault(error) else {
            logger.error("could not record \(what): \(error)")
            return
        }
        storage.nextRetry = wh_monotonic_seconds() + StorageHealth.retryInterval
        guard storage.fault == nil else { return }
        storage.fault = "\(error)"
        storage.since = clock.now()
        logger.critical(
            "storage unavailable: \(error) while recording \(what); reloads are paused and requests that change state are refused (storage-unavailable) until \(options.statePath) takes writes again; retrying every \(Timestamp.duration(StorageHealth.retryInterval))"
        )
    }

    /// While the store is unavailable: one write attempt per retry interval
    /// (what is owed, and the clock sample), which ends the mode when it succeeds.
    func retryStorageIfDue() {
        guard !storage.isAvailable, wh_monotonic_seconds() >= storage.nextRetry else { return }
        let sample = clock.sample()
        commit("the retry of the state database") { tx in try tx.recordClockSample(sample) }
    }

    /// Milliseconds until the next storage retry, for the loop's poll; nil when available.
    var storageRetryTimeout: Int32? {
        guard !storage.isAvailable else { return nil }
        return Int32(max(0, min(60_000, (storage.nextRetry - wh_monotonic_seconds()) * 1000)).rounded(.up))
    }

    /// An event-log line with no state attached: skipped while the store is unavailable.
    func note(kind: String, message: String, instanceID: String? = nil) {
        guard storage.isAvailable else { return }
        let now = clock.now()
        commit("the event \(kind)") { tx in
            try tx.appendEvent(time: now, instanceID: instanceID, kind: kind, message: message)
        }
    }
}
