import Foundation
import WidgetHostModel
import WidgetHostScheduler

/// `simulate --fleet N`: the load a server behind the widgets would see if
/// N devices ran the scenario, each with its own clock and its own jitter.
///
/// The model: every reload of the simulated run is one request to the
/// server, on every device. Device `d` sees each reload at the simulated time
/// plus its clock offset (seeded, uniform in ±`clockSpread`); a policy reload
/// under `after(date)` comes at the date plus the device's own stable jitter
/// (``StableJitter`` of "device-d/instance") instead of the simulated
/// instance's. Without jitter, those reloads come at the date itself. Other
/// reloads (explicit requests, retries) happen at the same moment on every
/// device, give or take the clock. First timelines are left out: devices do
/// not all place the widget at the same moment. Requests are counted per minute of
/// the run.
struct FleetReport: Encodable {
    /// Requests per minute over the run, from the start.
    struct Curve: Encodable {
        var perMinute: [Int]
        var peak: Int
        var peakMinute: String
        var mean: Double
        /// The most requests in one second (a herd within a minute shows here).
        var peakPerSecond: Int
    }

    var devices: Int
    var clockSpreadSeconds: Double
    var maximumJitterSeconds: Double
    var withJitter: Curve
    var withoutJitter: Curve

    /// Counts the requests of `devices` devices reload by reload, as the run
    /// goes (the run keeps no list of reloads).
    final class Accumulator {
        let devices: Int
        let clockSpread: Double
        private let start: Double
        private let minutes: Int
        private let jitter: Double
        private let clocks: [Double]
        private var jittered: [Int]
        private var plain: [Int]
        private var jitteredSeconds: [Int: Int] = [:]
        private var plainSeconds: [Int: Int] = [:]

        init(_ scenario: Scenario, end: Double, devices: Int, clockSpread: Double = 2, seed: UInt64 = 1) {
            self.devices = devices
            self.clockSpread = clockSpread
            start = scenario.start
            minutes = max(1, Int(((end - scenario.start) / 60).rounded(.up)))
            jitter = scenario.configuration.maximumJitter
            var random = SplitMix64(seed: seed)
            clocks = (0..<devices).map { _ in (random.unit() * 2 - 1) * clockSpread }
            jittered = [Int](repeating: 0, count: minutes)
            plain = [Int](repeating: 0, count: minutes)
        }

        private func count(_ time: Double, into curve: inout [Int], seconds: inout [Int: Int]) {
            let second = Int(((time - start)).rounded(.down))
            guard second >= 0 && second < minutes * 60 else { return }
            curve[second / 60] += 1
            seconds[second, default: 0] += 1
        }

        /// One reload of the run: a request on every device.
        func add(_ reload: ScenarioSimulator.Reload) {
            let d = reload.decision
            guard d.trigger != .added else { return }
            // A policy reload of an instance with jitter: its date is the
            // simulated time less the instance's own offset.
            let own = StableJitter.offset(for: d.instanceID, maximum: jitter)
            // Planned at its jittered date (batched with others at most the
            // coalescing slack later): the date is the plan less the offset.
            let planned = d.deferral?.cause == .coalescing ? d.deferral?.from ?? d.time : d.time
            let isJittered =
                d.trigger == .policy && jitter > 0 && (d.deferral == nil || d.deferral?.cause == .coalescing)
            let date = isJittered ? planned - own : d.time
            for device in 0..<devices {
                let clock = clocks[device]
                let mine =
                    isJittered ? StableJitter.offset(for: "device-\(device)/\(d.instanceID)", maximum: jitter) : 0
                count(date + mine + clock, into: &jittered, seconds: &jitteredSeconds)
                count(date + clock, into: &plain, seconds: &plainSeconds)
            }
        }

        /// The report of every reload added.
        func report() -> FleetReport {
            func curve(_ values: [Int], _ seconds: [Int: Int]) -> Curve {
                let peak = values.max() ?? 0
                let at = values.firstIndex(of: peak) ?? 0
                let mean = Double(values.reduce(0, +)) / Double(values.count)
                return Curve(
                    perMinute: values, peak: peak, peakMinute: Timestamp.iso8601(start + Double(at) * 60), mean: mean,
                    peakPerSecond: seconds.values.max() ?? 0)
            }
            return FleetReport(
                devices: devices, clockSpreadSeconds: clockSpread, maximumJitterSeconds: jitter,
                withJitter: curve(jittered, jitteredSeconds), withoutJitter: curve(plain, plainSeconds))
        }
    }

    /// The text summary.
    var text: String {
        func line(_ name: String, _ c: Curve) -> String {
            let ratio = c.mean > 0 ? Double(c.peak) / c.mean : 0
            return
                "  \(name): peak \(c.peak) requests/min at \(c.peakMinute) (\(c.peakPerSecond) in its busiest second), mean \(String(format: "%.1f", c.mean))/min, peak/mean \(String(format: "%.1f", ratio))"
        }
        return [
            "Fleet: \(devices) devices, clocks within ±\(Timestamp.duration(clockSpreadSeconds)), jitter up to \(Timestamp.duration(maximumJitterSeconds))",
            line("with jitter", withJitter),
            line("without jitter", withoutJitter),
        ].joined(separator: "\n")
    }
}
