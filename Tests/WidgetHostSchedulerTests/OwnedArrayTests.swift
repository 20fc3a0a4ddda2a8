import Foundation
import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The owned array against a standard one, through random appends, removes,
/// writes, clears and copies, with strings (elements that hold references,
/// so a slot moved or freed twice, or never freed, shows as a wrong value
/// or a crash under the address sanitizer).
@Suite("Owned array")
struct OwnedArrayTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAStandardArray(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var owned = OwnedArray<String>()
        var plain: [String] = []
        // The last copy taken, and what it held then.
        var copy = OwnedArray<String>()
        var copied: [String] = []
        for step in 0..<4_000 {
            switch random.next() % 10 {
            case 0, 1, 2, 3:
                let value = "v\(step)-\(random.next() % 1_000)"
                owned.append(value)
                plain.append(value)
            case 4:
                let added = Int(random.next() % 40)
                owned.append(repeating: "r\(step)", count: added)
                plain.append(contentsOf: repeatElement("r\(step)", count: added))
            case 5 where !plain.isEmpty:
                let i = Int(random.next() % UInt64(plain.count))
                #expect(owned.remove(at: i) == plain.remove(at: i))
            case 6 where !plain.isEmpty:
                #expect(owned.removeLast() == plain.removeLast())
            case 7 where !plain.isEmpty:
                let i = Int(random.next() % UInt64(plain.count))
                owned[i] += "+"
                plain[i] += "+"
            case 8:
                // A copy keeps its own elements while the original changes
                // (the one it replaces is freed).
                let copyHolds = elements(copy) == copied
                #expect(copyHolds, "step \(step)")
                copy = owned.clone()
                copied = plain
            case 9 where random.next() % 20 == 0:
                let keeping = random.next() % 2 == 0
                owned.removeAll(keepingCapacity: keeping)
                plain.removeAll()
                #expect(keeping ? owned.capacity > 0 || owned.count == 0 : owned.capacity == 0)
            default:
                break
            }
            let same = owned.count == plain.count && elements(owned) == plain
            #expect(same, "step \(step)")
            if !same { return }
        }
        let copyHolds = elements(copy) == copied
        #expect(copyHolds)
    }

    @Test func fillsAndGrowsInOneCall() {
        var owned = OwnedArray<Int32>(repeating: -1, count: 8_192)
        let filled = owned.count == 8_192 && owned.withUnsafeBufferPointer { $0.allSatisfy { $0 == -1 } }
        #expect(filled)
        owned.append(repeating: 7, count: 100)
        owned.append(repeating: 9, count: 0)
        let grown = owned.count == 8_292 && owned.capacity >= 8_292 && owned[8_191] == -1 && owned[8_192] == 7
        #expect(grown)
    }

    /// A block starts on a cache line, at every size it grows to: a
    /// 64-byte record (the scheduler's hot record) is then one line, and
    /// the read-ahead asks for one line per record.
    @Test func blocksStartOnACacheLine() {
        struct Line { var words: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0) }
        var lines = OwnedArray<Line>()
        var bytes = OwnedArray<UInt8>()
        var starts: [Int] = []
        for n in 0..<5_000 {
            lines.append(Line())
            bytes.append(UInt8(truncatingIfNeeded: n))
            starts.append(lines.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) })
            starts.append(bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) })
        }
        #expect(starts.allSatisfy { $0 % ReadAhead.lineSize == 0 })
        #expect(MemoryLayout<HotRecord>.stride == ReadAhead.lineSize)
        // An instance's line: the hot record in the first cache line, the
        // cold record and the position's numbers in the second.
        #expect(MemoryLayout<InstanceLine>.stride == 2 * ReadAhead.lineSize)
        #expect(InstanceLine.hotOffset == 0)
        #expect(InstanceLine.coldOffset == ReadAhead.lineSize)
        #expect(InstanceLine.timelineOffset >= ReadAhead.lineSize)
        #expect(InstanceLine.infoOffset >= ReadAhead.lineSize)
        #expect(InstanceLine.infoOffset + MemoryLayout<PositionInfo>.size <= 2 * ReadAhead.lineSize)
    }

    /// A block of ``OwnedArray/hugePageBlock`` (eight huge pages) or more
    /// starts on a huge page and is asked for in huge pages: the kernel's
    /// map of this process marks its mapping `hg` (`MADV_HUGEPAGE`).
    /// Smaller blocks, two huge pages or a quarter of one, are not asked:
    /// the last huge page's unused part would be more than an eighth.
    @Test func largeBlocksAreAskedForInHugePages() throws {
        let huge = OwnedArray<UInt8>.hugePage
        var large = OwnedArray<UInt8>()
        large.reserveCapacity(OwnedArray<UInt8>.hugePageBlock + 1)
        var medium = OwnedArray<UInt8>()
        medium.reserveCapacity(2 * huge + 1)
        var small = OwnedArray<UInt8>()
        small.reserveCapacity(huge / 4)
        let largeStart = large.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        let mediumStart = medium.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        let smallStart = small.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(largeStart % UInt(huge) == 0)
        // Where the kernel has transparent huge pages at all.
        guard FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled") else { return }
        // Read to its end (`String(contentsOfFile:)` stops at the first
        // read's worth of a file in /proc).
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        #expect(Self.flags(of: largeStart, in: maps)?.contains("hg") == true)
        #expect(Self.flags(of: mediumStart, in: maps).map { !$0.contains("hg") } ?? true)
        #expect(Self.flags(of: smallStart, in: maps).map { !$0.contains("hg") } ?? true)
    }

    /// The `VmFlags` of the mapping that holds `address`, from the text
    /// of `/proc/self/smaps`.
    static func flags(of address: UInt, in smaps: String) -> [Substring]? {
        var holds = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let ends = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                holds = ends.count == 2 && ends[0] <= address && address < ends[1]
            } else if holds, fields.first == "VmFlags:" {
                return Array(fields.dropFirst())
            }
        }
        return nil
    }

    /// The elements of `owned`, as a standard array to compare.
    func elements(_ owned: borrowing OwnedArray<String>) -> [String] {
        owned.withUnsafeBufferPointer { Array($0) }
    }
}
