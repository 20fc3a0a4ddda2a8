// WidgetHostSchedulerBench: 100,000 widget instances over one virtual day.
//
// The fast path below is the scheduler's rule set (policy due times with the
// 5-minute floor and stable jitter, the rolling 24 h budget with
// "oldest + 24 h" deferral, spacing, view-tier allowances, hidden deferral,
// entry changes) over struct-of-arrays state and a hierarchical timing wheel.
// Before timing, it is cross-checked against `ReloadScheduler` (the model) on
// a sample: every reload time of every sampled instance must match.
//
//   swift run -c release WidgetHostSchedulerBench [instances]

import CWidgetHostSupport
import WidgetHostModel
import WidgetHostScheduler

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

let epoch = 1_800_000_000.0  // hour-aligned virtual start
let daySeconds: UInt32 = 86_400
let never = UInt32.max

// MARK: The fake provider (deterministic, allocation-free)

/// A timeline as the fast path stores it: entries `start + k*step`, k < count.
struct FakeTimeline {
    var step: UInt32
    var count: UInt32
    /// 0 atEnd, 1 after(start + afterDelta), 2 never.
    var policy: UInt8
    var afterDelta: Int64
}

@inline(__always)
func mix(_ x: UInt64) -> UInt64 {
    var z = x &+ 0x9e37_79b9_7f4a_7c15
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
}

/// What instance `i` returns on its `n`-th reload.
@inline(__always)
func fakeTimeline(instance i: Int, reload n: UInt32) -> FakeTimeline {
    let h = mix(UInt64(i) &* 0x1_0000_0001 &+ UInt64(n))
    let profile = mix(UInt64(i)) % 100
    let step: UInt32 =
        switch h % 5 {
        case 0: 300
        case 1: 600
        case 2: 900
        case 3: 1200
        default: 1800
        }
    let count = UInt32(3 + (h >> 8) % 10)
    if profile < 40 { return FakeTimeline(step: step, count: count, policy: 0, afterDelta: 0) }
    if profile < 80 {
        let delta: Int64 =
            switch (h >> 16) % 4 {
            case 0: 300
            case 1: 900
            case 2: 1800
            default: 3600
            }
        return FakeTimeline(step: step, count: count, policy: 1, afterDelta: delta)
    }
    if profile < 90 { return FakeTimeline(step: 300, count: 1, policy: 2, afterDelta: 0) }
    // Misbehaving: a date in the past, or a zero interval.
    return (h >> 20) & 1 == 0
        ? FakeTimeline(step: 0, count: 1, policy: 1, afterDelta: -60)
        : FakeTimeline(step: 0, count: 1, policy: 0, afterDelta: 0)
}

func isInitiallyHidden(_ i: Int) -> Bool { mix(UInt64(i) ^ 0xabcdef) % 5 == 0 }
func showTime(_ i: Int) -> UInt32 { UInt32(mix(UInt64(i) ^ 0x5151) % UInt64(daySeconds)) }

// MARK: Event queues

protocol EventQueue {
    init(capacityHint: Int)
    mutating func push(_ time: UInt32, _ payload: UInt32)
    /// Hands every event to `handler` in time order until `end`; the handler may push.
    mutating func run<H: QueueHandler>(until end: UInt32, _ handler: inout H) where H.Queue == Self
}

protocol QueueHandler {
    associatedtype Queue
    mutating func handle(_ time: UInt32, _ payload: UInt32, _ queue: inout Queue)
    /// Read-ahead for an event `2 * distance` events away: prefetches the
    /// instance's hot record.
    mutating func prefetchFar(_ payload: UInt32)
    /// Read-ahead for an event `distance` events away: reads the (prefetched)
    /// hot record and prefetches the rest of what the event will touch.
    mutating func prefetchNear(_ payload: UInt32)
}

/// How many events ahead `prefetchNear` runs (`prefetchFar` runs twice as
/// far ahead). Measured: 2 was slower than 4, 8 and 16, which were alike.
let prefetchDistance = 8

