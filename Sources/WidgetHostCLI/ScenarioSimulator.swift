import WidgetHostDaemon
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

/// Runs a scenario in virtual time: the scheduler decides, real plugins
/// answer through the isolation layer with the virtual time as their
/// `context->now`, and every reload goes to the report writers as it happens.
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

    /// What the simulator hands its report writers, as it happens: nothing
    /// of the run is kept for the report but the per-instance summaries.
    enum Record {
        case reload(Reload)
        case event(EventRecord)
        case display(DisplayChange)
    }

    /// The end of a run: what the report needs after the last record.
    struct Result {
        var scenario: Scenario
        var end: Double
        /// Every reload issued.
        var reloads: Int
        var stacks: [StackSample]
        /// Per instance, in the scenario's order.
        var summaries: [SimulationSummary]
        /// Calls that reached a plugin.
        var pluginCalls: Int
        /// Reloads answered from an identical call of a deterministic kind.
        var memoizedCalls = 0
        /// The scheduler at the end (the allowance and displayed entry of each
        /// instance in the summary).
        var scheduler: ReloadScheduler

        /// The summary of the instance at `index` of the scenario, with its
        /// allowance and displayed entry at the end.
        func summary(_ index: Int) -> SimulationSummary {
            var summary = summaries[index]
            summary.allowanceAtEnd = scheduler.allowance(of: summary.instance, at: end) ?? 0
            summary.shows = scheduler.displayedEntry(of: summary.instance, at: end).map {
                (try? JSONValue.parse($0.contentJSON))?.compactText(limit: 60) ?? $0.contentJSON
            }
            return summary
        }
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
    /// Receives every reload, event and display change as it happens (the
    /// streamed report).
    var record: ((Record) -> Void)?

    /// The most results given back to the scheduler at once: enough to
    /// read ahead over, few enough that a burst's reloads are not all held.
    static let completionChunk = 256

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
        // Instance id → position in the scenario (ids are unique: the parser checks).
        var positions: [String: Int] = [:]
        positions.reserveCapacity(scenario.instances.count)
        for (position, instance) in scenario.instances.enumerated() { positions[instance.id] = position }
        var summaries = scenario.instances.map { SimulationSummary(instance: $0.id) }
        let window = scenario.configuration.budgetWindow
        func widget(_ instance: Scenario.Instance) -> WidgetInstance {
            WidgetInstance(
                id: instance.id, plugin: instance.plugin, kind: instance.kind, family: instance.family,
                configuration: configurations[instance.id] ?? "{}",
                app: instance.app, isVisible: instance.visible, usesLocation: instance.usesLocation)
        }
        for instance in scenario.instances where !scenario.lateInstances.contains(instance.id) {
            scheduler.add(widget(instance), at: scenario.start)
        }

        var reloads = 0
        var stackSamples: [StackSample] = []
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
        scheduler.tracksDisplayChanges = trackDisplay
        var displayChanged: [Int] = []
        /// Results not yet given back, and their reloads, to report after.
        var completions: [ReloadCompletion] = []
        var reported: [(position: Int, reload: Reload)] = []
        /// Gives the results gathered back at once (the scheduler reads
        /// their records ahead), then reports their reloads in order. Called
        /// every `completionChunk` results and at the end of each batch, so a
        /// burst (every instance's first reload) is not held whole.
        func giveBack(at now: Double) {
            scheduler.complete(completions, at: now)
            for (position, reload) in reported {
                summaries[position].add(reload, window: window)
                reloads += 1
                record?(.reload(reload))
            }
            completions.removeAll(keepingCapacity: true)
            reported.removeAll(keepingCapacity: true)
        }

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
                case .add(let id):
                    if let position = positions[id] { scheduler.add(widget(scenario.instances[position]), at: now) }
                case .remove(let id): scheduler.remove(id)
                }
                record?(.event(EventRecord(time: now, label: event.label)))
                continue
            }
            lastWake = now
            for batch in scheduler.dueReloads(at: now) {
                for decision in batch.decisions {
                    guard let position = positions[decision.instanceID] else { continue }
                    let instance = scenario.instances[position]
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
                    // The daemon's mapping: a host fault is held, uncharged.
                    let outcome = ReloadOutcome(output, at: now, configuration: scenario.configuration)
                    completions.append(ReloadCompletion(instanceID: decision.instanceID, outcome: outcome))
                    let reload = Reload(
                        decision: decision, outcome: output.failure?.code ?? "ok",
                        entries: output.result?.entries.count ?? 0, policy: output.result?.policy, visible: visible,
                        failure: output.failure)
                    reported.append((position, reload))
                    if completions.count >= Self.completionChunk { giveBack(at: now) }
                }
                giveBack(at: now)
            }
            progress?(now, reloads)
            if trackDisplay {
                // Only the instances whose displayed entry may have changed,
                // not every instance at every wakeup (O(instances) a wakeup).
                displayChanged.removeAll(keepingCapacity: true)
                scheduler.takeDisplayChanges(into: &displayChanged)
                for position in displayChanged {
                    let id = scheduler.instance(at: position).id
                    guard let entry = scheduler.displayedEntry(of: id, at: now), shown[id] != entry.date else {
                        continue
                    }
                    shown[id] = entry.date
                    let content = (try? JSONValue.parse(entry.contentJSON))?.compactText(limit: 70) ?? entry.contentJSON
                    record?(.display(DisplayChange(time: now, instance: id, entryDate: entry.date, content: content)))
                }
            }
        }
        return Result(
            scenario: scenario, end: end, reloads: reloads, stacks: stackSamples, summaries: summaries,
            pluginCalls: calls, memoizedCalls: memoized, scheduler: scheduler)
    }
}
