import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

/// Runs a scenario in virtual time: the scheduler decides, real plugins
/// answer through the isolation layer with the virtual time as their
/// `context->now`, and every reload is recorded.
struct ScenarioSimulator {
    /// One reload as it happened.
    struct Reload {
        var decision: ReloadDecision
        var outcome: String
        var entries: Int
        var policy: ReloadPolicy?
        var visible: Bool
        var failure: PluginFailure?
    }

    /// One scripted event as it happened.
    struct EventRecord {
        var time: Double
        var label: String
    }

    /// An instance's displayed entry changed (rule 2: at each entry's date).
    struct DisplayChange {
        var time: Double
        var instance: String
        var entryDate: Double
        var content: String
    }

    /// Which instance of a stack was on top, sampled at intervals.
    struct StackSample {
        var stack: String
        var time: Double
        var top: String?
    }

    struct Summary {
        var instance: String
        var counted = 0
        var free = 0
        var deferrals = 0
        var failures = 0
        var maxCountedIn24h = 0
        var allowanceAtEnd = 0
        var shortestCountedSpacing: Double?
        var longestVisibleStale: Double = 0
        var shows: String?
    }

    struct Result {
        var scenario: Scenario
        var end: Double
        var reloads: [Reload]
        var events: [EventRecord]
        var stacks: [StackSample]
        var display: [DisplayChange]
        var summaries: [Summary]
        /// Calls that reached a plugin.
        var pluginCalls: Int
        /// Reloads answered from an identical call of a deterministic kind.
        var memoizedCalls = 0
    }

    let scenario: Scenario
    let pluginPaths: [String: String]
    /// Each instance's full configuration (defaults filled in), as JSON.
    let configurations: [String: String]
    let dataDirectory: (String) -> String
    let isolation: IsolationOptions
    /// How each reload's plugin call is isolated: with warm workers (the
    /// default) one worker per plugin (and sandbox profile) serves the run.
    var mode: IsolationMode = .worker
    /// Kinds (plugin name, kind id) that declare `WH_KIND_NEEDS_NETWORK`:
    /// their calls get the network, in a worker of their own.
    var networkKinds: Set<String> = []
    /// Record every change of what an instance shows.
    var trackDisplay = false
    /// Kinds (plugin name, kind id) that declared `WH_KIND_DETERMINISTIC`:
    /// identical calls (family, configuration, timeout, `now`) share one answer.
    var deterministicKinds: Set<String> = []
    /// Called after each wakeup with the virtual time, reloads so far and the
    /// scheduler's instance count (the progress line).
    var progress: ((_ now: Double, _ reloads: Int) -> Void)?

    /// The one seam between the simulator and the isolation engine: every
    /// plugin call of a run goes through here.
    static func callPlugin(_ caller: PluginCaller, _ call: PluginCall) -> CallOutput {
        caller.call(call)
    }

    /// What makes two timeline calls identical.
    struct CallKey: Hashable {
        var plugin: String
        var kind: String
        var family: WidgetFamily
        var configuration: String
        var timeout: Double?
    }