/// Lists of `UInt32` words in fixed chunks (`chunkWords - 1` words and the
/// next chunk's index) carved from one growable buffer, with a stack of free
/// chunks: a slot of the wheel is a (head, tail, tail fill) triple, so an
/// append is a store into the tail chunk (no per-slot array, no uniqueness
/// check, no reallocation of a slot, no load from the chunk). Like the
/// per-instance state, the benchmark never frees it. Chunks of 64 words
/// (256 bytes) measured faster than 16 or 32 (the walk in `take` chases
/// fewer links) and as fast as 128 or 256.
struct ChunkLists {
    static let chunkWords = 64
    static let itemsPerChunk = UInt32(chunkWords - 1)
    static let none = UInt32.max
    var storage: UnsafeMutablePointer<UInt32>
    var chunkCapacity: Int
    var used = 0  // chunks handed out so far (the free stack takes back the rest)
    var free: UnsafeMutablePointer<UInt32>
    var freeCount = 0
    /// Head and tail chunk of each list, and how many words the tail holds.
    let heads: UnsafeMutablePointer<UInt32>
    let tails: UnsafeMutablePointer<UInt32>
    let fill: UnsafeMutablePointer<UInt32>

    init(lists: Int, chunks: Int) {
        chunkCapacity = max(chunks, 16)
        storage = UnsafeMutableRawPointer.allocate(byteCount: chunkCapacity * Self.chunkWords * 4, alignment: 64)
            .bindMemory(to: UInt32.self, capacity: chunkCapacity * Self.chunkWords)
        free = .allocate(capacity: chunkCapacity)
        heads = .allocate(capacity: lists)
        heads.initialize(repeating: Self.none, count: lists)
        tails = .allocate(capacity: lists)
        tails.initialize(repeating: Self.none, count: lists)
        fill = .allocate(capacity: lists)
        fill.initialize(repeating: Self.itemsPerChunk, count: lists)
    }

    @inline(__always)
    mutating func newChunk() -> UInt32 {
        if freeCount > 0 {
            freeCount -= 1
            return free[freeCount]
        }
        if used == chunkCapacity {
            let words = chunkCapacity * Self.chunkWords
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: 2 * words * 4, alignment: 64)
                .bindMemory(to: UInt32.self, capacity: 2 * words)
            bigger.update(from: storage, count: words)
            storage.deallocate()
            storage = bigger
            let biggerFree = UnsafeMutablePointer<UInt32>.allocate(capacity: 2 * chunkCapacity)
            biggerFree.update(from: free, count: freeCount)
            free.deallocate()
            free = biggerFree
            chunkCapacity *= 2
        }
        used += 1
        return UInt32(used - 1)
    }

    @inline(__always)
    mutating func append(_ list: Int, _ word: UInt32) {
        var n = fill[list]
        var tail = tails[list]
        if n == Self.itemsPerChunk {
            let c = newChunk()
            if tail == Self.none {
                heads[list] = c
            } else {
                storage[Int(tail) * Self.chunkWords + Self.chunkWords - 1] = c
            }
            tails[list] = c
            tail = c
            n = 0
        }
        storage[Int(tail) * Self.chunkWords + Int(n)] = word
        fill[list] = n + 1
    }

    /// Moves the words of `list` (in order) to the end of `buffer`, empties
    /// the list and frees its chunks.
    mutating func take(_ list: Int, into buffer: inout WordBuffer) {
        var c = heads[list]
        let tail = tails[list]
        let tailFill = fill[list]
        heads[list] = Self.none
        tails[list] = Self.none
        fill[list] = Self.itemsPerChunk
        while c != Self.none {
            let base = Int(c) * Self.chunkWords
            buffer.append(storage + base, count: Int(c == tail ? tailFill : Self.itemsPerChunk))
            free[freeCount] = c
            freeCount += 1
            if c == tail { break }
            c = storage[base + Self.chunkWords - 1]
        }
    }
}

/// A growable buffer of words that keeps its memory (the batch of a second).
struct WordBuffer {
    var words: UnsafeMutablePointer<UInt32>
    var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        words = .allocate(capacity: self.capacity)
    }

    @inline(__always)
    mutating func append(_ source: UnsafeMutablePointer<UInt32>, count n: Int) {
        if count + n > capacity {
            let bigger = UnsafeMutablePointer<UInt32>.allocate(capacity: 2 * (count + n))
            bigger.update(from: words, count: count)
            words.deallocate()
            words = bigger
            capacity = 2 * (count + n)
        }
        (words + count).update(from: source, count: n)
        count += n
    }
}

