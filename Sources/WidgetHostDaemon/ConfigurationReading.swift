import Dispatch
import Synchronization
import WidgetHostModel

/// A configuration file read and checked on a thread of its own, so that a
/// start can open and read its state meanwhile.
///
/// ```swift
/// let reading = ConfigurationReading(path: "host.json")
/// // … other work …
/// let configuration = try reading.wait().get()
/// ```
final class ConfigurationReading: Sendable {
    private let done = DispatchGroup()
    private let result = Mutex<Result<DaemonConfiguration, DocumentError>?>(nil)

    /// Starts reading `path` (`-` for standard input) with
    /// ``DaemonConfiguration/load(_:)``.
    init(path: String) {
        done.enter()
        // A serial queue of its own, not a global one: using a global
        // queue once left libdispatch's pool monitor behind, which woke the
        // idle daemon every second for the rest of its life.
        DispatchQueue(label: "widgethost.configuration-reading", qos: .userInitiated).async { [self] in
            let read = Result { () throws(DocumentError) in try DaemonConfiguration.load(path) }
            result.withLock { $0 = read }
            done.leave()
        }
    }

    /// The configuration, or why it was refused; waits for the read to end.
    /// May be called more than once.
    func wait() -> Result<DaemonConfiguration, DocumentError> {
        done.wait()
        return result.withLock { $0! }
    }
}
