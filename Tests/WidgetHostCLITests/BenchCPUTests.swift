import Testing
import WidgetHostIsolation

@testable import WidgetHostCLI

/// The CPU time per call and the CPU-bound note of `widgethost bench`, from
/// made-up measurements (the real ones are machine-dependent).
@Suite("Bench CPU accounting")
struct BenchCPUTests {
    /// A fork-server mode of `calls` calls, `busy` seconds of calls, and per
    /// call `host` + `server` + `child` µs of CPU.
    func forkServer(calls: Int, busy: Double, host: Double, server: Double, child: Double) -> ModeResult {
        var result = ModeResult(mode: .forkServer)
        result.calls = calls
        result.busyNanoseconds = UInt64(busy * 1e9)
        result.cpu.calls = calls
        result.cpu.hostSeconds = host / 1e6 * Double(calls)
        result.cpu.forkServer = CPUUsage(
            serverSeconds: server / 1e6 * Double(calls), childrenSeconds: child / 1e6 * Double(calls - 1),
            childrenReaped: calls - 1)
        return result
    }

    @Test func perCallFiguresAddUpAndBoundTheRate() throws {
        let result = forkServer(calls: 1000, busy: 0.4, host: 60, server: 300, child: 400)
        let cpu = try #require(result.cpu.perCall)
        #expect(abs(cpu.host - 60) < 0.01)
        #expect(abs((cpu.forkServer ?? 0) - 300) < 0.01)
        #expect(abs((cpu.callChild ?? 0) - 400) < 0.01)  // per reaped child
        #expect(abs(cpu.total - 760) < 0.01)
        #expect(cpu.runner == nil)
        #expect(abs((cpu.callsPerSecondBound ?? 0) - Double(cpu.processors) * 1e6 / 760) < 0.01)
        #expect(cpu.summary.hasPrefix("host 60.0 µs, fork server 300 µs, call child 400 µs: 760 µs in all; "))
    }

    @Test func theNoteSaysWhenBackToBackCallsKeptTheCPUsBusy() throws {
        // 1000 calls of 760 µs of CPU in 0.4 s: 1.9 CPU-seconds per second,
        // more than 80 % of this machine's CPUs if it has at most 2.
        let busy = BenchResults(
            modes: [forkServer(calls: 1000, busy: 0.4, host: 60, server: 300, child: 400)], schedule: nil)
        let cpus = try #require(busy.modes[0].cpu.perCall).processors
        let note = BenchReport.cpuBoundNote(busy, concurrency: 1)
        if 0.76 / (0.4 * Double(cpus)) >= 0.8 {
            #expect(
                note?.hasPrefix("note: back to back, the calls kept the \(cpus) CPU") == true,
                "\(String(describing: note))")
        } else {
            #expect(note == nil)
        }
        // The same calls spread over 4 s: the CPUs were mostly idle.
        let idle = BenchResults(
            modes: [forkServer(calls: 1000, busy: 4, host: 60, server: 300, child: 400)], schedule: nil)
        #expect(BenchReport.cpuBoundNote(idle, concurrency: 1) == nil)
        // 4 s of calls over 10 workers is 0.4 s of wall time: as busy as the first.
        #expect(BenchReport.cpuBoundNote(idle, concurrency: 10) == note)
        // An open loop never gets the note.
        let open = BenchResults(
            modes: busy.modes, schedule: ScheduleResult(offeredPerSecond: 1000, firstDue: 0))
        #expect(BenchReport.cpuBoundNote(open, concurrency: 1) == nil)
    }
}