/// A two-level hierarchical timing wheel on whole seconds: 4096 one-second
/// slots, 4096 slots of 4096 s (entries of two words: time, payload), an
/// overflow list beyond (~194 days). The slots are chunk lists.
struct TimingWheel: EventQueue {
    var level0: ChunkLists
    var level1: ChunkLists
    var overflow: [UInt64] = []
    var now: UInt32 = 0
    var batch: WordBuffer

    init(capacityHint: Int) {
        level0 = ChunkLists(lists: 4096, chunks: capacityHint / Int(ChunkLists.itemsPerChunk))
        level1 = ChunkLists(lists: 4096, chunks: 2 * capacityHint / Int(ChunkLists.itemsPerChunk))
        batch = WordBuffer(capacity: 1024)
    }

    @inline(__always)
    mutating func push(_ time: UInt32, _ payload: UInt32) {
        let t = max(time, now)
        if t >> 12 == now >> 12 {
            level0.append(Int(t & 4095), payload)
        } else if t >> 24 == now >> 24 {
            let slot = Int((t >> 12) & 4095)
            level1.append(slot, t)
            level1.append(slot, payload)
        } else {
            overflow.append(UInt64(t) << 32 | UInt64(payload))
        }
    }

    mutating func run<H: QueueHandler>(until end: UInt32, _ handler: inout H) where H.Queue == TimingWheel {
        while now <= end {
            let slot = Int(now & 4095)
            // Take the second's events out (events pushed for this same second
            // during processing land in the slot again and are taken next round).
            while level0.heads[slot] != ChunkLists.none {
                batch.count = 0
                level0.take(slot, into: &batch)
                let events = batch.words
                let count = batch.count
                let d = prefetchDistance
                for k in 0..<min(2 * d, count) { handler.prefetchFar(events[k]) }
                for k in 0..<min(d, count) { handler.prefetchNear(events[k]) }
                for k in 0..<count {
                    if k + 2 * d < count { handler.prefetchFar(events[k + 2 * d]) }
                    if k + d < count { handler.prefetchNear(events[k + d]) }
                    handler.handle(now, events[k], &self)
                }
            }
            if now == UInt32.max { break }
            now += 1
            if now & 4095 == 0 {
                if now & 0xFF_FFFF == 0 {
                    let far = overflow
                    overflow.removeAll()
                    for e in far { push(UInt32(e >> 32), UInt32(truncatingIfNeeded: e)) }
                }
                batch.count = 0
                level1.take(Int((now >> 12) & 4095), into: &batch)
                let cascade = batch.words
                for k in stride(from: 0, to: batch.count, by: 2) { push(cascade[k], cascade[k + 1]) }
                batch.count = 0
            }
        }
    }
}

/// The baseline: a plain binary min-heap of (time << 32 | payload).
struct BinaryHeap: EventQueue {
    var heap: [UInt64] = []
    init(capacityHint: Int) { heap.reserveCapacity(capacityHint) }

    @inline(__always)
    mutating func push(_ time: UInt32, _ payload: UInt32) {
        var i = heap.count
        let value = UInt64(time) << 32 | UInt64(payload)
        heap.append(value)
        while i > 0 {
            let parent = (i - 1) / 2
            if heap[parent] <= value { break }
            heap[i] = heap[parent]
            i = parent
        }
        heap[i] = value
    }

    mutating func pop() -> UInt64 {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            var i = 0
            let n = heap.count
            while true {
                let l = 2 * i + 1
                if l >= n { break }
                let r = l + 1
                let c = r < n && heap[r] < heap[l] ? r : l
                if heap[c] >= last { break }
                heap[i] = heap[c]
                i = c
            }
            heap[i] = last
        }
        return top
    }

    mutating func run<H: QueueHandler>(until end: UInt32, _ handler: inout H) where H.Queue == BinaryHeap {
        while let top = heap.first, UInt32(top >> 32) <= end {
            _ = pop()
            handler.handle(UInt32(top >> 32), UInt32(truncatingIfNeeded: top), &self)
        }
    }
}

// MARK: The fast path

enum EventKind: UInt32 {
    case reload = 0
    case entry = 1
    case shown = 2
}

struct Stats {
    var events = 0
    var reloads = 0
    var counted = 0
    var deferredBudget = 0
    var deferredSpacing = 0
    var deferredHidden = 0
    var entryChanges = 0
    var checksum: UInt64 = 0
}

