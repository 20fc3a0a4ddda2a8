import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The view history's marking, which sets a run of hours at once, against
/// its definition hour by hour.
@Suite("View history")
struct ViewHistoryTests {
    /// Marks hour by hour, as the history did before it set runs of bits.
    struct Model {
        var hour: Int64 = .min
        var mask: UInt32 = 0

        mutating func markVisible(from: Double, to: Double) {
            let first = ViewHistory.hourIndex(from)
            let last = ViewHistory.hourIndex(max(from, to))
            if hour == .min || last > hour {
                let shift = hour == .min ? 64 : last - hour
                mask = shift >= 32 ? 0 : mask << UInt32(shift)
                hour = last
            }
            var h = max(first, last - 23)
            while h <= last {
                let bit = hour - h
                if bit >= 0 && bit < 32 { mask |= 1 << UInt32(bit) }
                h += 1
            }
        }
    }

    @Test func marksTheSameHoursAsHourByHour() {
        var random = SplitMix64(seed: 41)
        for _ in 0..<200 {
            var history = ViewHistory()
            var model = Model()
            var now = Double(random.next() % 1_000_000)
            for _ in 0..<50 {
                // Spans from under an hour to two days, some before the
                // newest hour marked (a late report), some far ahead.
                let start = now + Double(Int64(random.next() % 400_000) - 200_000)
                let length = Double(random.next() % 180_000)
                history.markVisible(from: start, to: start + length)
                model.markVisible(from: start, to: start + length)
                #expect(history.hour == model.hour)
                #expect(history.mask == model.mask, "from \(start), length \(length)")
                let at = start + Double(random.next() % 100_000)
                #expect(
                    history.visibleHours(at: at)
                        == (ViewHistory(hour: model.hour, mask: model.mask)).visibleHours(at: at))
                now += Double(random.next() % 20_000)
            }
        }
    }

    @Test func marksOneHourAndADayExactly() {
        var history = ViewHistory()
        history.markVisible(from: 7_200, to: 7_200)
        #expect(history.mask == 1)
        #expect(history.visibleHours(at: 7_200) == 1)
        history.markVisible(from: 0, to: 3_600 * 40)
        #expect(history.mask == 0x00FF_FFFF)
        #expect(history.visibleHours(at: 3_600 * 40) == 24)
    }

    @Test func hourIndexIsTheHourRoundedDown() {
        var random = SplitMix64(seed: 7)
        var times: [Double] = [
            0, -0.0, 3_600, -3_600, 3_599.999, -0.5, 1_800_000_000, -1_800_000_000.25, 1e15, -1e15,
            .ulpOfOne, -.leastNonzeroMagnitude,
        ]
        for _ in 0..<10_000 {
            let scale = [1.0, 3_600, 1e6, 1e9, 1e12][Int(random.next() % 5)]
            times.append((Double(random.next() % 2_000_001) - 1_000_000) / 1_000 * scale)
        }
        for time in times {
            #expect(ViewHistory.hourIndex(time) == Int64((time / 3_600).rounded(.down)), "\(time)")
        }
        // Not finite: 0; past ±2^52 hours: clamped, not a trap.
        #expect(ViewHistory.hourIndex(.nan) == 0)
        #expect(ViewHistory.hourIndex(-.infinity) == 0)
        #expect(ViewHistory.hourIndex(1e300) == 1 << 52)
        #expect(ViewHistory.hourIndex(-.greatestFiniteMagnitude) == -(1 << 52))
    }
}
