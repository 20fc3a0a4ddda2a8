// The ceiling of a sharded engine, shared with Benchmarks/Profile.
import Dispatch
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#endif

/// Shards of the shipped scheduler, each a whole `ReloadScheduler` of its
/// own instances driven by its own ``Driver`` on a thread of Dispatch's
/// pool (as many at once as there are cores): what an engine that
/// partitions its instances among the machine's cores would reach if the
/// shards shared nothing. Here they wake independently, each at its own
/// batch times, with no host-wide free-reload cap and no merged order,
/// group or serial numbers of a wakeup's tickets. A ceiling measured with
/// the code that ships, as ``FloorScheduler`` is the API's, not a
/// scheduler: the shipped `ReloadScheduler` is one shard.
///
/// `instances` are dealt out as evenly as they go (shard *s* holds
/// `instances / shards`, one more for the first `instances % shards`),
/// named `w0`, `w1`... across the shards so that their jitters and
/// intervals are those of one driver of `instances`.
final class ShardedDrivers: @unchecked Sendable {
    // @unchecked: each driver is touched by one thread at a time (its own
    // during `run`, the caller's otherwise), and `run` returns after every
    // thread is done.
    private var drivers: [Driver<ReloadScheduler>] = []

    init(instances: Int, shards: Int) {
        precondition(
            shards >= 1 && instances >= shards,
            "ShardedDrivers needs at least one shard and an instance in each"
                + " (found \(shards) shards, \(instances) instances)")
        var first = 0
        for shard in 0..<shards {
            let count = instances / shards + (shard < instances % shards ? 1 : 0)
            drivers.append(Driver(ReloadScheduler(), instances: count, first: first))
            first += count
        }
    }

    /// Each shard's warm-up, one after another.
    func warmUp(seconds: Double) {
        for i in drivers.indices { drivers[i].warmUp(seconds: seconds) }
    }

    /// `count` events, dealt out as the instances are, each shard's share
    /// run on a thread of Dispatch's pool (`concurrentPerform`); returns
    /// when every shard is done.
    func run(_ count: Int) {
        let k = drivers.count
        if k == 1 {
            drivers[0].run(count)
            return
        }
        drivers.withUnsafeMutableBufferPointer { buffer in
            let base = UncheckedSendable(buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: k) { shard in
                base.value[shard].run(count / k + (shard < count % k ? 1 : 0))
            }
        }
    }
}

/// A pointer handed to the threads of `concurrentPerform`, each of which
/// touches only its own element.
private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
