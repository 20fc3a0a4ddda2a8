import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// Every faulty fixture gives its exact typed outcome, leaves no process
/// behind, and the host keeps working afterwards.
@Suite("Fault fixtures")
struct FaultFixtureTests {
    /// Runs `fixture`'s entry point and checks the outcome with `check`.
    func expectFailure(
        _ fixture: String, _ entryPoint: EntryPoint = .timeline, timeout: Double? = nil, loadTimeout: Double = 5,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ check: (PluginFailure.Reason) -> Bool
    ) {
        let output = TestSupport.call(
            TestSupport.fixture(fixture), entryPoint, timeout: timeout, loadTimeout: loadTimeout)
        if let failure = output.failure {
            #expect(
                check(failure.reason), "\(fixture): unexpected outcome \(failure.reason)",
                sourceLocation: sourceLocation)
            #expect(
                failure.message.contains(fixture), "message must name the file: \(failure.message)",
                sourceLocation: sourceLocation)
            #expect(!failure.hint.isEmpty, sourceLocation: sourceLocation)
        } else {
            Issue.record("\(fixture): expected a failure, got a result", sourceLocation: sourceLocation)
        }
        TestSupport.expectNoSurvivors(output, sourceLocation: sourceLocation)
        TestSupport.expectHostStillWorks(sourceLocation: sourceLocation)
    }

    @Test func goodPluginAnswersEveryEntryPointAndItsOutputIsCaptured() throws {
        for entryPoint in EntryPoint.allCases {
            let output = TestSupport.call(TestSupport.fixture("good"), entryPoint)
            #expect(output.failure == nil)
            let result = try #require(output.result)
            #expect(result.entries.count == (entryPoint == .timeline ? 3 : 1))
            #expect(result.warnings.isEmpty)
            if entryPoint == .timeline {
                #expect(result.policy == .atEnd)
                #expect(result.entries[1].date - result.entries[0].date == 3600)
            }
            if entryPoint == .snapshot {
                #expect(output.log.stdout.contains("hello from good"))
                #expect(output.log.stderr.contains("warn from good"))
            }
            TestSupport.expectNoSurvivors(output)
        }
    }

    @Test func asyncCompletionFromAnotherThreadIsAccepted() throws {
        let output = TestSupport.call(TestSupport.fixture("async_good"))
        #expect(output.failure == nil)
        #expect(try #require(output.result).entries.count >= 1)
    }

    @Test func segfaultIsReportedAsACrashWithTheSignalName() {
        expectFailure("crash_segv", .snapshot) {
            if case .crashed(.call(.snapshot), SIGSEGV, let name) = $0 { return name.hasPrefix("SIGSEGV") }
            return false
        }
    }

    @Test func abortIsReportedAsSIGABRT() {
        expectFailure("abort") {
            if case .crashed(.call(.timeline), SIGABRT, _) = $0 { return true }
            return false
        }
    }

    @Test func exitMidCallIsReportedAsExitedEarly() {
        expectFailure("exit_early") { $0 == .exitedEarly(phase: .call(.timeline), status: 0) }
    }

    @Test func busyLoopTimesOutAndItsGroupIsKilled() {
        expectFailure("hang", timeout: 0.3) { $0 == .timedOut(phase: .call(.timeline), limit: 0.3) }
    }

    @Test func sleepingPastTheDeadlineTimesOut() {
        expectFailure("sleep_forever", timeout: 0.3) { $0 == .timedOut(phase: .call(.timeline), limit: 0.3) }
    }

    @Test func neverCompletingTimesOut() {
        expectFailure("never_completes", timeout: 0.3) { $0 == .timedOut(phase: .call(.timeline), limit: 0.3) }
    }

    @Test func malformedJSONContentIsNamedWithItsEntry() {
        expectFailure("malformed_json") {
            if case .malformedResult(let what) = $0 { return what.contains("entries[0].content_json is not JSON") }
            return false
        }
    }

    /// A key twice in one entry's content: a reader would keep one of the
    /// two values, which one is up to it; the answer is refused as malformed,
    /// naming the key and where it appears again.
    @Test func aDuplicateKeyInContentIsAMalformedAnswer() {
        expectFailure("duplicate_key") {
            guard case .malformedResult(let what) = $0 else { return false }
            return what.contains(
                #"entries[0].content_json is JSON the host refuses (duplicate key "mood" at line 2, column 2 (mood), first at line 1, column 2"#
            )
        }
    }

    @Test func contentThatIsNotAnObjectIsRefused() {
        expectFailure("content_not_object") {
            if case .malformedResult(let what) = $0 { return what.contains("JSON array, expected an object") }
            return false
        }
    }

    @Test func unsortedDatesAreRefused() {
        expectFailure("unsorted_dates") {
            if case .malformedResult(let what) = $0 { return what.contains("must be sorted by date") }
            return false
        }
    }

    @Test func nanDateIsRefused() {
        expectFailure("nan_date") {
            if case .malformedResult(let what) = $0 { return what.contains(".date is nan") }
            return false
        }
    }

    @Test func tooManyEntriesIsRefusedWithTheLimit() {
        expectFailure("too_many_entries") {
            $0 == .resultTooLarge(what: "entry_count", found: 401, limit: UInt64(WidgetHostLimits.maxEntries))
        }
    }

    @Test func oversizedContentIsRefusedWithTheLimit() {
        expectFailure("too_large") {
            if case .resultTooLarge("bytes of entry content", let found, let limit) = $0 {
                return found > limit && limit == UInt64(WidgetHostLimits.maxResultBytes)
            }
            return false
        }
    }

    @Test func pluginErrorKeepsCodeAndMessage() {
        expectFailure("plugin_error") { $0 == .pluginError(code: 42, message: "upstream returned 503") }
    }

    @Test func nullResultIsMalformed() {
        expectFailure("null_result") {
            if case .malformedResult(let what) = $0 { return what.contains("NULL wh_result") }
            return false
        }
    }

    @Test func wrongABIVersionNamesTheField() {
        expectFailure("wrong_abi") {
            $0
                == .abiMismatch(
                    field: "abi_version", expected: "1..1", found: "2",
                    detail: "the plugin chose an ABI version the host did not offer")
        }
    }

    @Test func badMagicNamesTheField() {
        expectFailure("bad_magic") {
            if case .abiMismatch("magic", _, "0x12345678", _) = $0 { return true }
            return false
        }
    }

    @Test func smallDescriptorNamesStructSize() {
        expectFailure("small_descriptor") {
            if case .abiMismatch("struct_size", _, "8", _) = $0 { return true }
            return false
        }
    }

    @Test func refusalCarriesThePluginsReason() {
        expectFailure("refuses") {
            $0 == .pluginRefused(reason: "this plugin needs widgethost ABI 3 or newer", offered: "1..1")
        }
    }

    @Test func missingEntryPointIsNamed() throws {
        expectFailure("missing_entry_point") { $0 == .missingEntryPoint(kind: "test.fixture", entryPoint: .timeline) }
        // The kind's other entry points still work.
        #expect(TestSupport.call(TestSupport.fixture("missing_entry_point"), .placeholder).failure == nil)
    }

    @Test func noEntryFunction() {
        expectFailure("no_entry_function") {
            if case .noEntryFunction(let dlerror) = $0 { return dlerror.contains("widgethost_provider_entry") }
            return false
        }
    }

    @Test func entryReturningNull() {
        expectFailure("entry_returns_null") { $0 == .entryReturnedNull }
    }

    @Test func unresolvedSymbolIsNamed() {
        expectFailure("unresolved_symbol") {
            if case .unresolvedSymbol("wh_fixture_does_not_exist", let dlerror) = $0 {
                return dlerror.contains("undefined symbol")
            }
            return false
        }
    }

    @Test func missingDependencyIsNamed() {
        expectFailure("missing_dependency") {
            if case .missingDependency("libwhfixturedep.so", let dlerror) = $0 {
                return dlerror.contains("cannot open shared object file")
            }
            return false
        }
    }

    @Test func crashInAConstructorIsALoadCrash() {
        expectFailure("ctor_crash") {
            if case .crashed(.load, SIGSEGV, _) = $0 { return true }
            return false
        }
    }

    @Test func hangInAConstructorIsALoadTimeout() {
        expectFailure("ctor_hang", loadTimeout: 0.3) { $0 == .timedOut(phase: .load, limit: 0.3) }
    }

    @Test func textFileIsNotELF() {
        expectFailure("not_elf") {
            if case .notELF(let found) = $0 { return found.contains("starts with") }
            return false
        }
    }

    @Test func emptyFileIsNotELF() {
        expectFailure("empty") {
            if case .notELF(let found) = $0 { return found.contains("empty") }
            return false
        }
    }

    @Test func otherArchitectureIsWrongMachine() {
        expectFailure("wrong_machine") {
            if case .wrongMachine(let expected, let found) = $0 {
                return expected.contains("x86-64") && found.contains("AArch64")
            }
            return false
        }
    }

    @Test func missingFileIsFileNotFound() {
        let output = TestSupport.call(TestSupport.fixtures + "/does-not-exist.so")
        #expect(output.failure?.reason == .fileNotFound)
        #expect(output.failure?.message.contains("does-not-exist.so") == true)
    }

    @Test func grandchildDoesNotOutliveTheCall() throws {
        let output = TestSupport.call(TestSupport.fixture("grandchild"))
        #expect(output.failure == nil)
        TestSupport.expectNoSurvivors(output)
    }

    @Test func warningsDoNotFailTheCall() throws {
        let doubled = TestSupport.call(TestSupport.fixture("double_complete"))
        #expect(doubled.failure == nil)
        #expect(try #require(doubled.result).warnings.contains { $0.contains("called 2 times") })

        let past = TestSupport.call(TestSupport.fixture("after_in_past"))
        #expect(past.failure == nil)
        #expect(try #require(past.result).warnings.contains { $0.contains("in the past") })

        let close = TestSupport.call(TestSupport.fixture("close_entries"))
        #expect(close.failure == nil)
        #expect(try #require(close.result).warnings.contains { $0.contains("at least 5 minutes apart") })
    }

    @Test func hostSideChecksRefuseUnknownKindFamilyAndConfiguration() {
        let good = TestSupport.fixture("good")
        #expect(
            TestSupport.call(good, kind: "nope").failure?.reason
                == .unknownKind(kind: "nope", available: ["test.fixture"]))
        let family = TestSupport.call(good, family: .accessoryInline).failure?.reason
        #expect(
            family
                == .unsupportedFamily(
                    kind: "test.fixture", family: .accessoryInline, supported: [.systemSmall, .systemMedium]))
        let config = TestSupport.call(good, configuration: ["nope": "1"]).failure
        #expect(config?.code == "badConfiguration")
    }
}

/// The plugin's wall clock reads the call's time, so WidgetKit-style code
/// that calls `Date()` instead of reading `context->now` sees the virtual
/// time of a simulation.
@Suite("Virtual wall clock")
struct VirtualWallClockTests {
    @Test func wallClockFunctionsReadTheCallsTime() throws {
        let future = 1_893_456_000.0  // 2030-01-01T00:00:00Z
        let call = PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: future, dataDirectory: TestSupport.dataDirectory
        )
        let output = IsolatedRunner.run(plugin: TestSupport.fixture("wall_clock"), call: call)
        let entry = try #require(output.result?.entries.first)
        let content = try #require(JSONValue.parse(entry.contentJSON).objectMembers)
        for (name, value) in content {
            guard case .number(let seconds) = value else {
                Issue.record("\(name) is not a number")
                continue
            }
            // The call starts right after `now` is set: allow a generous minute on a busy machine.
            #expect(seconds >= future && seconds < future + 60, "\(name) read \(seconds)")
        }
        #expect(content.count == 3)
    }
}
