import Testing
import WidgetHostKit
import WidgetHostTestSupport

// The first-party plugins' provider files are compiled into this test target
// through the symlinks in FirstPartyPlugins/ (their Export.swift files are
// not: each defines `widgethost_provider_entry`, which would clash here).

private let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z, a Wednesday

private func context(
    _ json: String = "{}", preview: Bool = false, at date: Date = now, directory: String = "/nonexistent"
)
    throws -> TimelineProviderContext
{
    TimelineProviderContext(
        isPreview: preview, date: date, configuration: try InstanceConfiguration(json: json),
        dataDirectory: URL(fileURLWithPath: directory, isDirectory: true))
}

private func utc(_ text: String) throws -> Date { try Date(text, strategy: .iso8601) }

@Suite struct CharacterPluginTests {
    @Test func recoversHourlyUntilFullThenAtEnd() async throws {
        let timeline = try await CharacterHealthProvider().timeline(in: context(#"{"health": 0.25}"#))
        #expect(timeline.entries.map(\.healthLevel) == [0.25, 0.5, 0.75, 1.0])
        #expect(timeline.entries.map { $0.date.timeIntervalSince(now) } == [0, 3600, 7200, 10800])
        #expect(timeline.policy == .atEnd)
    }

    @Test func fullHealthIsOneEntryAndNever() async throws {
        let timeline = try await CharacterHealthProvider().timeline(in: context(#"{"health": 1}"#))
        #expect(timeline.entries.map(\.healthLevel) == [1.0])
        #expect(timeline.policy == .never)
    }

    @Test func previewWithoutDataShowsSample() async throws {
        let sample = try await CharacterHealthProvider().snapshot(in: context(preview: true))
        #expect(sample.healthLevel == 0.75 && sample.isSample)
        let real = try await CharacterHealthProvider().snapshot(in: context(#"{"health": 0.5}"#, preview: true))
        #expect(real.healthLevel == 0.5 && !real.isSample)
    }

    @Test func badHealthIsAnError() async throws {
        await #expect(throws: TimelineProviderError.self) {
            try await CharacterHealthProvider().timeline(in: context(#"{"health": "lots"}"#))
        }
    }

    @Test func leaderboardReadsItsDataDirectory() async throws {
        let directory = ScratchDirectory.path("kit-tests-\(UUID().uuidString)-leaderboard")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let builtIn = try await HeroLeaderboardProvider().timeline(in: context(directory: directory))
        #expect(builtIn.entries[0].source.contains("built-in"))
        try Data(#"[{"name": "A", "score": 1}, {"name": "B", "score": 5}]"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/leaderboard.json"))
        let read = try await HeroLeaderboardProvider().timeline(in: context(directory: directory))
        #expect(read.entries[0].heroes.map(\.name) == ["B", "A"])
        #expect(read.policy == .atEnd)
        try Data("{".utf8).write(to: URL(fileURLWithPath: directory + "/leaderboard.json"))
        await #expect(throws: TimelineProviderError.self) {
            try await HeroLeaderboardProvider().timeline(in: context(directory: directory))
        }
    }
}

@Suite struct CountdownPluginTests {
    @Test func windowOfEntriesFiveMinutesApartThenAfter() throws {
        let target = try utc("2027-01-01T00:00:00Z")
        let timeline = CountdownProvider.timeline(title: "New Year", target: target, now: now)
        #expect(timeline.entries.count == 73)  // 6 h / 5 min + 1
        #expect(timeline.entries.count <= 400)
        let gaps = zip(timeline.entries.dropFirst(), timeline.entries).map { $0.date.timeIntervalSince($1.date) }
        #expect(gaps.allSatisfy { $0 >= 300 })
        #expect(timeline.policy == .after(now.addingTimeInterval(6 * 3600)))
        #expect(timeline.entries[0].remainingSeconds == Int(target.timeIntervalSince(now)))
    }

    @Test func targetInsideTheWindowEndsWithDoneAndNever() {
        let target = now.addingTimeInterval(3600 + 60)
        let timeline = CountdownProvider.timeline(title: "Launch", target: target, now: now)
        #expect(timeline.entries.last?.date == target)
        #expect(timeline.entries.last?.status == "done")
        #expect(timeline.entries.count == 14)  // 0, 5, ..., 60 min, then the target
        #expect(timeline.policy == .never)
        #expect(timeline.entries.last?.relevance?.score == 90)
    }

    @Test func defaultsToNextNewYearAndRejectsBadTargets() async throws {
        let timeline = try await CountdownProvider().timeline(in: context(#"{"target": "", "title": ""}"#))
        #expect(timeline.entries[0].target == (try utc("2027-01-01T00:00:00Z")))
        #expect(timeline.entries[0].title == "New Year")
        await #expect(throws: TimelineProviderError.self) {
            try await CountdownProvider().timeline(in: context(#"{"target": "tomorrow"}"#))
        }
    }
}

@Suite struct MarketHoursPluginTests {
    let market = Market.builtIn(directory: "/data")

    @Test func fridayAfterCloseWaitsForMonday() throws {
        let friday = try utc("2026-11-20T22:00:00Z")  // 17:00 in New York (UTC-5)
        let timeline = try MarketHoursProvider.timeline(market: market, now: friday)
        let monday = try utc("2026-11-23T14:30:00Z")
        #expect(timeline.policy == .after(monday))
        #expect(timeline.entries.map(\.status) == ["closed", "open"])
        #expect(timeline.entries[0].reason == "after hours")
        #expect(timeline.entries.map(\.date) == [friday, monday])
    }

    @Test func saturdayIsWeekend() throws {
        let timeline = try MarketHoursProvider.timeline(market: market, now: try utc("2026-11-21T17:00:00Z"))
        #expect(timeline.entries[0].reason == "weekend")
        #expect(timeline.policy == .after(try utc("2026-11-23T14:30:00Z")))
    }

    @Test func openUntilTheClose() throws {
        let timeline = try MarketHoursProvider.timeline(market: market, now: try utc("2026-11-18T15:00:00Z"))
        let close = try utc("2026-11-18T21:00:00Z")
        #expect(timeline.entries.map(\.status) == ["open", "closed"])
        #expect(timeline.entries[1].date == close)
        #expect(timeline.entries[1].nextChange == (try utc("2026-11-19T14:30:00Z")))
        #expect(timeline.policy == .after(close))
    }

    @Test func readsTheSampleFileWithHolidays() async throws {
        let directory = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let samples = "/" + directory + "/samples/data/market-hours"
        let wednesdayEvening = try utc("2026-11-25T22:00:00Z")
        let timeline = try await MarketHoursProvider().timeline(in: context(at: wednesdayEvening, directory: samples))
        // Thursday the 26th is a holiday: next open is Friday.
        #expect(timeline.policy == .after(try utc("2026-11-27T14:30:00Z")))
        #expect(timeline.entries[0].prices["AAPL"] == 231.5)
        #expect(timeline.entries[0].source.hasSuffix("market.json"))
    }

    @Test func missingFileUsesDefaultsAndSaysSo() async throws {
        let timeline = try await MarketHoursProvider().timeline(in: context(directory: "/nonexistent/dir"))
        #expect(timeline.entries[0].source == "built-in defaults; write market.json in /nonexistent/dir to change")
    }

    @Test func malformedFileIsAnErrorNamingTheFileAndTheProblem() async throws {
        let directory = ScratchDirectory.path("kit-tests-\(UUID().uuidString)-market")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(#"{"exchange": "X", "open": "9h30", "close": "16:00"}"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/market.json"))
        do {
            _ = try await MarketHoursProvider().timeline(in: context(directory: directory))
            Issue.record("expected an error")
        } catch let error as TimelineProviderError {
            #expect(error.message.contains(directory + "/market.json"))
            #expect(error.message.contains(#""open" is "9h30", expected HH:MM"#), "\(error.message)")
        }
    }
}