/// The per-instance state the hot path touches, in one 32-byte record (two
/// per cache line; the array is line-aligned) so that an event costs one
/// cache miss.
struct Hot {
    var due: UInt32 = never  // next reload event time
    var entryAt: UInt32 = never  // next entry change time
    var lastCounted: UInt32 = never  // newest ledger entry (spacing)
    var oldest: UInt32 = never  // oldest ledger entry (pruning without touching the ring)
    var visibleSince: UInt32 = 0
    var reloadCount: UInt16 = 0
    var step: UInt16 = 0  // entry spacing of the current timeline
    var jitter: UInt16 = 0
    var entryCount: UInt8 = 0
    var shownEntry: UInt8 = 0
    var flags: UInt8 = 0  // bit 0 visible, bit 1 came due while hidden
    var ledgerHead: UInt8 = 0
    var ledgerCount: UInt8 = 0
}

struct FastScheduler<Queue: EventQueue>: QueueHandler {
    let n: Int
    let config: SchedulerConfiguration
    let ledgerCapacity: Int
    let floor: UInt32
    let window: UInt32
    var queue: Queue
    /// Manually allocated (no copy-on-write, no bounds checks on the hot path);
    /// the benchmark never frees them.
    let hot: UnsafeMutablePointer<Hot>
    /// Viewing history (read only for counted reloads, so kept apart).
    let views: UnsafeMutablePointer<ViewHistory>
    /// Counted reload times, a ring buffer of `ledgerCapacity` per instance.
    let ledger: UnsafeMutablePointer<UInt32>
    var stats = Stats()
    /// Reload times per instance, for the cross-check (sample runs only).
    var trace: [[UInt32]]?

    init(instances n: Int, config: SchedulerConfiguration, trace: Bool) {
        self.n = n
        self.config = config
        // The largest allowance that can apply (learning only counts if there is a learning period).
        ledgerCapacity = max(
            config.frequentAllowance, config.occasionalAllowance, config.rareAllowance,
            config.learningPeriod > 0 ? config.learningAllowance : 0)
        floor = UInt32(config.minimumReloadInterval)
        window = UInt32(config.budgetWindow)
        var queue = Queue(capacityHint: 3 * n)
        self.queue = Queue(capacityHint: 0)
        // Cache-line aligned, so that a 32-byte record never straddles two lines.
        hot = UnsafeMutableRawPointer.allocate(byteCount: n * MemoryLayout<Hot>.stride, alignment: 64)
            .bindMemory(to: Hot.self, capacity: n)
        hot.initialize(repeating: Hot(), count: n)
        views = .allocate(capacity: n)
        views.initialize(repeating: ViewHistory(), count: n)
        ledger = .allocate(capacity: n * ledgerCapacity)
        ledger.initialize(repeating: 0, count: n * ledgerCapacity)
        self.trace = trace ? Array(repeating: [], count: n) : nil
        for i in 0..<n {
            hot[i].jitter = UInt16(StableJitter.offset(for: "w\(i)", maximum: config.maximumJitter).rounded(.up))
            if isInitiallyHidden(i) {
                queue.push(showTime(i), UInt32(i) << 2 | EventKind.shown.rawValue)
            } else {
                hot[i].flags = 1
            }
            // Instance added: its first timeline at once, free.
            reload(i, at: 0, counted: false, &queue)
        }
        self.queue = queue
    }

    /// Allowance from the viewing tier (the model's rule, `ReloadScheduler.tier`).
    @inline(__always)
    func allowance(_ i: Int, at t: UInt32) -> Int {
        let time = epoch + Double(t)
        if time - epoch < config.learningPeriod { return config.learningAllowance }
        var v = views[i]
        if hot[i].flags & 1 != 0 { v.markVisible(from: epoch + Double(hot[i].visibleSince), to: time) }
        let hours = v.visibleHours(at: time)
        if hours >= config.frequentVisibleHours { return config.frequentAllowance }
        if hours >= config.occasionalVisibleHours { return config.occasionalAllowance }
        return config.rareAllowance
    }

