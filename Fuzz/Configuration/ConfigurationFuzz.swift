// libFuzzer target: the configuration parser's engine (DocumentReader: JSON
// with line:column, integers from their literal, durations within Bounds)
// and the "scheduler" section. Built and run by scripts/fuzz.
// Property: any text is read or refused with a DocumentError; nothing traps,
// and every number that is accepted is within its bounds.
import WidgetHostModel
import WidgetHostScheduler

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let reader = try? DocumentReader(file: "fuzz.json", text: text, documentation: "docs/daemon.md") else {
        return 0
    }
    if let top = try? reader.members(reader.root, "(top level)", allowed: ["scheduler", "n", "d", "instances"]) {
        if let n = try? reader.integer(top["n"], "n", in: 1...1_000_000) {
            precondition((1...1_000_000).contains(n))
        }
        if let d = try? reader.duration(top["d"], "d") { precondition(Bounds.isDuration(d)) }
        if let scheduler = try? SchedulerConfiguration(document: top["scheduler"], reader: reader) {
            precondition(Bounds.isDuration(scheduler.minimumReloadInterval))
            precondition((0...1_000_000_000).contains(scheduler.frequentAllowance))
        }
        _ = try? reader.array(top["instances"], "instances")
    }
    return 0
}
