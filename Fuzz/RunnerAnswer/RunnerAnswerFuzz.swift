// libFuzzer target: what the host decodes from a runner (or from a worker
// that a plugin has taken over): the frame stream, a call's answer (RESULT,
// CALL_FAILED) and a load's answer (LOADED: the descriptor and its sections).
// Built and run by scripts/fuzz.
// Property: any bytes are decoded or refused with a typed failure; nothing
// traps, and an answer that is accepted obeys the result rules (dates within
// Bounds and sorted, a finite provider time).
import CWidgetHostSupport
import WidgetHostModel

@testable import WidgetHostIsolation

private let call = PluginCall(.timeline, kind: "k", family: .systemSmall, now: 1.8e9, dataDirectory: "/tmp")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRunnerAnswer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    switch selector % 4 {
    case 0:
        // The stream, fed in two pieces as reads deliver it.
        var decoder = FrameDecoder()
        let cut = body.isEmpty ? 0 : Int(selector) % (body.count + 1)
        decoder.append(body[..<cut])
        while let frame = try? decoder.next() { checkAnswer(frame) }
        decoder.append(body[cut...])
        while let frame = try? decoder.next() { checkAnswer(frame) }
    case 1:
        checkAnswer(WireFrame(type: UInt16(WH_MSG_RESULT.rawValue), payload: body))
    case 2:
        checkAnswer(WireFrame(type: UInt16(WH_MSG_CALL_FAILED.rawValue), payload: body))
    default:
        var reader = WireReader(body)
        if case .success(let plugin) = DescriptorDecoder.decode(&reader, path: "/fuzz/plugin.so") {
            precondition(!plugin.kinds.isEmpty, "a descriptor without kinds was accepted")
        }
    }
    return 0
}

private func checkAnswer(_ frame: WireFrame) {
    guard let answer = CallAnswer.decode(frame, for: call, plugin: nil) else { return }
    if let seconds = answer.providerSeconds { precondition(seconds.isFinite && seconds >= 0) }
    guard case .success(let result) = answer.outcome else { return }
    var previous = -Double.infinity
    for entry in result.entries {
        precondition(Bounds.isTime(entry.date), "an accepted entry date is out of bounds: \(entry.date)")
        precondition(entry.date >= previous, "accepted entries are not sorted")
        previous = entry.date
    }
    if case .after(let date) = result.policy { precondition(Bounds.isTime(date)) }
}
