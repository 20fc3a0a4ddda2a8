import CWidgetHostSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Hands values from worker threads to the daemon's loop: `post` appends and
/// wakes the loop's poll through an eventfd; the loop `take`s them all.
final class Mailbox<Value: Sendable>: Sendable {
    private let items = Mutex<[Value]>([])
    /// The descriptor the loop polls.
    let descriptor: Int32

    init() throws(DaemonError) {
        descriptor = wh_eventfd_open()
        guard descriptor >= 0 else { throw DaemonError.system("eventfd", errno: errno) }
    }

    func post(_ value: Value) {
        items.withLock { $0.append(value) }
        wh_eventfd_signal(descriptor)
    }

    func take() -> [Value] {
        wh_eventfd_drain(descriptor)
        return items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
