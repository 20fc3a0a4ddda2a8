import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// The templates extension end to end: a real runner loads real plugins and
/// the host decodes what it sent.
@Suite(.serialized) struct TemplatesExtensionTests {
    func load(_ plugin: String) -> Result<PluginDescription, PluginFailure> {
        let engine = IsolationEngine(plugin: plugin)
        defer { engine.stop() }
        return engine.prepare(dataDirectory: Web.temporaryDirectory("data"))
    }

    @Test func firstPartyPluginsShipTemplatesForTheirKinds() throws {
        let countdown = try load(Web.plugin("Countdown")).get()
        #expect(countdown.templates.count == 4)
        let small = try #require(countdown.template(kind: "com.widgethost.countdown", family: .systemSmall))
        #expect(small.familyBits == 0)
        #expect(small.source.contains("{{days}}"))
        let inline = try #require(countdown.template(kind: "com.widgethost.countdown", family: .accessoryInline))
        #expect(inline.familyBits == WidgetFamily.accessoryInline.rawValue)
        for name in ["Character", "MarketHours"] {
            let plugin = try load(Web.plugin(name)).get()
            for kind in plugin.kinds {
                for family in kind.families {
                    #expect(plugin.template(kind: kind.id, family: family) != nil, "\(name) \(kind.id) \(family)")
                }
            }
        }
    }

    @Test func samplesInCAndRustShipTemplates() throws {
        let c = Web.shell("make -s -C '\(Web.repositoryRoot)/samples/c'")
        #expect(c.status == 0, "\(c.output)")
        let moon = try load(Web.repositoryRoot + "/samples/c/moonphase.so").get()
        #expect(moon.templates.count == 5)
        #expect(moon.template(kind: "org.example.word-clock", family: .accessoryInline)?.familyBits == 0x60)
        let rust = Web.shell("cd '\(Web.repositoryRoot)/samples/rust' && cargo build --offline --release -q 2>&1")
        try #require(rust.status == 0, "\(rust.output)")
        let tides = try load(Web.repositoryRoot + "/samples/rust/target/release/libtides.so").get()
        #expect(tides.templates.count == 3)
        #expect(
            tides.template(kind: "org.example.rust.tides", family: .systemMedium)?.source.contains("{{height}}") == true
        )
    }

    @Test func aPluginWithoutTheSymbolLoadsUnchanged() throws {
        let plain = try load(Web.plainFixture).get()
        #expect(plain.templates.isEmpty)
        #expect(plain.kinds.map(\.id) == ["test.fixture"])
    }

    @Test(arguments: [
        (1, "templates[0].kind_id", "test.nope"),
        (2, "templates[0].source", "invalid bytes"),
        (3, "templates[1].families", "0x03"),
        (4, "templates[0].families", "0x40"),
        (5, "widgethost_provider_templates()", "found 8"),
    ])
    func aBrokenTemplateListFailsTheLoadNamingTheField(variant: Int, field: String, found: String) throws {
        switch load(Web.hostile(variant)) {
        case .success: Issue.record("variant \(variant) loaded")
        case .failure(let failure):
            let text = "\(failure)"
            #expect(text.contains(field), "\(text)")
            #expect(text.contains(found), "\(text)")
        }
    }
}
