import Testing
import WidgetHostABI
import WidgetHostKit

/// The WidgetKit code in SeedProviders.swift compiles against WidgetHostKit
/// (in Swift 6 mode) and runs: directly, through the async bridges and
/// through the C ABI.
@Suite struct SeedCompatibilityTests {
    @Test func characterSnapshotUsesSampleDataInPreview() async throws {
        let provider = CharacterDetailProvider()
        let preview = try await provider.snapshot(in: TimelineProviderContext(isPreview: true))
        #expect(preview.healthLevel == 0.75)
        let real = try await provider.snapshot(in: TimelineProviderContext(isPreview: false))
        #expect(real.healthLevel == 0.25)
    }

    @Test func characterTimelineAsksAgainAfterTwoAndAHalfHours() async throws {
        let before = Date()
        let timeline = try await CharacterDetailProvider().timeline(in: TimelineProviderContext())
        guard case .after(let date) = timeline.policy else {
            Issue.record("expected .after, got \(timeline.policy)")
            return
        }
        #expect(abs(date.timeIntervalSince(before) - 150 * 60) < 5)
    }

    @Test func leaderboardTimeline() async throws {
        let timeline = try await LeaderboardProvider().timeline(in: TimelineProviderContext())
        #expect(timeline.policy == .atEnd)
        #expect(timeline.entries.first?.heros.map(\.name) == ["Power Panda", "Spouty"])
    }

    @Test func seedProvidersExportThroughTheCABI() async throws {
        let d = descriptor(
            PluginInfo(id: "test.seed", name: "Seed", version: "1"),
            kinds: [
                WidgetKind("seed.character", displayName: "Character", provider: CharacterDetailProvider()),
                WidgetKind("seed.leaderboard", displayName: "Leaderboard", provider: LeaderboardProvider()),
            ])
        let character = await (call(kind(d, 0), .timeline))
        #expect(character.policy == WH_POLICY_AFTER.rawValue)
        #expect(character.entries[0].json.contains(#""healthLevel":0.25"#))
        let leaderboard = await (call(kind(d, 1), .timeline))
        #expect(leaderboard.entries[0].json.contains(#""heros":[{"level":2,"name":"Power Panda"}"#))
    }
}
