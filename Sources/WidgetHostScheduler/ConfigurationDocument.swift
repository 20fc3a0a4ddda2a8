import WidgetHostModel

extension SchedulerConfiguration {
    /// Reads a `"scheduler"` object of a scenario or daemon configuration:
    /// every field of `SchedulerConfiguration` may be given; absent fields keep
    /// their defaults, unknown ones are refused with their line.
    ///
    /// ```json
    /// "scheduler": { "minimumReloadInterval": 300, "frequentAllowance": 70, "developerMode": false }
    /// ```
    public init(document value: JSONValue?, field: String = "scheduler", reader: DocumentReader)
        throws(DocumentError)
    {
        self.init()
        guard let value else { return }
        let numbers: [String: WritableKeyPath<SchedulerConfiguration, Double>] = [
            "budgetWindow": \.budgetWindow, "learningPeriod": \.learningPeriod,
            "minimumReloadInterval": \.minimumReloadInterval, "freeReloadWindow": \.freeReloadWindow,
            "maximumJitter": \.maximumJitter, "coalescingFraction": \.coalescingFraction,
            "coalescingCap": \.coalescingCap, "backoffBase": \.backoffBase, "backoffCap": \.backoffCap,
            "developerReloadFloor": \.developerReloadFloor,
        ]
        let integers: [String: WritableKeyPath<SchedulerConfiguration, Int>] = [
            "learningAllowance": \.learningAllowance, "frequentAllowance": \.frequentAllowance,
            "occasionalAllowance": \.occasionalAllowance, "rareAllowance": \.rareAllowance,
            "frequentVisibleHours": \.frequentVisibleHours, "occasionalVisibleHours": \.occasionalVisibleHours,
            "freeReloadLimit": \.freeReloadLimit, "pushAllowance": \.pushAllowance,
        ]
        let flags: [String: WritableKeyPath<SchedulerConfiguration, Bool>] = [
            "deferPolicyReloadsWhileHidden": \.deferPolicyReloadsWhileHidden, "developerMode": \.developerMode,
        ]
        let allowed = (Array(numbers.keys) + Array(integers.keys) + Array(flags.keys)).sorted()
        for (name, member) in try reader.members(value, field, allowed: allowed) {
            let path = "\(field).\(name)"
            if let key = numbers[name] {
                let number = try reader.duration(member, path) ?? 0
                guard number >= 0 else { throw reader.fail(path, "must not be negative") }
                self[keyPath: key] = number
            } else if let key = integers[name] {
                self[keyPath: key] = try reader.integer(member, path, in: 0...1_000_000_000) ?? 0
            } else if let key = flags[name] {
                self[keyPath: key] = try reader.bool(member, path) ?? false
            }
        }
    }
}