    /// Forgets counted reloads that no window ending at or after `t` can contain.
    @inline(__always)
    mutating func prune(_ i: Int, at t: UInt32) {
        if hot[i].ledgerCount == 0 || Int64(hot[i].oldest) > Int64(t) - Int64(window) { return }
        let base = i * ledgerCapacity
        var head = Int(hot[i].ledgerHead)
        var count = Int(hot[i].ledgerCount)
        while count > 0 && Int64(ledger[base + head]) <= Int64(t) - Int64(window) {
            head = head + 1 == ledgerCapacity ? 0 : head + 1
            count -= 1
        }
        hot[i].ledgerHead = UInt8(head)
        hot[i].ledgerCount = UInt8(count)
        hot[i].oldest = count > 0 ? ledger[base + head] : never
    }

    /// `RollingLedger.nextAllowed` on the ring buffer (whole seconds).
    @inline(__always)
    func peekAllowed(_ i: Int, from t: UInt32, limit: Int) -> Double {
        let base = i * ledgerCapacity
        let head = Int(hot[i].ledgerHead)
        var count = Int(hot[i].ledgerCount)
        var first = 0
        while first < count {
            var k = head + first
            if k >= ledgerCapacity { k -= ledgerCapacity }
            if Int64(ledger[base + k]) > Int64(t) - Int64(window) { break }
            first += 1
        }
        count -= first
        if count < limit { return Double(t) }
        var k = head + first + (count - limit)
        if k >= ledgerCapacity { k -= ledgerCapacity }
        return Double(max(t, ledger[base + k] + window))
    }

    /// The model's `SchedulerConfiguration.budgetReturn` over this ledger.
    @inline(__always)
    mutating func budgetReturn(_ i: Int, from: UInt32, now: UInt32) -> UInt32 {
        prune(i, at: now)
        // Fast answer when there is room (the common case).
        if Int(hot[i].ledgerCount) < config.rareAllowance && from == now { return from }
        let result = config.budgetReturn(
            from: Double(from), learningEnds: -Double.infinity,
            allowance: { allowance(i, at: UInt32(max($0, Double(now)))) },
            nextAllowed: { peekAllowed(i, from: UInt32($0), limit: $1) })
        return UInt32(result)
    }

    @inline(__always)
    mutating func record(_ i: Int, _ t: UInt32) {
        var k = Int(hot[i].ledgerHead) + Int(hot[i].ledgerCount)
        if k >= ledgerCapacity { k -= ledgerCapacity }
        ledger[i * ledgerCapacity + k] = t
        if hot[i].ledgerCount == 0 { hot[i].oldest = t }
        hot[i].ledgerCount += 1
        hot[i].lastCounted = t
    }

    @inline(__always)
    func lastCounted(_ i: Int) -> UInt32? {
        hot[i].ledgerCount > 0 ? hot[i].lastCounted : nil
    }

    /// Issues a reload of `i` at `t` and stores the provider's new timeline.
    @inline(__always)
    mutating func reload(_ i: Int, at t: UInt32, counted: Bool, _ queue: inout Queue) {
        stats.reloads += 1
        stats.checksum &+= mix(UInt64(t) << 32 | UInt64(i))
        if trace != nil { trace![i].append(t) }
        if counted {
            record(i, t)
            stats.counted += 1
        }
        let tl = fakeTimeline(instance: i, reload: UInt32(hot[i].reloadCount))
        hot[i].reloadCount &+= 1
        hot[i].step = UInt16(tl.step)
        hot[i].entryCount = UInt8(tl.count)
        hot[i].shownEntry = 0
        if tl.count > 1 && tl.step > 0 {
            hot[i].entryAt = t + tl.step
            queue.push(t + tl.step, UInt32(i) << 2 | EventKind.entry.rawValue)
        } else {
            hot[i].entryAt = never
        }
        // The model's `policyDue`: atEnd -> last entry; after -> date + jitter; floor 5 min.
        let lowest = t + floor
        var next: UInt32
        switch tl.policy {
        case 0: next = max(t + tl.step * (tl.count - 1), lowest)
        case 1:
            let date = Int64(t) + tl.afterDelta + Int64(hot[i].jitter)
            next = date < Int64(lowest) ? lowest : UInt32(date)
        default: next = never
        }
        hot[i].due = next
        if next != never { queue.push(next, UInt32(i) << 2 | EventKind.reload.rawValue) }
    }

    @inline(__always)
    mutating func prefetchFar(_ payload: UInt32) {
        wh_prefetch(hot + Int(payload >> 2))
    }

