import WidgetHostIsolation
import WidgetHostScheduler

extension ReloadOutcome {
    /// How a reload ended, from its plugin call's output: the one mapping
    /// the daemon and `simulate` share. A timeline is a success; a timeout or
    /// any other failure of the plugin is its failure; a fault of the host's
    /// own (no runner, out of descriptors, memory or processes:
    /// ``PluginFailure/isHostFault``) means the plugin was not called, so the
    /// reload is not charged nor counted against the instance, and is held
    /// for the configuration's `minimumReloadInterval` (at least a second,
    /// so that a host out of descriptors is not asked again at once).
    ///
    /// ```swift
    /// let outcome = ReloadOutcome(output, at: now, configuration: configuration.scheduler)
    /// scheduler.complete(id, with: outcome, at: now)
    /// ```
    public init(_ output: CallOutput, at now: Double, configuration: SchedulerConfiguration) {
        let hostFaultRetryAt = now + max(1, configuration.minimumReloadInterval)
        if let result = output.result {
            self = .success(result.timeline)
        } else if let failure = output.failure, failure.isHostFault {
            self = .notCalled(reason: failure.message, retryAt: hostFaultRetryAt)
        } else if case .timedOut? = output.failure?.reason {
            self = .timedOut
        } else {
            self = .failure(reason: output.failure?.message ?? "no result")
        }
    }
}
