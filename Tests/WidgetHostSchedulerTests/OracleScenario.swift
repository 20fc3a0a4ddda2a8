import PropertyBased
import WidgetHostModel

@testable import WidgetHostScheduler

/// A random scenario for comparing the shipped scheduler with the plain
/// scan (``OracleComparison``), held as plain numbers so that
/// swift-property-based can shrink a failing one: fewer instances, steps
/// and provider answers, earlier times, and every choice toward its first
/// (a number shrinks toward 0). Decoded into configurations, instances,
/// events and timelines by the properties below.
struct OracleScenario: Sendable, CustomStringConvertible {
    /// One number per configuration value, each an index into its
    /// choices (``configuration``).
    var settings: [Int]
    /// Virtual days the scenario runs, 1 to 4.
    var days: Int
    /// The instances at the start.
    var instances: [InstanceChoice]
    /// What happens, in any order (sorted by time when run).
    var steps: [StepChoice]
    /// What the provider answers, in turn (the n-th reload completed gets
    /// answer n modulo their count).
    var answers: [AnswerChoice]

    /// An instance: its plugin, kind and app (indexes into two plugins,
    /// two kinds and three apps), whether it is visible and uses location.
    struct InstanceChoice: Sendable {
        var plugin: Int
        var kind: Int
        var app: Int
        /// Visible unless 7 or more (out of 0-9): 70 % are.
        var hidden: Int
        var usesLocation: Bool
    }

    /// A step of the script.
    struct StepChoice: Sendable {
        /// Seconds after the start (taken modulo the scenario's length).
        var time: Int
        /// Which kind of step (``Step``), 0 to 16.
        var what: Int
        /// Which instance id ("i<target>"), 0 to 13.
        var target: Int
        /// Which app, 0 to 2.
        var app: Int
        /// The step's other choices, as bits (foreground or background,
        /// which session, change, kind or plugin).
        var detail: Int
    }

    /// A provider's answer.
    struct AnswerChoice: Sendable {
        /// A success below 88, a failure below 96, else a timeout.
        var outcome: Int
        /// `atEnd` for 0-2, `never` for 3, `after` a short time for 4,
        /// `after` up to 4 hours for 5-7.
        var policy: Int
        /// The `after` date's offset (seconds, from an hour before `now`).
        var offset: Int
        /// The entries' dates (seconds, from 10 minutes before `now`).
        var dates: [Int]
    }

    /// What a step does.
    enum Step {
        case event(SchedulerEvent)
        /// Adds the next instance (numbered after those made so far).
        case add(InstanceChoice)
        /// Removes the id at this index of the ids made so far (modulo).
        case remove(Int)
        /// A driver woken for something else asks what is due.
        case wake
        /// Ends the hold of a reload not called of the id at this index of
        /// the ids made so far (modulo): its plugin loaded again.
        case endHold(Int)
    }

    static let apps = ["a", "b", "c"]
    static let kinds = ["k1", "k2"]
    static let plugins = ["p", "q"]

    // MARK: Generation

    /// Scenarios of 1-10 instances, 5-240 steps over 1-4 days, 8-64
    /// answers: as the seeded generator this replaced made them. At least
    /// 8 answers, so that a scenario whose answers are all due at once (an
    /// `atEnd` without entries, an `after` in the past: about one in five
    /// each) is rare, as it was when each answer was drawn anew: under
    /// developer mode's 1-second floor such a scenario reloads every second.
    static let generator = zip(
        Gen.int(in: 0...999).array(of: 15),
        Gen.int(in: 1...4),
        zip(
            Gen.int(in: 0...1), Gen.int(in: 0...1), Gen.int(in: 0...2), Gen.int(in: 0...9),
            Gen.bool
        ).map { InstanceChoice(plugin: $0, kind: $1, app: $2, hidden: $3, usesLocation: $4) }.array(of: 1...10),
        zip(
            Gen.int(in: 0..<(4 * 86_400)), Gen.int(in: 0...17), Gen.int(in: 0...13), Gen.int(in: 0...2),
            Gen.int(in: 0...63)
        ).map { StepChoice(time: $0, what: $1, target: $2, app: $3, detail: $4) }.array(of: 5...240),
        zip(
            Gen.int(in: 0...99), Gen.int(in: 0...7), Gen.int(in: 0..<18_000),
            Gen.int(in: 0..<11_400).array(of: 0...4)
        ).map { AnswerChoice(outcome: $0, policy: $1, offset: $2, dates: $3) }.array(of: 8...64)
    ).map { OracleScenario(settings: $0, days: $1, instances: $2, steps: $3, answers: $4) }