    @inline(__always)
    mutating func prefetchNear(_ payload: UInt32) {
        guard payload & 3 == EventKind.reload.rawValue else { return }
        let i = Int(payload >> 2)
        wh_prefetch(views + i)
        let count = Int(hot[i].ledgerCount)
        guard count > 0 else { return }
        // The ring's oldest entry (pruning) and the entries `peekAllowed` reads
        // for each allowance.
        let base = ledger + i * ledgerCapacity
        let head = Int(hot[i].ledgerHead)
        wh_prefetch(base + head)
        prefetchLedger(base, head: head, count: count, limit: config.rareAllowance)
        prefetchLedger(base, head: head, count: count, limit: config.occasionalAllowance)
        prefetchLedger(base, head: head, count: count, limit: config.frequentAllowance)
    }

    @inline(__always)
    func prefetchLedger(_ base: UnsafeMutablePointer<UInt32>, head: Int, count: Int, limit: Int) {
        guard limit <= count else { return }
        var k = head + count - limit
        if k >= ledgerCapacity { k -= ledgerCapacity }
        wh_prefetch(base + k)
    }

    @inline(__always)
    mutating func handle(_ t: UInt32, _ payload: UInt32, _ queue: inout Queue) {
        let i = Int(payload >> 2)
        switch payload & 3 {
        case EventKind.entry.rawValue:
            guard hot[i].entryAt == t else { return }
            stats.events += 1
            stats.entryChanges += 1
            let shown = hot[i].shownEntry + 1
            hot[i].shownEntry = shown
            if UInt32(shown) + 1 < UInt32(hot[i].entryCount) {
                let next = t + UInt32(hot[i].step)
                hot[i].entryAt = next
                queue.push(next, payload)
            } else {
                hot[i].entryAt = never
            }
        case EventKind.reload.rawValue:
            guard hot[i].due == t else { return }
            stats.events += 1
            if hot[i].flags & 1 == 0 {
                // Due while hidden: wait until shown.
                hot[i].flags |= 2
                hot[i].due = never
                stats.deferredHidden += 1
                return
            }
            var at = t
            var cause = 0
            if let last = lastCounted(i), last + floor > at {
                at = last + floor
                cause = 1
            }
            let back = budgetReturn(i, from: at, now: t)
            if back > at {
                at = back
                cause = 2
            }
            if at > t {
                if cause == 1 { stats.deferredSpacing += 1 } else { stats.deferredBudget += 1 }
                hot[i].due = at
                queue.push(at, payload)
                return
            }
            reload(i, at: t, counted: true, &queue)
        default:
            stats.events += 1
            hot[i].flags |= 1
            hot[i].visibleSince = t
            if hot[i].flags & 2 != 0 {
                hot[i].flags &= ~2
                hot[i].due = t
                queue.push(t, UInt32(i) << 2 | EventKind.reload.rawValue)
            }
        }
    }

    mutating func run(until end: UInt32) {
        var q = queue
        queue = Queue(capacityHint: 0)
        q.run(until: end, &self)
        queue = q
    }

    /// Bytes of per-instance storage, from the arrays' capacities.
    var storageBytes: Int {
        n * (MemoryLayout<Hot>.stride + MemoryLayout<ViewHistory>.stride + ledgerCapacity * MemoryLayout<UInt32>.stride)
    }
}

// MARK: Cross-check against the model

func benchConfig(jitter: Double) -> SchedulerConfiguration {
    var c = SchedulerConfiguration()
    c.learningPeriod = 0  // instances past their learning days: tiers by viewing
    c.maximumJitter = jitter
    c.coalescingCap = 0  // the wheel batches per second; the model's slack is off for the check
    return c
}

