import Testing
import WidgetHostModel

@testable import WidgetHostIsolation

/// A LOADED message is re-checked on the host: a plugin that writes on the
/// runner's channel can forge one. Found by the runner-answer fuzzer
/// (scripts/fuzz): a truncated LOADED was accepted as a plugin without kinds.
@Suite("Forged LOADED messages")
struct ForgedLoadedTests {
    /// A LOADED payload as the runner writes it (widgethost_wire.h), with
    /// `kinds` kinds of `parameters` parameters each.
    static func loaded(kinds: UInt32, parameters: UInt32 = 0, choices: UInt32 = 0) -> [UInt8] {
        var w = WireWriter()
        w.u32(1)  // abi_version
        w.u32(96)  // descriptor size
        for text in ["com.example.forged", "Forged", "1.0", "", "1.3.0"] { w.string(text) }
        w.u64(1000)  // load nanoseconds
        w.u32(1)  // threads
        w.u32(kinds)
        for index in 0..<min(kinds, 300) {
            for text in ["k\(index)", "Kind", ""] { w.string(text) }
            w.u32(1)  // families: systemSmall
            w.u32(0)  // flags
            w.u32(7)  // entry points
            w.u32(parameters)
            for p in 0..<min(parameters, 100) {
                w.string("p\(p)")
                w.u32(1)  // string
                w.u32(0)  // no default
                for text in ["", "", ""] { w.string(text) }  // default, summary, title
                w.u32(0)  // flags
                w.u32(choices)
                for c in 0..<min(choices, 300) {
                    w.string("c\(c)")
                    w.string("")
                }
            }
        }
        w.u32(0)  // no warm-up
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) -> Result<PluginDescription, PluginFailure> {
        var reader = WireReader(bytes)
        return DescriptorDecoder.decode(&reader, path: "/plugins/forged.so")
    }

    @Test func theRunnersMessageDecodes() throws {
        let plugin = try Self.decode(Self.loaded(kinds: 2, parameters: 1, choices: 2)).get()
        #expect(plugin.kinds.map(\.id) == ["k0", "k1"])
        #expect(plugin.kinds[0].parameters[0].choices.map(\.value) == ["c0", "c1"])
    }

    @Test(arguments: [
        (Self.loaded(kinds: 0), "declares 0 kinds"),
        (Self.loaded(kinds: 257), "declares 257 kinds"),
        (Self.loaded(kinds: 1, parameters: 65), "declares 65 parameters"),
        (Self.loaded(kinds: 1, parameters: 1, choices: 257), "declares 257 choices"),
        (Array(Self.loaded(kinds: 1).dropLast(6)), "is truncated"),
        (Array(Self.loaded(kinds: 2).prefix(40)), "is truncated"),
    ])
    func aForgedLoadedIsAProtocolViolation(bytes: [UInt8], detail: String) {
        guard case .failure(let failure) = Self.decode(bytes) else {
            Issue.record("a forged LOADED (\(detail)) was accepted")
            return
        }
        guard case .protocolViolation(let message) = failure.reason else {
            Issue.record("\(failure.reason)")
            return
        }
        #expect(message.contains(detail), "\(message)")
        #expect(!failure.isHostFault)
    }
}
