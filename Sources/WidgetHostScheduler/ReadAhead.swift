import CWidgetHostReadAhead

/// Asking for memory ahead of the work that needs it (``SchedulerCore``'s
/// read-ahead over a chunk of positions): prefetches, which start a cache
/// line on its way and retire at once.
///
/// Before, the reading ahead loaded a byte of each line and summed them
/// (a number kept so that the loads were made). A load that misses holds
/// its place in the processor's window until its line comes, and so does
/// every instruction after it: a chunk's hundreds of misses held up the
/// work behind them. A prefetch holds nothing, and needs no sum.
///
/// What is read to find an address (a ledger ring's header, a
/// timeline's entries) is still a load; it reads a line asked for
/// earlier, in a pass of its own (see
/// ``InstanceRecords/readAheadReferenced(_:)``).
enum ReadAhead {
    /// The size of a cache line on the machines this runs on.
    static let lineSize = 64

    /// A block of memory to read ahead: found in one loop and asked for in
    /// a second where reading it out held a reference over the prefetch
    /// (the entry wheel's payloads, ``WheelPayload/readAheadBlock``), or
    /// asked for at once (a timeline's entries,
    /// ``InstanceRecords/readAheadReferenced(_:)``). For
    /// prefetching only: not to be read through.
    typealias Block = (start: UnsafeRawPointer, bytes: Int)

    /// Starts the cache line holding `address` on its way. `address` is
    /// never dereferenced: any address, mapped or not, is harmless.
    @inline(__always)
    static func line(_ address: UnsafeRawPointer) {
        widgethost_read_ahead(address)
    }

    /// Starts every cache line that the `bytes` bytes at `pointer` touch
    /// on its way.
    @inline(__always)
    static func lines(_ pointer: UnsafeRawPointer, bytes: Int) {
        guard bytes > 0 else { return }
        var offset = 0
        while offset < bytes {
            line(pointer + offset)
            offset &+= lineSize
        }
        // The last line, when the first offset was not at a line's start.
        line(pointer + (bytes &- 1))
    }

    /// ``lines(_:bytes:)`` over `value` (a record in a block that
    /// ``OwnedArray`` aligns to a line): one prefetch when its size is at
    /// most a line and it starts on one.
    @inline(__always)
    static func lines<T>(of value: UnsafePointer<T>) {
        let size = MemoryLayout<T>.size
        if size <= lineSize && MemoryLayout<T>.stride == lineSize {
            line(value)
        } else {
            lines(value, bytes: size)
        }
    }
}