    // MARK: Decoding

    /// The configuration: small allowances, all learning periods, jitter,
    /// free caps and coalescing; hidden deferral off in 20 %, developer
    /// mode in 15 %.
    var configuration: SchedulerConfiguration {
        func pick<T>(_ i: Int, _ choices: [T]) -> T { choices[settings[i] % choices.count] }
        var c = SchedulerConfiguration()
        c.learningAllowance = pick(0, Array(1...12))
        c.frequentAllowance = pick(1, Array(1...12))
        c.occasionalAllowance = pick(2, Array(1...8))
        c.rareAllowance = pick(3, Array(0...4))
        c.frequentVisibleHours = pick(4, Array(1...6))
        c.occasionalVisibleHours = pick(5, [1, 2])
        c.learningPeriod = pick(6, [0, 3 * hour, day, 3 * day])
        c.maximumJitter = pick(7, [0, 120, 900])
        c.freeReloadLimit = pick(8, Array(1...6))
        c.freeReloadWindow = pick(9, [60, 600])
        c.coalescingCap = pick(10, [0, 60, 600])
        c.coalescingFraction = pick(11, [0, 0.1, 0.5])
        c.deferPolicyReloadsWhileHidden = settings[12] % 10 < 8
        c.developerMode = settings[13] % 100 >= 85
        c.pushAllowance = pick(14, Array(0...3))
        return c
    }

    /// When the scenario ends.
    var end: Double { t0 + Double(days) * day }

    /// Instance number `n` as `choice` makes it.
    static func instance(_ n: Int, _ choice: InstanceChoice) -> WidgetInstance {
        WidgetInstance(
            id: "i\(n)", plugin: plugins[choice.plugin], kind: kinds[choice.kind], app: apps[choice.app],
            isVisible: choice.hidden < 7, usesLocation: choice.usesLocation)
    }

    /// The steps, in order of time (steps at one time in the order given).
    var script: [(time: Double, step: Step)] {
        let length = days * 86_400
        let timed = steps.enumerated().map { i, choice in
            (time: t0 + Double(choice.time % length), index: i, step: Self.step(choice))
        }
        return timed.sorted { ($0.time, $0.index) < ($1.time, $1.index) }.map { ($0.time, $0.step) }
    }

    static func step(_ c: StepChoice) -> Step {
        let id = "i\(c.target)"
        let app = apps[c.app]
        let bit = c.detail & 1 == 1
        let kind = kinds[c.detail & 1]
        let session = SessionKind.allCases[(c.detail >> 1) % SessionKind.allCases.count]
        switch c.what {
        case 0, 1: return .wake
        case 2, 3: return .event(.instanceShown(id))
        case 4, 5: return .event(.instanceHidden(id))
        case 6: return .event(bit ? .appBackground(app) : .appForeground(app))
        case 7: return .event(bit ? .sessionEnded(app: app, kind: session) : .sessionStarted(app: app, kind: session))
        case 8: return .event(.appIntent(instance: id))
        case 9: return .event(.systemChange(SystemChange.allCases[c.detail % SystemChange.allCases.count]))
        case 10: return .event(.significantLocationChange)
        case 11, 12: return .event(.reloadTimelines(ofKind: kind, app: app))
        case 13: return .event(.reloadAllTimelines(app: app))
        case 14:
            let choice = InstanceChoice(
                plugin: c.detail & 1, kind: (c.detail >> 1) & 1, app: c.app, hidden: c.target % 10,
                usesLocation: (c.detail >> 2) & 1 == 1)
            return .add(choice)
        case 15: return .remove(c.target)
        case 17: return .endHold(c.target)
        default:
            let plugin = [nil, "p", "q"][(c.detail >> 1) % 3]
            return .event(.push(kind: kind, plugin: plugin))
        }
    }

