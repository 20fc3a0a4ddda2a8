/// Reading memory ahead of the work that needs it (see
/// ``InstanceRecords/readAhead(_:ledgers:)``): loads whose values are only summed,
/// so that the cache lines are on their way while other loads are too.
enum ReadAhead {
    /// The size of a cache line on the machines this runs on.
    static let lineSize = 64

    /// Loads one byte of every cache line that the `bytes` bytes at
    /// `pointer` touch, and returns their sum.
    @inline(__always)
    static func lines(_ pointer: UnsafeRawPointer, bytes: Int) -> UInt64 {
        guard bytes > 0 else { return 0 }
        var sum: UInt64 = 0
        var offset = 0
        while offset < bytes {
            sum &+= UInt64(pointer.load(fromByteOffset: offset, as: UInt8.self))
            offset += lineSize
        }
        // The last line, when the first offset was not at a line's start.
        sum &+= UInt64(pointer.load(fromByteOffset: bytes - 1, as: UInt8.self))
        return sum
    }

    /// Loads every cache line of the object `object` of `bytes` bytes
    /// (its header included: its reference count, which a uniqueness
    /// check reads first), and returns their sum.
    @inline(__always)
    static func lines(of object: AnyObject, bytes: Int) -> UInt64 {
        lines(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()), bytes: bytes)
    }
}
