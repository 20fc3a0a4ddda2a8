#if canImport(Glibc)
    import Glibc
#endif

/// An array owned by one value and never shared: its elements in one block
/// of memory that only its owner reads and writes, copied only by
/// ``clone()``. Not copyable, so a write needs no uniqueness check: a
/// standard array asks at every write whether its buffer is shared
/// (`swift_isUniquelyReferenced`, a call and a branch), 37 times per reload
/// in the scheduler before the arrays it writes on every reload became
/// these.
///
/// The scheduler's core (``SchedulerCore``, not copyable itself) keeps its
/// per-position records in them, and reads them through
/// ``withUnsafeBufferPointer(_:)`` where it walks many.
///
/// ```swift
/// var records = OwnedArray<Double>()
/// records.append(1.5)
/// records[0] += 1        // in place, no check of a shared buffer
/// let copy = records.clone()
/// ```
struct OwnedArray<Element>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private(set) var capacity = 0

    init() {
        base = UnsafeMutablePointer(bitPattern: MemoryLayout<Element>.alignment).unsafelyUnwrapped
    }

    /// An array of `count` copies of `element` (one call to fill the block:
    /// element by element, the debug build that the tests run spent
    /// milliseconds on a timing wheel's ring).
    init(repeating element: Element, count: Int) {
        self.init()
        reserveCapacity(count)
        base.initialize(repeating: element, count: count)
        self.count = count
    }

    deinit {
        base.deinitialize(count: count)
        if capacity > 0 {
            Self.deallocateBlock(UnsafeMutableRawPointer(base), bytes: blockBytes)
        }
    }

    /// A copy of the elements, in a block of its own.
    func clone() -> OwnedArray<Element> {
        var copy = OwnedArray()
        copy.reserveCapacity(count)
        copy.base.initialize(from: base, count: count)
        copy.count = count
        return copy
    }

    var indices: Range<Int> { 0..<count }
    var isEmpty: Bool { count == 0 }

    /// The element at `i` (`0 ≤ i < count`), read or written in place.
    /// The bounds are checked in a debug build only, as an unsafe buffer's
    /// are: the owner indexes it by positions it checked once where they
    /// came in (a ticket, an id, a position asked for), and a check at
    /// every access was 4 % of a reload's instructions.
    subscript(i: Int) -> Element {
        @inline(__always)
        unsafeAddress {
            assert(UInt(bitPattern: i) < UInt(bitPattern: count), "index out of range")
            return UnsafePointer(base + i)
        }
        @inline(__always)
        unsafeMutableAddress {
            assert(UInt(bitPattern: i) < UInt(bitPattern: count), "index out of range")
            return base + i
        }
    }

    /// The alignment of a block: a cache line (or the element's, if
    /// larger), so that a 64-byte record is one line, not two halves of
    /// two (a large block from `malloc` starts 16 bytes into a line).
    static var blockAlignment: Int { Swift.max(MemoryLayout<Element>.alignment, ReadAhead.lineSize) }

    /// The size of a huge page: 2 MB on x86-64 and arm64 (with 4 KB base
    /// pages).
    static var hugePage: Int { 2 << 20 }

    /// A block of at least `bytes`, on a cache line. From
    /// ``hugePageBlock`` up, it starts on a huge page's boundary, is rounded
    /// up to whole huge pages, and is asked to be backed by them
    /// (`madvise(MADV_HUGEPAGE)`: where the kernel's transparent huge pages
    /// are set to `madvise`, as on this project's VM, only blocks asked for
    /// get them).
    ///
    /// At 100,000 instances the ledgers' times and the cold records are
    /// about 60 MB, far more than the TLB maps in 4 KB pages: each of a
    /// reload's reads, on a random page, also waited for a page walk. A
    /// huge page's cost is its last one, resident whole once a byte of it
    /// is used: at most 2 MB per block, an eighth of a block from 16 MB
    /// up. From 4 MB up (until 2026-12-02), the ledgers' times at 10,000
    /// instances (4 MB) crossed into a third huge page after 38 hours:
    /// 1,207 B per instance resident against 992, for no speed at 100,000
    /// (the records of 8 MB on 4 KB pages read 3.44 M events/s against
    /// 3.19 M, medians of 4 rounds). The advice is best-effort: a kernel
    /// without huge pages refuses it, and the block is used as it is.
    ///
    /// On Linux a block of ``mappedBlock`` bytes or more is mapped from
    /// the kernel directly (`mmap`), and unmapped when let go
    /// (``deallocateBlock(_:bytes:)``): from `malloc`, a freed block that
    /// size raised glibc's threshold for mapping, and the next ones came
    /// from the heap and stayed resident once freed (the ledger arena's
    /// compactions, each a new block for the old: 1,829 against 1,196 B
    /// per instance resident at 10,000 before the heap was trimmed).
    private static func allocateBlock(bytes: Int) -> UnsafeMutableRawPointer {
        let huge = hugePage
        #if os(Linux)
            guard bytes >= mappedBlock else { return .allocate(byteCount: bytes, alignment: blockAlignment) }
            let (size, alignment) = mapping(bytes)
            // A mapping starts on a page. For a huge page's boundary, a huge
            // page more is mapped and the ends unmapped.
            let extra = alignment == huge ? huge : 0
            let mapped = mmap(nil, size + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let mapped, mapped != MAP_FAILED else {
                fatalError("out of memory: mapping \(size + extra) bytes for an array failed (errno \(errno))")
            }
            guard extra > 0 else { return mapped }
            let address = UInt(bitPattern: mapped)
            let start = (address + UInt(huge) - 1) / UInt(huge) * UInt(huge)
            if start > address { munmap(mapped, Int(start - address)) }
            let tail = UInt(huge) - (start - address)
            if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: start + UInt(size)), Int(tail)) }
            let block = UnsafeMutableRawPointer(bitPattern: start).unsafelyUnwrapped
            _ = madvise(block, size, MADV_HUGEPAGE)
            return block
        #else
            guard bytes >= hugePageBlock else { return .allocate(byteCount: bytes, alignment: blockAlignment) }
            return .allocate(byteCount: (bytes + huge - 1) / huge * huge, alignment: huge)
        #endif
    }

    /// The smallest block mapped from the kernel directly: glibc's own
    /// threshold for mapping, before it moves.
    static var mappedBlock: Int { 128 << 10 }

    /// The smallest block backed by huge pages: eight of them (16 MB), so
    /// that the last one's unused part is at most an eighth of the block.
    static var hugePageBlock: Int { 8 * hugePage }

    /// The size and alignment of a mapped block of `bytes`: whole huge
    /// pages on a huge page's boundary from ``hugePageBlock`` up, else
    /// whole pages on a page's boundary.
    private static func mapping(_ bytes: Int) -> (size: Int, alignment: Int) {
        let unit = bytes >= hugePageBlock ? hugePage : 4096
        return ((bytes + unit - 1) / unit * unit, unit)
    }

    /// Lets go of a block ``allocateBlock(bytes:)`` made for `bytes`.
    private static func deallocateBlock(_ block: UnsafeMutableRawPointer, bytes: Int) {
        #if os(Linux)
            if bytes >= mappedBlock {
                munmap(block, mapping(bytes).size)
                return
            }
        #endif
        block.deallocate()
    }

    /// The bytes of the block the elements are in (``allocateBlock(bytes:)``
    /// made it for that many).
    private var blockBytes: Int { capacity * MemoryLayout<Element>.stride }

    /// Room for `minimum` elements, moved to a larger block when needed.
    mutating func reserveCapacity(_ minimum: Int) {
        guard minimum > capacity else { return }
        let block = Self.allocateBlock(bytes: minimum * MemoryLayout<Element>.stride)
            .bindMemory(to: Element.self, capacity: minimum)
        block.moveInitialize(from: base, count: count)
        if capacity > 0 {
            Self.deallocateBlock(UnsafeMutableRawPointer(base), bytes: blockBytes)
        }
        base = block
        capacity = minimum
    }

    @inline(__always)
    mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Twice the room (16 at first), out of the way of ``append(_:)``'s inlined path.
    @inline(never)
    private mutating func grow() {
        reserveCapacity(Swift.max(16, capacity * 2))
    }

    /// Appends `count` copies of `element`, in one call to fill them.
    mutating func append(repeating element: Element, count added: Int) {
        guard added > 0 else { return }
        if count + added > capacity { reserveCapacity(Swift.max(count + added, capacity * 2)) }
        (base + count).initialize(repeating: element, count: added)
        count += added
    }

    /// Removes and returns the element at `i`, the later ones moved down one place.
    mutating func remove(at i: Int) -> Element {
        precondition(i >= 0 && i < count, "index out of range")
        let element = (base + i).move()
        (base + i).moveInitialize(from: base + i + 1, count: count - i - 1)
        count -= 1
        return element
    }

    @inline(__always)
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast of an empty array")
        count -= 1
        return (base + count).move()
    }

    /// Removes every element; the block is kept with `keepingCapacity`.
    mutating func removeAll(keepingCapacity: Bool = false) {
        base.deinitialize(count: count)
        count = 0
        guard !keepingCapacity, capacity > 0 else { return }
        Self.deallocateBlock(UnsafeMutableRawPointer(base), bytes: blockBytes)
        base = UnsafeMutablePointer(bitPattern: MemoryLayout<Element>.alignment).unsafelyUnwrapped
        capacity = 0
    }

    /// The address of the first element: valid until the array grows,
    /// shrinks or goes, for a view made and dropped within one call (as
    /// ``withUnsafeBufferPointer(_:)``'s buffer, without a closure that the
    /// caller's own closures would be nested in).
    @inline(__always)
    var unsafeBaseAddress: UnsafeMutablePointer<Element> { base }

    @inline(__always)
    func withUnsafeBufferPointer<R, E: Error>(_ body: (UnsafeBufferPointer<Element>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    @inline(__always)
    mutating func withUnsafeMutableBufferPointer<R, E: Error>(
        _ body: (UnsafeMutableBufferPointer<Element>) throws(E) -> R
    ) throws(E) -> R {
        try body(UnsafeMutableBufferPointer(start: base, count: count))
    }
}

// One owner at a time: the block is reached only through its owner, which
// is not copyable, so a value sent to another task takes the block with it.
extension OwnedArray: @unchecked Sendable where Element: Sendable {}
