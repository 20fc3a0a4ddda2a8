import WidgetHostModel

/// The reload rules, evaluated for one instance: its plan (every limit
/// applied), its viewing tier, when a timeline makes it due. They read the
/// configuration and the host-wide free-reload ledger, and take the charge
/// of the instance's app (foreground, session) from the caller.
///
/// A small value made per call: the scheduler's hot paths read an instance's
/// state in place and pass it here, so that no closure captures (and copies)
/// the whole scheduler. The instance comes as a pointer into the scheduler's
/// array, valid for the call only: passed as a value, the whole state (a
/// few hundred bytes, a dozen references) was copied at every call.
struct ReloadRules {
    let configuration: SchedulerConfiguration
    let freeLedger: RollingLedger

    /// Whether a candidate of `s` is a free reload under the host-wide cap.
    func hasCappedCandidate(_ s: InstanceView, appCharge: ReloadCharge) -> Bool {
        if configuration.developerMode { return false }
        if let r = s.request, case .free(let reason) = r.charge, reason.isCapped {
            return true
        }
        if s.locationChangeAt != nil { return true }
        return s.policyDue != nil && !appCharge.isCounted
    }

    /// When the plan of `s` can change with no event but the passing of
    /// time: a counted reload is planned with the allowance of the viewing
    /// tier at `now` for the times before `now`, and that tier changes only
    /// at whole hours and at the end of the learning period. So the plan
    /// can change at the first such boundary after `now` once the reload is
    /// due but held (spacing, budget), and, for one planned later than it
    /// could be, at the first boundary after it came due (`planned`, the
    /// plan's time): a reload held by the budget until the tier rises at
    /// the next hour is, at that hour, due since it came due, with the
    /// coalescing slack of a reload not deferred. `.infinity` when the
    /// plan does not depend on `now`.
    func recheckTime(_ s: InstanceView, appCharge: ReloadCharge, now: Double, planned: Double) -> Double {
        if s.isInFlight { return .infinity }
        let spacing = s.ledgerLast.map { $0 + configuration.minimumReloadInterval } ?? -Double.infinity
        let backoff = s.backoffUntil ?? -Double.infinity
        // The earliest time a counted candidate is due, past spacing and backoff.
        var due = Double.infinity
        if let r = s.request, r.charge.isCounted { due = min(due, max(r.requestedAt, spacing, backoff)) }
        if let policy = s.policyDue, appCharge.isCounted,
            !(configuration.deferPolicyReloadsWhileHidden && !s.isVisible)
        {
            due = min(due, max(policy, spacing, backoff))
        }
        guard due < .infinity else { return .infinity }
        // Held now, or planned past the first boundary after it comes due.
        let end = tierBoundary(after: max(now, due), addedAt: s.addedAt)
        if due >= now && end > planned { return .infinity }
        return end
    }

    /// The steady state's rules (``SteadyRules``), from the configuration.
    @inline(__always)
    var steady: SteadyRules { SteadyRules(configuration) }

    /// ``SteadyRules/tierBoundary(after:addedAt:)``.
    func tierBoundary(after time: Double, addedAt: Double) -> Double {
        steady.tierBoundary(after: time, addedAt: addedAt)
    }

    /// ``SteadyRules/tier(_:at:)``.
    func tier(_ s: InstanceView, at time: Double) -> ViewTier { steady.tier(s, at: time) }

    /// ``SteadyRules/policyDue(for:jitterFraction:receivedAt:)``.
    func policyDue(for timeline: TimelineRecord, jitterFraction: Double, receivedAt time: Double) -> Double? {
        steady.policyDue(for: timeline, jitterFraction: jitterFraction, receivedAt: time)
    }

    /// The plan of `s` at `now`: the earliest of its candidates (a free one
    /// on a tie), every limit applied; nil when none.
    func plan(_ s: InstanceView, appCharge: ReloadCharge, at now: Double) -> PlannedReload? {
        candidate(s, appCharge: appCharge, at: now).map { $0.planned(s) }
    }

    /// `plan` as plain values: what the hot paths read (the time and the
    /// coalescing deadline) costs no copy of a trigger's strings.
    func candidate(_ s: InstanceView, appCharge: ReloadCharge, at now: Double) -> Candidate? {
        if s.isInFlight { return nil }
        var best: Candidate?
        func consider(_ candidate: Candidate?) {
            guard let c = candidate else { return }
            guard let b = best else {
                best = c
                return
            }
            if c.time < b.time || (c.time == b.time && !c.charge.isCounted && b.charge.isCounted) { best = c }
        }
        if let r = s.request {
            consider(
                constrain(
                    s, source: .request, isPolicy: r.trigger == .policy, charge: r.charge, base: r.requestedAt,
                    hiddenBound: nil, now: now))
        }
        if let loc = s.locationChangeAt, s.isVisible {
            let base = max(loc, s.visibleSince ?? loc)
            consider(
                constrain(
                    s, source: .location, isPolicy: false, charge: .free(.significantLocationChange), base: base,
                    hiddenBound: nil, now: now))
        }
        if let due = s.policyDue {
            var hidden: Double?? = nil  // nil: no bound; .some(nil): hidden now; .some(t): shown at t
            if configuration.deferPolicyReloadsWhileHidden {
                if !s.isVisible {
                    hidden = .some(nil)
                } else if let shown = s.visibleSince, shown > due {
                    hidden = .some(shown)
                }
            }
            consider(
                constrain(
                    s, source: .policy, isPolicy: true, charge: appCharge, base: due, hiddenBound: hidden, now: now))
        }
        return best
    }

