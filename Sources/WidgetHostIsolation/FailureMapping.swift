import CWidgetHostSupport
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns the runner's LOAD_FAILED codes into typed reasons.
enum LoadFailureMapping {
    static func reason(
        code: UInt32, detail: String, field: String, expected: String, found: String,
        options: IsolationOptions
    ) -> PluginFailure.Reason {
        switch code {
        case WH_LOAD_FILE_NOT_FOUND.rawValue: return .fileNotFound
        case WH_LOAD_NOT_READABLE.rawValue: return .notReadable(detail)
        case WH_LOAD_NOT_ELF.rawValue: return .notELF(found: found.isEmpty ? detail : found)
        case WH_LOAD_WRONG_MACHINE.rawValue: return .wrongMachine(expected: expected, found: found)
        case WH_LOAD_NOT_SHARED_OBJECT.rawValue: return .notSharedObject(found: found)
        case WH_LOAD_MISSING_DEPENDENCY.rawValue:
            return .missingDependency(library: missingLibrary(in: detail), dlerror: detail)
        case WH_LOAD_UNRESOLVED_SYMBOL.rawValue:
            return .unresolvedSymbol(symbol: undefinedSymbol(in: detail), dlerror: detail)
        case WH_LOAD_DLOPEN_FAILED.rawValue: return .dlopenFailed(dlerror: detail)
        case WH_LOAD_NO_ENTRY_FUNCTION.rawValue: return .noEntryFunction(dlerror: detail)
        case WH_LOAD_ENTRY_RETURNED_NULL.rawValue: return .entryReturnedNull
        case WH_LOAD_ABI_MISMATCH.rawValue:
            return .abiMismatch(field: field, expected: expected, found: found, detail: detail)
        case WH_LOAD_PLUGIN_REFUSED.rawValue:
            let range = options.abiRange
            return .pluginRefused(reason: detail, offered: "\(range.lowerBound)..\(range.upperBound)")
        case WH_LOAD_INVALID_DESCRIPTOR.rawValue:
            return .invalidDescriptor(field: field, expected: expected, found: found, detail: detail)
        case WH_LOAD_SANDBOX_FAILED.rawValue: return .sandboxFailed(detail)
        default: return .protocolViolation("unknown load failure code \(code): \(detail)")
        }
    }

    /// "libfoo.so.1: cannot open shared object file: ..." -> "libfoo.so.1".
    static func missingLibrary(in dlerror: String) -> String {
        // dlerror: "<plugin>: <library>: cannot open shared object file: No such file or directory"
        let parts = dlerror.split(separator: ": ", omittingEmptySubsequences: false).map(String.init)
        if let index = parts.firstIndex(where: { $0.hasPrefix("cannot open shared object file") }), index > 0 {
            return parts[index - 1]
        }
        return "(see dlerror)"
    }

    /// "...: undefined symbol: foo" -> "foo".
    static func undefinedSymbol(in dlerror: String) -> String {
        guard let range = dlerror.firstRange(of: "undefined symbol: ") else { return "(see dlerror)" }
        let rest = dlerror[range.upperBound...]
        return String(rest.prefix { $0 != "," && $0 != " " && $0 != "\t" })
    }
}

/// Turns the runner's CALL_FAILED codes into typed reasons.
enum CallFailureMapping {
    static func reason(
        code: UInt32, detail: String, found: UInt64, limit: UInt64, call: PluginCall,
        plugin: PluginDescription?
    ) -> PluginFailure.Reason {
        switch code {
        case WH_CALL_UNKNOWN_KIND.rawValue:
            return .unknownKind(kind: call.kind, available: plugin?.kinds.map(\.id) ?? [])
        case WH_CALL_MISSING_ENTRY_POINT.rawValue:
            return .missingEntryPoint(kind: call.kind, entryPoint: call.entryPoint)
        case WH_CALL_NULL_RESULT.rawValue:
            return .malformedResult(what: "the completion was called with a NULL wh_result")
        case WH_CALL_BAD_RESULT_STRUCT.rawValue:
            return .malformedResult(what: "\(detail) (found \(found), expected at least \(limit))")
        case WH_CALL_TOO_MANY_ENTRIES.rawValue:
            return .resultTooLarge(what: "entry_count", found: found, limit: limit)
        case WH_CALL_RESULT_TOO_LARGE.rawValue:
            return .resultTooLarge(what: "bytes of entry content", found: found, limit: limit)
        default:
            return .protocolViolation("unknown call failure code \(code): \(detail)")
        }
    }
}

/// WH_MSG_FORBIDDEN_SYSCALL: which call the runner's SIGSYS handler saw
/// trapped, and in which process. Written from inside the sandbox, so it is
/// used only to name the call of a process that did die of SIGSYS.
struct ForbiddenSyscallReport {
    var pid: pid_t
    var syscall: PluginFailure.ForbiddenSyscall

    static func decode(_ payload: [UInt8]) -> ForbiddenSyscallReport? {
        var reader = WireReader(payload)
        let pid = pid_t(bitPattern: reader.u32())
        let number = Int32(bitPattern: reader.u32())
        let architecture = reader.u32()
        let name = reader.string()
        guard !reader.malformed else { return nil }
        return ForbiddenSyscallReport(
            pid: pid,
            syscall: PluginFailure.ForbiddenSyscall(
                name: name.isEmpty ? nil : name, number: number, architecture: architecture))
    }
}