    /// The provider's answer to the `n`-th reload completed, at `now`.
    func outcome(_ n: Int, at now: Double) -> ReloadOutcome {
        let a = answers[n % answers.count]
        if a.outcome >= 96 { return .timedOut }
        if a.outcome >= 88 { return .failure(reason: "random") }
        if a.outcome >= 82 {
            // Never called (the plugin unavailable, a host fault): held
            // until a time in the past, the near future, or not a time.
            let retryAt = a.offset % 97 == 0 ? .infinity : now + Double(a.offset % 2_400 - 600)
            return .notCalled(reason: "not called", retryAt: retryAt)
        }
        let policy: ReloadPolicy =
            switch a.policy {
            case 3: .never
            case 4: .after(now + Double(a.offset % 1_500 - 600))
            case 5, 6, 7: .after(now + Double(a.offset - 3_600))
            default: .atEnd
            }
        return .success(timeline(a.dates.map { now + Double($0 - 600) }.sorted(), policy))
    }

    // MARK: Description

    /// An instance's plugin, kind, app, visibility and use of location.
    static func describe(_ w: WidgetInstance) -> String {
        "\(w.plugin)/\(w.kind) app \(w.app)" + (w.isVisible ? "" : " hidden") + (w.usesLocation ? " location" : "")
    }

    /// The scenario as a reader needs it to reproduce a failure: what the
    /// configuration changes, the instances, the steps with their times
    /// (seconds from the start), the answers.
    var description: String {
        let defaults = SchedulerConfiguration()
        let c = configuration
        var changed: [String] = []
        for (label, value, base) in [
            ("learningAllowance", "\(c.learningAllowance)", "\(defaults.learningAllowance)"),
            ("frequentAllowance", "\(c.frequentAllowance)", "\(defaults.frequentAllowance)"),
            ("occasionalAllowance", "\(c.occasionalAllowance)", "\(defaults.occasionalAllowance)"),
            ("rareAllowance", "\(c.rareAllowance)", "\(defaults.rareAllowance)"),
            ("frequentVisibleHours", "\(c.frequentVisibleHours)", "\(defaults.frequentVisibleHours)"),
            ("occasionalVisibleHours", "\(c.occasionalVisibleHours)", "\(defaults.occasionalVisibleHours)"),
            ("learningPeriod", "\(c.learningPeriod)", "\(defaults.learningPeriod)"),
            ("maximumJitter", "\(c.maximumJitter)", "\(defaults.maximumJitter)"),
            ("freeReloadLimit", "\(c.freeReloadLimit)", "\(defaults.freeReloadLimit)"),
            ("freeReloadWindow", "\(c.freeReloadWindow)", "\(defaults.freeReloadWindow)"),
            ("coalescingCap", "\(c.coalescingCap)", "\(defaults.coalescingCap)"),
            ("coalescingFraction", "\(c.coalescingFraction)", "\(defaults.coalescingFraction)"),
            (
                "deferPolicyReloadsWhileHidden", "\(c.deferPolicyReloadsWhileHidden)",
                "\(defaults.deferPolicyReloadsWhileHidden)"
            ),
            ("developerMode", "\(c.developerMode)", "\(defaults.developerMode)"),
            ("pushAllowance", "\(c.pushAllowance)", "\(defaults.pushAllowance)"),
        ] where value != base {
            changed.append("\(label)=\(value)")
        }
        var lines = ["\(days) day(s); configuration: \(changed.joined(separator: " "))"]
        for (n, choice) in instances.enumerated() {
            lines.append("  instance i\(n) " + Self.describe(Self.instance(n, choice)))
        }
        for (time, step) in script where time < end {
            let text: String =
                switch step {
                case .event(let e): "\(e)"
                case .add(let choice): "add an instance " + Self.describe(Self.instance(0, choice))
                case .remove(let i): "remove the id at \(i) of those made"
                case .wake: "wake"
                case .endHold(let i): "end the hold of the id at \(i) of those made"
                }
            lines.append("  at \(Int(time - t0)) s: \(text)")
        }
        for (n, a) in answers.enumerated() {
            lines.append(
                "  answer \(n): outcome \(a.outcome) policy \(a.policy) offset \(a.offset) dates \(a.dates)")
        }
        return lines.joined(separator: "\n")
    }
}
