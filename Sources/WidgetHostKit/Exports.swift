// WidgetHostKit re-exports Foundation, as `import WidgetKit` does on Apple's
// platforms: `Date`, `Calendar`, `URL`, `JSONEncoder`, and also
// `UserDefaults`, `URLSession`, `CGSize`/`CGRect`/`CGFloat`, formatters and
// `Error.localizedDescription`, so that WidgetKit provider code compiles with
// `import WidgetKit` replaced by `import WidgetHostKit` and nothing else.
//
// Until SDK 1.2 it re-exported FoundationEssentials only, to load faster.
// The cost of the whole Foundation, measured (docs/swift-sdk.md, "What
// Foundation costs"): it is paid once per worker or fork server, at load,
// not per call.
@_exported import Foundation

// On Linux, URLSession and URLRequest live in FoundationNetworking (which
// loads libcurl): re-exported too, so network code compiles unchanged. A kind
// gets network access only with `needsNetwork` (`WH_KIND_NEEDS_NETWORK`).
#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
