/// The files `widgethost new` writes, per language.
struct ProjectTemplate {
    let language: ProjectLanguage
    let project: ProjectName

    /// The command that builds the project, run in its directory.
    var buildCommand: String {
        switch language {
        case .swift: "swift build -c release"
        case .c: "make"
        case .rust: "cargo build --release --offline"
        }
    }

    /// The plugin the build makes, relative to the project's directory.
    var libraryPath: String {
        switch language {
        case .swift: ".build/release/lib\(project.identifier).so"
        case .c: "./\(project.identifier).so"
        case .rust: "target/release/lib\(project.identifier).so"
        }
    }

    /// Path (relative to the project) to text, for `language`.
    static func files(language: ProjectLanguage, project: ProjectName, pluginID: String, sdk: SDKLocation) throws
        -> [String: String]
    {
        let template = ProjectTemplate(language: language, project: project)
        var files = ["README.md": template.readme(pluginID: pluginID, sdk: sdk)]
        switch language {
        case .swift:
            files["Package.swift"] = template.swiftManifest(sdk: sdk)
            files["Sources/\(project.identifier)/Provider.swift"] = template.swiftProvider
            files["Sources/\(project.identifier)/Export.swift"] = template.swiftExport(pluginID: pluginID)
            files[".gitignore"] = ".build/\nPackage.resolved\n"
        case .c:
            files["Makefile"] = template.makefile(sdk: sdk)
            files["\(project.identifier).c"] = template.cSource(pluginID: pluginID)
            files[".gitignore"] = "*.so\n*.o\n"
        case .rust:
            files["Cargo.toml"] = template.cargoManifest(sdk: sdk)
            files["src/lib.rs"] = template.rustSource(pluginID: pluginID)
            files[".gitignore"] = "target/\n"
        }
        return files
    }

    func readme(pluginID: String, sdk: SDKLocation) -> String {
        """
        # \(project.name)

        A widgethost timeline-provider plugin in \(language.title), written by
        `widgethost new --\(language.rawValue) \(project.name)`. One widget kind,
        `\(pluginID)`: a placeholder, a snapshot, and a timeline of four entries
        fifteen minutes apart that asks for the next one at its end.

        ```sh
        \(buildCommand)
        widgethost load \(libraryPath)
        widgethost timeline \(libraryPath) --kind \(pluginID) --now +1h
        ```

        Every date comes from the host's time (never the system clock), entries
        are JSON objects at least five minutes apart, and each call runs in a
        fresh sandboxed process: the rules are in widgethost's docs/abi.md.

        """
    }

    // MARK: Swift

    func swiftManifest(sdk: SDKLocation) -> String {
        """
        // swift-tools-version: 6.1
        import PackageDescription

        let package = Package(
            name: "\(project.name)",
            products: [
                // The plugin: \(libraryPath)
                .library(name: "\(project.identifier)", type: .dynamic, targets: ["\(project.identifier)"])
            ],
            dependencies: [
                // The widgethost Swift SDK alone (no dependencies of its own).
                .package(path: "\(sdk.swiftPackage)")
            ],
            targets: [
                .target(
                    name: "\(project.identifier)",
                    dependencies: [.product(name: "WidgetHostKit", package: "\(sdk.swiftPackageIdentity)")],
                    swiftSettings: [.swiftLanguageMode(.v6)]
                )
            ]
        )

        """
    }

    var swiftProvider: String {
        """
        import WidgetHostKit

        /// What people set per widget (WidgetKit's configuration intent): each
        /// @Parameter becomes a parameter of the kind, which `widgethost load`
        /// lists and the daemon's configuration sets.
        struct \(typeName)Intent: WidgetConfigurationIntent {
            static let title: LocalizedStringResource = "\(project.name)"
            static let description = IntentDescription("What the widget says.")

            @Parameter(title: "Message", default: "Hello from \(project.name)")
            var message: String
        }

        /// One moment of the widget: stored properties become the entry's JSON.
        struct \(typeName)Entry: TimelineEntry, Codable {
            var date: Date
            var message: String
            var minute: Int
        }

        /// Answers the host's calls (WidgetKit's AppIntentTimelineProvider).
        struct \(typeName)Provider: AppIntentTimelineProvider {
            func placeholder(in context: Context) -> \(typeName)Entry {
                \(typeName)Entry(date: context.date, message: "Hello", minute: 0)
            }

            func snapshot(for configuration: \(typeName)Intent, in context: Context) async -> \(typeName)Entry {
                \(typeName)Entry(date: context.date, message: configuration.message, minute: 0)
            }

            func timeline(for configuration: \(typeName)Intent, in context: Context) async -> Timeline<\(typeName)Entry> {
                // context.date is the host's time: never read the system clock.
                let entries = (0..<4).map { step in
                    \(typeName)Entry(
                        date: context.date.addingTimeInterval(Double(step) * 15 * 60),
                        message: configuration.message, minute: step * 15)
                }
                return Timeline(entries: entries, policy: .atEnd)
            }
        }

        """
    }

    func swiftExport(pluginID: String) -> String {
        """
        import WidgetHostKit

        /// The plugin's one exported C symbol: describes the kinds to the host.
        @_cdecl("widgethost_provider_entry")
        public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
            WidgetHostExport.descriptor(
                offer: offer,
                plugin: PluginInfo(id: "\(pluginID)", name: "\(project.name)", version: "0.1.0"),
                kinds: [
                    WidgetKind(
                        "\(pluginID)",
                        displayName: "\(project.name)",
                        description: "Says hello every fifteen minutes.",
                        families: [.systemSmall, .systemMedium],
                        provider: \(typeName)Provider())
                ])
        }

        """
    }