    func run(days: Double) -> Result {
        let end = scenario.start + days * 86_400
        var callers: [String: PluginCaller] = [:]
        func caller(_ plugin: String) -> PluginCaller {
            if let existing = callers[plugin] { return existing }
            let made = PluginCaller(plugin: plugin, mode: mode, options: isolation)
            callers[plugin] = made
            return made
        }
        var scheduler = ReloadScheduler(configuration: scenario.configuration)
        let instances = Dictionary(uniqueKeysWithValues: scenario.instances.map { ($0.id, $0) })
        func widget(_ instance: Scenario.Instance) -> WidgetInstance {
            WidgetInstance(
                id: instance.id, plugin: instance.plugin, kind: instance.kind, family: instance.family,
                configuration: configurations[instance.id] ?? "{}",
                app: instance.app, isVisible: instance.visible, usesLocation: instance.usesLocation)
        }
        for instance in scenario.instances where !scenario.lateInstances.contains(instance.id) {
            scheduler.add(widget(instance), at: scenario.start)
        }

        var reloads: [Reload] = []
        var events: [EventRecord] = []
        var stackSamples: [StackSample] = []
        var display: [DisplayChange] = []
        var shown: [String: Double] = [:]
        var nextEvent = 0
        var nextStackSample = scenario.stacks.map { _ in scenario.start }
        var lastWake = -Double.infinity
        var calls = 0
        var memoized = 0
        // Answers of deterministic kinds at the current virtual time (time
        // only moves forward: older answers can never be asked for again).
        var memo: [CallKey: CallOutput] = [:]
        var memoTime = -Double.infinity

        while true {
            let eventTime = nextEvent < scenario.events.count ? scenario.events[nextEvent].time : .infinity
            let stackTime = nextStackSample.min() ?? .infinity
            var wake = scheduler.nextWakeup() ?? .infinity
            if wake <= lastWake && wake < eventTime {
                // Nothing can change before the next event: skip ahead.
                wake = .infinity
            }
            let now = min(eventTime, stackTime, wake)
            guard now <= end else { break }
            if stackTime == now {
                for (index, stack) in scenario.stacks.enumerated() where nextStackSample[index] == now {
                    stackSamples.append(
                        StackSample(stack: stack.name, time: now, top: scheduler.topOfStack(stack.instances, at: now)))
                    nextStackSample[index] = now + stack.every
                }
                continue
            }
            if eventTime == now {
                let event = scenario.events[nextEvent]
                nextEvent += 1
                switch event.action {
                case .scheduler(let schedulerEvent): scheduler.handle(schedulerEvent, at: now)
                case .add(let id): if let instance = instances[id] { scheduler.add(widget(instance), at: now) }
                case .remove(let id): scheduler.remove(id)
                }
                events.append(EventRecord(time: now, label: event.label))
                continue
            }
            lastWake = now
            for batch in scheduler.dueReloads(at: now) {
                for decision in batch.decisions {
                    guard let instance = instances[decision.instanceID] else { continue }
                    let visible = scheduler.instanceState(decision.instanceID)?.instance.isVisible ?? false
                    let configuration = configurations[instance.id] ?? "{}"
                    let key = CallKey(
                        plugin: instance.plugin, kind: instance.kind, family: instance.family,
                        configuration: configuration, timeout: instance.timeout)
                    let deterministic = deterministicKinds.contains(instance.plugin + "\u{0}" + instance.kind)
                    if memoTime != now {
                        memo.removeAll(keepingCapacity: true)
                        memoTime = now
                    }
                    let output: CallOutput
                    if deterministic, let known = memo[key] {
                        output = known
                        memoized += 1
                    } else {
                        calls += 1
                        let call = PluginCall(
                            .timeline, kind: instance.kind, family: instance.family, now: now,
                            timeout: instance.timeout, configuration: instance.configuration,
                            dataDirectory: dataDirectory(instance.plugin),
                            allowNetwork: networkKinds.contains(instance.plugin + "\u{0}" + instance.kind))
                        output = Self.callPlugin(caller(pluginPaths[instance.plugin] ?? instance.plugin), call)
                        if deterministic { memo[key] = output }
                    }
                    let outcome: ReloadOutcome
                    if let result = output.result {
                        outcome = .success(result.timeline)
                    } else if case .timedOut? = output.failure?.reason {
                        outcome = .timedOut
                    } else {
                        outcome = .failure(reason: output.failure?.message ?? "no result")
                    }
                    scheduler.complete(decision.instanceID, with: outcome, at: now)
                    reloads.append(
                        Reload(
                            decision: decision, outcome: output.failure?.code ?? "ok",
                            entries: output.result?.entries.count ?? 0, policy: output.result?.policy, visible: visible,
                            failure: output.failure))
                }
            }
            progress?(now, reloads.count)
            if trackDisplay {
                for id in scheduler.instanceIDs {
                    guard let entry = scheduler.displayedEntry(of: id, at: now), shown[id] != entry.date else {
                        continue
                    }
                    shown[id] = entry.date
                    let content = (try? JSONValue.parse(entry.contentJSON))?.compactText(limit: 70) ?? entry.contentJSON
                    display.append(DisplayChange(time: now, instance: id, entryDate: entry.date, content: content))
                }
            }
        }
        return Result(
            scenario: scenario, end: end, reloads: reloads, events: events, stacks: stackSamples, display: display,
            summaries: summarize(reloads, scheduler: scheduler, end: end), pluginCalls: calls,
            memoizedCalls: memoized)
    }

    func summarize(_ reloads: [Reload], scheduler: ReloadScheduler, end: Double) -> [Summary] {
        let window = scenario.configuration.budgetWindow
        // One pass over the reloads, grouped by instance (not a filter per instance).
        var byInstance: [String: [Int]] = [:]
        for (position, reload) in reloads.enumerated() {
            byInstance[reload.decision.instanceID, default: []].append(position)
        }
        return scenario.instances.map { instance in
            var summary = Summary(instance: instance.id)
            var counted: [Double] = []
            for position in byInstance[instance.id] ?? [] {
                let reload = reloads[position]
                let decision = reload.decision
                if decision.charge.isCounted {
                    summary.counted += 1
                    counted.append(decision.time)
                } else {
                    summary.free += 1
                }
                if decision.deferral != nil { summary.deferrals += 1 }
                if reload.failure != nil { summary.failures += 1 }
                if reload.visible, let deferral = decision.deferral {
                    summary.longestVisibleStale = max(summary.longestVisibleStale, decision.time - deferral.from)
                }
            }
            // Largest number of counted reloads in any window: slide over the sorted times.
            var low = 0
            for high in counted.indices {
                while counted[high] - counted[low] >= window { low += 1 }
                summary.maxCountedIn24h = max(summary.maxCountedIn24h, high - low + 1)
                if high > 0 {
                    let gap = counted[high] - counted[high - 1]
                    summary.shortestCountedSpacing = min(summary.shortestCountedSpacing ?? gap, gap)
                }
            }
            summary.allowanceAtEnd = scheduler.allowance(of: instance.id, at: end) ?? 0
            summary.shows = scheduler.displayedEntry(of: instance.id, at: end).map {
                (try? JSONValue.parse($0.contentJSON))?.compactText(limit: 60) ?? $0.contentJSON
            }
            return summary
        }
    }
}
