import WidgetHostModel
import WidgetHostScheduler

/// Reconciles a stored ``SchedulerState`` with the clock at start-up (pure:
/// no clock is read; docs/state.md has the rules with examples).
///
/// - Downtime (`now ≥ lastSeen`): nothing is moved. Every instance whose
///   policy came due while the host was down has one `policyDue` in the
///   past, so the scheduler issues exactly one catch-up reload for it,
///   however many periods passed (it keeps one due time per instance).
/// - Backwards jump (`now < lastSeen`): every scheduling time is moved back
///   by `lastSeen - now` (the downtime is taken as zero, the conservative
///   choice), so ledger entries keep their ages: they still count for their
///   full 24 h, none vanish, none are granted. Timeline entry dates are
///   content (wall-clock) and stay.
/// - Forwards jump detected through the monotonic clock (same boot, wall
///   time advanced more than real time): times are moved forward by the
///   excess, so the jump neither expires ledger entries (no budget granted)
///   nor makes more than one reload per instance due.
/// - An in-flight reload died with the host (killed, or queued and not
///   started at a stop): its reload is due again (explicit: the request is
///   restored; policy: the policy is due), which is that instance's one
///   catch-up reload, and the charge it paid is returned (its entry leaves
///   the budget, push or free-reload ledger) because the redo pays it: one
///   charge for the one reload that runs to the end, whatever the host did.
public enum RestartPlanner {
    public struct Reconciliation: Sendable, Hashable {
        public var state: SchedulerState
        /// Seconds added to every scheduling time (0, or the jump undone).
        public var shift: Double
        /// Instances with a reload due at `now` (one catch-up each).
        public var catchUp: [String]
        /// Instances whose reload was in flight when the host stopped (due
        /// again, its charge returned), in the state's order.
        public var interrupted: [String] = []
        /// What was done, for the event log.
        public var notes: [String]
    }

    /// A wall-clock difference beyond the real elapsed time smaller than this
    /// is drift, not a jump.
    public static let jumpTolerance: Double = 5

    public static func reconcile(
        state: SchedulerState, lastSeen: Double?, now: Double, monotonicElapsed: Double? = nil
    ) -> Reconciliation {
        var notes: [String] = []
        let previous = max(lastSeen ?? -.infinity, state.now ?? -.infinity)
        var shift = 0.0
        if previous.isFinite {
            if now < previous {
                shift = now - previous - max(0, monotonicElapsed ?? 0)
                notes.append(
                    "wall clock went back \(Timestamp.duration(previous - now)): times moved by \(Timestamp.duration(shift))"
                )
            } else if let elapsed = monotonicElapsed, now - previous - elapsed > jumpTolerance {
                shift = now - previous - elapsed
                notes.append(
                    "wall clock jumped forward \(Timestamp.duration(shift)) beyond the real \(Timestamp.duration(elapsed)): times moved forward"
                )
            } else if previous < now {
                notes.append("down for \(Timestamp.duration(now - previous))")
            }
        }
        var result = SchedulerState()
        result.apps = state.apps
        result.freeLedger = RollingLedger(times: state.freeLedger.times.map { min($0 + shift, now) })
        result.now = now
        func move(_ t: Double?) -> Double? { t.map { $0 + shift } }
        var catchUp: [String] = []
        var interrupted: [String] = []
        /// One instance's state with its times moved and its reload in flight due again.
        func reconciled(_ state: InstanceState) -> InstanceState {
            var s = state
            if shift != 0 {
                s.addedAt += shift
                s.visibleSince = move(s.visibleSince).map { min($0, now) }
                s.timelineReceivedAt = move(s.timelineReceivedAt)
                s.policyDue = move(s.policyDue)
                s.lastReloadAt = move(s.lastReloadAt)
                s.locationChangeAt = move(s.locationChangeAt)
                s.backoffUntil = move(s.backoffUntil)
                s.ledger = RollingLedger(times: s.ledger.times.map { min($0 + shift, now) })
                if !s.pushLedger.isEmpty {
                    s.pushLedger = RollingLedger(times: s.pushLedger.times.map { min($0 + shift, now) })
                }
                if var request = s.request {
                    request.requestedAt = min(request.requestedAt + shift, now)
                    s.request = request
                }
            }
            if let flight = s.inFlight {
                s.inFlight = nil
                let dueSince = min(flight.dueSince + shift, now)
                // Where the charge is now: the free ledger was moved as
                // `min(t + shift, now)`, the instance's ledgers only by a shift.
                let time = flight.decision.time
                let moved = shift == 0 ? time : min(time + shift, now)
                switch flight.decision.charge {
                case .counted: s.ledger.forget(moved)
                case .free(.push): s.pushLedger.forget(moved)
                case .free(let reason): if reason.isCapped { result.freeLedger.forget(min(time + shift, now)) }
                }
                if flight.decision.trigger.isExplicit {
                    if s.request == nil || (s.request!.charge.isCounted && !flight.decision.charge.isCounted) {
                        s.request = PendingRequest(
                            trigger: flight.decision.trigger, charge: flight.decision.charge, requestedAt: dueSince)
                    }
                } else if s.policyDue == nil || s.policyDue! > dueSince {
                    s.policyDue = dueSince
                }
                interrupted.append(s.instance.id)
            }
            return s
        }
        // Shared, not copied: a restart with no clock jump changes only the
        // instances with a reload in flight (a copy of each of 100,000
        // states was a tenth of a restart).
        result.instances = state.instances
        for p in result.instances.indices {
            if shift != 0 || result.instances[p].isInFlight {
                let updated = reconciled(result.instances[p])
                result.instances[p] = updated
            }
            let due =
                (result.instances[p].policyDue.map { $0 <= now } ?? false)
                || (result.instances[p].request.map { $0.requestedAt <= now } ?? false)
            if due { catchUp.append(result.instances[p].instance.id) }
        }
        if !interrupted.isEmpty {
            notes.append(
                "reloads in flight at shutdown, due again with their charges returned: \(interrupted.count) (\(Self.list(interrupted)))"
            )
        }
        if !catchUp.isEmpty { notes.append("\(catchUp.count) instance(s) get one catch-up reload") }
        return Reconciliation(
            state: result, shift: shift, catchUp: catchUp, interrupted: interrupted, notes: notes)
    }

    /// Ids for a log line: all of a few, the first ten of many
    /// (`a, b, … and 4,990 more`): a restart may concern 100,000 instances.
    public static func list(_ ids: [String], limit: Int = 10) -> String {
        guard ids.count > limit else { return ids.joined(separator: ", ") }
        return ids.prefix(limit).joined(separator: ", ") + " and \(ids.count - limit) more"
    }
}
