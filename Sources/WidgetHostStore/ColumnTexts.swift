import Synchronization
import WidgetHostScheduler

/// The JSON text of the small values that instance rows repeat (a pending
/// request's trigger and charge, an in-flight reload's): encoded once per
/// store instead of once per row. A `reloadTimelines` request gives
/// hundreds of instances the same trigger, and every issued reload writes
/// one of a handful of charges.
final class ColumnTexts: Sendable {
    /// A value with a column text.
    enum Value: Hashable, Sendable {
        case trigger(ReloadTrigger)
        case charge(ReloadCharge)
    }

    /// Past this many distinct values the texts are dropped and encoded again
    /// (the values are few; this bounds a store that sees many kinds).
    static let capacity = 4096

    private let texts = Mutex<[Value: String]>([:])

    /// The text of `value`, from `encode` the first time.
    func text(of value: Value, encode: () throws -> String) rethrows -> String {
        if let text = texts.withLock({ $0[value] }) { return text }
        let text = try encode()
        texts.withLock { texts in
            if texts.count >= Self.capacity { texts = [:] }
            texts[value] = text
        }
        return text
    }
}