    /// `weather_widget` -> `WeatherWidget`.
    var typeName: String {
        project.identifier.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    // MARK: C

    func makefile(sdk: SDKLocation) -> String {
        """
        # Builds \(project.identifier).so. WIDGETHOST_CFLAGS finds <widgethost/provider.h>
        # (written by `widgethost new`; `pkg-config --cflags widgethost-provider` works too).
        WIDGETHOST_CFLAGS ?= -I\(sdk.includeDirectory)
        CC ?= cc
        CFLAGS ?= -O2
        WARNINGS := -std=c99 -Wall -Wextra -pedantic -Werror

        all: \(project.identifier).so

        \(project.identifier).so: \(project.identifier).c
        \t$(CC) -shared -fPIC -Wl,--no-undefined $(WARNINGS) $(CFLAGS) $(WIDGETHOST_CFLAGS) -o $@ $<

        clean:
        \trm -f \(project.identifier).so

        .PHONY: all clean

        """
    }

    func cSource(pluginID: String) -> String {
        """
        /*
         * \(project.identifier).c — a widgethost timeline-provider plugin
         * (<widgethost/provider.h>, docs/abi.md).
         */
        #include <widgethost/provider.h>

        #include <stdio.h>

        static void placeholder(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
            wh_complete_entry(complete, completion_context, ctx->now, "{\\"message\\":\\"Hello\\",\\"minute\\":0}");
        }

        static void snapshot(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
            wh_complete_entry(complete, completion_context, ctx->now,
                              "{\\"message\\":\\"Hello from \(project.name)\\",\\"minute\\":0}");
        }

        static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
            char content[4][96];
            wh_entry entries[4];
            unsigned step;
            for (step = 0; step < 4; step++) {
                snprintf(content[step], sizeof content[step], "{\\"message\\":\\"Hello from \(project.name)\\",\\"minute\\":%u}",
                         step * 15);
                /* ctx->now is the host's time: never read the system clock. */
                entries[step] = wh_make_entry(ctx->now + step * 15 * 60.0, content[step]);
            }
            /* The host copies everything during this call: stack buffers are fine. */
            wh_complete_entries(complete, completion_context, entries, 4, WH_POLICY_AT_END, 0.0);
        }

        static const wh_kind kinds[] = {
            WH_KIND("\(pluginID)", "\(project.name)", "Says hello every fifteen minutes.",
                    WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM, placeholder, snapshot, timeline),
        };

        /* The descriptor, a refusal for hosts without ABI 1, and widgethost_provider_entry. */
        WH_DEFINE_PROVIDER("\(pluginID)", "\(project.name)", "0.1.0", NULL, kinds, NULL)

        """
    }

    // MARK: Rust

    func cargoManifest(sdk: SDKLocation) -> String {
        """
        [package]
        name = "\(project.name)"
        version = "0.1.0"
        edition = "2021"
        publish = false

        [lib]
        name = "\(project.identifier)"
        # A C-ABI shared object for widgethost: \(libraryPath)
        crate-type = ["cdylib"]

        [dependencies]
        # The widgethost crate, by path: no crate registry needed.
        widgethost = { path = "\(sdk.rustCrate)" }

        """
    }

    func rustSource(pluginID: String) -> String {
        """
        //! A widgethost timeline-provider plugin (the widgethost crate, docs/abi.md).

        use widgethost::{Context, Entry, Families, Kind, Plugin, ProviderError, ReloadPolicy, Timeline, TimelineProvider};

        struct \(typeName);

        impl TimelineProvider for \(typeName) {
            fn placeholder(&self, context: &Context) -> Entry {
                Entry::new(context.now, r#"{"message":"Hello","minute":0}"#)
            }

            fn snapshot(&self, context: &Context) -> Result<Entry, ProviderError> {
                Ok(Entry::new(context.now, r#"{"message":"Hello from \(project.name)","minute":0}"#))
            }

            fn timeline(&self, context: &Context) -> Result<Timeline, ProviderError> {
                // context.now is the host's time: never read the system clock.
                let entries = (0..4)
                    .map(|step| {
                        let content = format!(r#"{{"message":"Hello from \(project.name)","minute":{}}}"#, step * 15);
                        Entry::new(context.now + f64::from(step) * 15.0 * 60.0, content)
                    })
                    .collect();
                Ok(Timeline::new(entries, ReloadPolicy::AtEnd))
            }
        }

        static PLUGIN: Plugin = Plugin {
            id: "\(pluginID)",
            name: "\(project.name)",
            version: "0.1.0",
            vendor: None,
            // Builder methods add the rest: .parameters(&PARAMETERS),
            // .needs_network(), .deterministic(), .fresh_process(), .push().
            kinds: &[Kind::new(
                "\(pluginID)",
                "\(project.name)",
                Families::SYSTEM_SMALL.with(Families::SYSTEM_MEDIUM),
                &\(typeName),
            )
            .description("Says hello every fifteen minutes.")],
            warm_up: None,
        };

        widgethost::export_plugin!(PLUGIN);

        """
    }
}
