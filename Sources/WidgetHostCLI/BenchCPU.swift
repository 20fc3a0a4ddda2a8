import Foundation
import WidgetHostIsolation

/// The CPU time one mode's calls cost, by process: the host thread that
/// makes the call, and the isolated side (a spawned runner; a fork server
/// and its call children). Latency says how long a call takes; this says
/// what it costs the machine, and so how many calls per second the machine
/// can do at all: back to back, calls can go no faster than the CPUs
/// divided by the CPU time a call costs.
struct BenchCPU {
    /// Calls measured.
    var calls = 0
    /// The calling threads' CPU time over those calls.
    var hostSeconds = 0.0
    /// Spawned runners (spawn mode): their CPU time, from `wait4`.
    var runnerSeconds = 0.0
    var runners = 0
    /// The fork server and its call children over the run (fork-server mode).
    var forkServer = CPUUsage()
    /// Warm workers over the run (worker mode): their CPU time, and the calls they served.
    var workerSeconds = 0.0
    var workerCalls = 0

    mutating func add(_ other: BenchCPU) {
        calls += other.calls
        hostSeconds += other.hostSeconds
        runnerSeconds += other.runnerSeconds
        runners += other.runners
        forkServer.serverSeconds += other.forkServer.serverSeconds
        forkServer.childrenSeconds += other.forkServer.childrenSeconds
        forkServer.childrenReaped += other.forkServer.childrenReaped
        workerSeconds += other.workerSeconds
        workerCalls += other.workerCalls
    }

    /// Records one call's host CPU time and, for a spawned runner, its CPU time.
    mutating func record(hostSeconds: Double, _ output: CallOutput) {
        calls += 1
        self.hostSeconds += max(0, hostSeconds)
        if let runner = output.timing.childCPUSeconds {
            runnerSeconds += runner
            runners += 1
        }
    }

    /// Per call, in µs; nil before any call.
    var perCall: PerCall? {
        guard calls > 0 else { return nil }
        let host = hostSeconds / Double(calls) * 1e6
        let runner = runners > 0 ? runnerSeconds / Double(runners) * 1e6 : nil
        let server = forkServer.childrenReaped > 0 ? forkServer.serverSeconds / Double(calls) * 1e6 : nil
        let child =
            forkServer.childrenReaped > 0
            ? forkServer.childrenSeconds / Double(forkServer.childrenReaped) * 1e6 : nil
        let worker = workerCalls > 0 ? workerSeconds / Double(workerCalls) * 1e6 : nil
        let total = host + (runner ?? 0) + (server ?? 0) + (child ?? 0) + (worker ?? 0)
        let processors = Double(ProcessInfo.processInfo.activeProcessorCount)
        return PerCall(
            host: host, runner: runner, forkServer: server, callChild: child, worker: worker, total: total,
            processors: Int(processors), callsPerSecondBound: total > 0 ? processors * 1e6 / total : nil)
    }

    /// CPU time per call, µs (`--json`: `cpuMicrosecondsPerCall`).
    struct PerCall: Encodable {
        /// The host thread that made the call.
        var host: Double
        /// A spawned runner, from exec to exit (spawn mode).
        var runner: Double?
        /// The fork server's own work per call: the fork of a call child, reaping it.
        var forkServer: Double?
        /// One call child from its fork to the end of its teardown (fork-server mode).
        var callChild: Double?
        /// The warm worker's share per call (worker mode): its CPU time over the calls it served.
        var worker: Double?
        /// All of the above.
        var total: Double
        /// The CPUs this process may run on.
        var processors: Int
        /// processors ÷ total: what back-to-back calls can reach at most.
        var callsPerSecondBound: Double?

        /// "host 45 µs, fork server 270 µs, call child 380 µs: 695 µs in all; 2 CPUs do at most 2878 such calls/s".
        var summary: String {
            var parts = ["host \(BenchReport.format(host)) µs"]
            if let runner { parts.append("runner \(BenchReport.format(runner)) µs") }
            if let forkServer { parts.append("fork server \(BenchReport.format(forkServer)) µs") }
            if let callChild { parts.append("call child \(BenchReport.format(callChild)) µs") }
            if let worker { parts.append("worker \(BenchReport.format(worker)) µs") }
            var text = parts.joined(separator: ", ") + ": \(BenchReport.format(total)) µs in all"
            if let bound = callsPerSecondBound {
                text += "; \(processors) CPU\(processors == 1 ? "" : "s") do at most \(Int(bound)) such calls/s"
            }
            return text
        }
    }
}