    func constrain(
        _ s: InstanceView, source: Candidate.Source, isPolicy: Bool, charge: ReloadCharge,
        base: Double, hiddenBound: Double??, now: Double
    ) -> Candidate? {
        let developer = configuration.developerMode
        // Limits that always apply: backoff, the free-reload cap.
        // Limits lifted in developer mode: hidden, spacing, budget.
        var actual = base
        var actualCause: DeferralCause?
        var limited = base
        var limitedCause: DeferralCause?
        var limitedUnknown = false
        if let until = s.backoffUntil, until > actual {
            actual = until
            actualCause = .backoff
        }
        limited = actual
        limitedCause = actualCause
        if developer, isPolicy, let received = s.timelineReceivedAt,
            received + configuration.minimumReloadInterval > limited
        {
            // The floor under policy reloads that developer mode lifted.
            limited = received + configuration.minimumReloadInterval
            limitedCause = .spacing
        }
        if let bound = hiddenBound {
            if let shown = bound {
                if shown > limited {
                    limited = shown
                    limitedCause = .hidden
                }
            } else {
                limitedUnknown = true
                limitedCause = .hidden
            }
        }
        if !limitedUnknown && charge.isCounted {
            if let last = s.ledgerLast, last + configuration.minimumReloadInterval > limited {
                limited = last + configuration.minimumReloadInterval
                limitedCause = .spacing
            }
            let window = configuration.budgetWindow
            let back = configuration.budgetReturn(
                from: limited, learningEnds: s.addedAt + configuration.learningPeriod,
                allowance: { configuration.allowance(for: tier(s, at: max($0, now))) },
                nextAllowed: { s.ledgerNextAllowed(from: $0, limit: $1, window: window) })
            if back > limited {
                limited = back
                limitedCause = .budget
            }
        }
        if !limitedUnknown && charge == .free(.push) {
            let back = s.cold.pointee.pushLedger.nextAllowed(
                from: limited, limit: configuration.pushAllowance, window: configuration.budgetWindow)
            if back > limited {
                limited = back
                limitedCause = .pushBudget
            }
        }
        var wouldHave: Deferral?
        if developer {
            if limitedUnknown || limited > actual {
                wouldHave = Deferral(from: base, until: limitedUnknown ? nil : limited, cause: limitedCause ?? .budget)
            }
        } else {
            if limitedUnknown || !limited.isFinite { return nil }
            actual = limited
            actualCause = limitedCause
        }
        if case .free(let reason) = charge, reason.isCapped {
            let back = freeLedger.nextAllowed(
                from: actual, limit: configuration.freeReloadLimit, window: configuration.freeReloadWindow)
            if back > actual {
                if developer {
                    // Lifted too; reported unless a later limit already is.
                    if wouldHave == nil || (wouldHave?.until).map({ $0 < back }) == true {
                        wouldHave = Deferral(from: base, until: back, cause: .freeRateCap)
                    }
                } else {
                    actual = back
                    actualCause = .freeRateCap
                }
            }
        }
        guard actual.isFinite else { return nil }
        var latest = actual
        var deferral: Deferral?
        if actual > base, let cause = actualCause {
            deferral = Deferral(from: base, until: actual, cause: cause)
        } else if isPolicy {
            let ahead = max(0, base - (s.timelineReceivedAt ?? base))
            latest = actual + min(configuration.coalescingCap, configuration.coalescingFraction * ahead)
        }
        return Candidate(
            source: source, charge: charge, time: actual, latest: latest, deferral: deferral,
            wouldHaveBeenDeferred: wouldHave)
    }
}

/// A candidate reload of one instance with every limit applied, as plain
/// values: made and dropped several times per reload, it holds no string
/// (a ``PlannedReload``'s trigger may), so copying it copies bytes only.
struct Candidate {
    /// What asks for the reload.
    enum Source {
        /// The pending request (its trigger is the request's).
        case request
        /// A significant location change not yet served.
        case location
        /// The timeline's policy.
        case policy
    }

    var source: Source
    var charge: ReloadCharge
    var time: Double
    var latest: Double
    var deferral: Deferral?
    var wouldHaveBeenDeferred: Deferral?

    /// Whether this is a counted policy reload on time: no deferral, and
    /// nothing that developer mode lifted.
    var isPlainPolicy: Bool {
        source == .policy && charge == .counted && deferral == nil && wouldHaveBeenDeferred == nil
    }

    /// The plan, with its trigger read from `s` (the instance it was made for).
    func planned(_ s: InstanceView) -> PlannedReload {
        let trigger: ReloadTrigger =
            switch source {
            case .request: s.request?.trigger ?? .policy
            case .location: .significantLocationChange
            case .policy: .policy
            }
        return PlannedReload(
            time: time, latest: latest, trigger: trigger, charge: charge, attempt: s.consecutiveFailures,
            deferral: deferral, wouldHaveBeenDeferred: wouldHaveBeenDeferred)
    }
}
