// WidgetHostKit re-exports the Foundation value types that provider code uses
// (`Date`, `Calendar`, `TimeInterval`, `URL`, `JSONEncoder`, ...), so that
// WidgetKit provider code compiles with `import WidgetKit` replaced by
// `import WidgetHostKit` and nothing else.
//
// It uses FoundationEssentials, not the full Foundation: loading Foundation
// costs ~6 ms per process on Linux, FoundationEssentials much less. A plugin
// that needs the rest (IANA time zones, `CGFloat`, formatters) can still
// `import Foundation` itself; the types are the same.
#if canImport(FoundationEssentials)
    @_exported import FoundationEssentials
#else
    @_exported import Foundation
#endif
