// libFuzzer target: the control protocol's request decoder (one line from a
// client, as ControlServer.parse decodes it). Built and run by scripts/fuzz.
// Property: any bytes decode to a request or throw; a decoded request encodes
// and decodes back to itself.
import WidgetHostControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    guard let request = try? ControlCoding.decode(ControlRequest.self, from: line) else { return 0 }
    guard let encoded = try? ControlCoding.encode(request),
        let again = try? ControlCoding.decode(ControlRequest.self, from: Array(encoded.dropLast()))
    else { fatalError("a decoded request does not encode back: \(request)") }
    precondition(again == request, "round trip changed the request: \(request) → \(again)")
    return 0
}