func crossCheck(instances n: Int) -> Bool {
    let config = benchConfig(jitter: 0)
    var fast = FastScheduler<TimingWheel>(instances: n, config: config, trace: true)
    fast.run(until: daySeconds)
    var model = ReloadScheduler(configuration: config)
    var shows: [(Double, String)] = []
    for i in 0..<n {
        let hidden = isInitiallyHidden(i)
        model.add(WidgetInstance(id: "w\(i)", plugin: "bench", kind: "k", app: "app", isVisible: !hidden), at: epoch)
        if hidden { shows.append((epoch + Double(showTime(i)), "w\(i)")) }
    }
    shows.sort { $0.0 < $1.0 }
    var modelTrace: [[UInt32]] = Array(repeating: [], count: n)
    var counts: [Int] = Array(repeating: 0, count: n)
    var next = 0
    let end = epoch + Double(daySeconds)
    while true {
        let wake = model.nextWakeup() ?? .infinity
        if next < shows.count && shows[next].0 <= wake && shows[next].0 <= end {
            model.handle(.instanceShown(shows[next].1), at: shows[next].0)
            next += 1
            continue
        }
        guard wake <= end else { break }
        for batch in model.dueReloads(at: wake) {
            for d in batch.decisions {
                let i = Int(d.instanceID.dropFirst())!
                modelTrace[i].append(UInt32(d.time - epoch))
                let tl = fakeTimeline(instance: i, reload: UInt32(counts[i]))
                counts[i] += 1
                let entries = (0..<Int(tl.count)).map {
                    EntryRecord(date: d.time + Double(tl.step) * Double($0), contentJSON: "{}")
                }
                let policy: ReloadPolicy =
                    switch tl.policy {
                    case 0: .atEnd
                    case 1: .after(d.time + Double(tl.afterDelta))
                    default: .never
                    }
                model.complete(d.instanceID, with: .success(TimelineRecord(entries: entries, policy: policy)), at: wake)
            }
        }
    }
    let fastTrace = fast.trace!
    var mismatches = 0
    for i in 0..<n where fastTrace[i] != modelTrace[i] {
        if mismatches < 3 {
            print("  mismatch w\(i): fast \(fastTrace[i].prefix(12)) model \(modelTrace[i].prefix(12))")
        }
        mismatches += 1
    }
    let total = modelTrace.reduce(0) { $0 + $1.count }
    print("cross-check: \(n) instances, \(total) reloads, \(mismatches) mismatching instances vs ReloadScheduler")
    return mismatches == 0
}

// MARK: Main

func seconds(_ body: () -> Void) -> Double {
    let elapsed = ContinuousClock().measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

/// Resident set size in bytes, from /proc/self/statm (0 where unavailable).
func residentBytes() -> Int {
    #if canImport(Glibc)
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 127) }
        guard got > 0 else { return 0 }
        let fields = String(decoding: buffer[0..<got], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return 0
    #endif
}

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
guard crossCheck(instances: 400) else {
    print("FAILED: the fast path disagrees with the model")
    exit(1)
}

let config = benchConfig(jitter: SchedulerConfiguration().maximumJitter)
let heapBefore = residentBytes()
var wheel = FastScheduler<TimingWheel>(instances: count, config: config, trace: false)
let heapAfterSetup = residentBytes()
let wheelTime = seconds { wheel.run(until: daySeconds) }
let heapPeak = residentBytes()
let w = wheel.stats
let storage = wheel.storageBytes

var heap = FastScheduler<BinaryHeap>(instances: count, config: config, trace: false)
let heapTime = seconds { heap.run(until: daySeconds) }
let h = heap.stats

let wheelRate = Double(w.events) / wheelTime
let heapRate = Double(h.events) / heapTime
func fmt(_ x: Double, _ digits: Int = 2) -> String {
    let p = pow(10.0, Double(digits))
    return "\((x * p).rounded() / p)"
}
print("instances:            \(count) over one virtual day")
print("events:               \(w.events) (entry changes \(w.entryChanges), reloads \(w.reloads), counted \(w.counted))")
print("deferred:             budget \(w.deferredBudget), spacing \(w.deferredSpacing), hidden \(w.deferredHidden)")
print("timing wheel:         \(fmt(wheelTime, 3)) s, \(fmt(wheelRate / 1e6)) M events/s")
print("binary heap baseline: \(fmt(heapTime, 3)) s, \(fmt(heapRate / 1e6)) M events/s")
print("ratio wheel/heap:     \(fmt(wheelRate / heapRate))x")
print(
    "same event stream:    \(w.events == h.events && w.checksum == h.checksum ? "yes" : "NO") (checksum \(w.checksum))")
print(
    "per-instance state:   \(storage / count) bytes (allocated sizes: hot record \(MemoryLayout<Hot>.stride) B + view history \(MemoryLayout<ViewHistory>.stride) B + ledger ring \(wheel.ledgerCapacity * 4) B)"
)
print(
    "RSS growth:           setup \((heapAfterSetup - heapBefore) / count) bytes/instance, after the run \((heapPeak - heapBefore) / count) bytes/instance (includes queued events)"
)
