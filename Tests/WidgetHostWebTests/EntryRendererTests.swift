import Testing
import WidgetHostABI
import WidgetHostModel

@testable import WidgetHostWeb

struct EntryRendererTests {
    let renderer = EntryRenderer()

    func entry(_ json: String) -> EntryRecord { EntryRecord(date: 1_790_000_000, contentJSON: json) }

    @Test func theOneSizeTableIsWidgetKitsAndTheABIs() {
        let abi: [WidgetFamily: (Double, Double)] = [
            .systemSmall: (WH_SIZE_SYSTEM_SMALL_W, WH_SIZE_SYSTEM_SMALL_H),
            .systemMedium: (WH_SIZE_SYSTEM_MEDIUM_W, WH_SIZE_SYSTEM_MEDIUM_H),
            .systemLarge: (WH_SIZE_SYSTEM_LARGE_W, WH_SIZE_SYSTEM_LARGE_H),
            .systemExtraLarge: (WH_SIZE_SYSTEM_EXTRA_LARGE_W, WH_SIZE_SYSTEM_EXTRA_LARGE_H),
            .accessoryCircular: (WH_SIZE_ACCESSORY_CIRCULAR_W, WH_SIZE_ACCESSORY_CIRCULAR_H),
            .accessoryRectangular: (WH_SIZE_ACCESSORY_RECTANGULAR_W, WH_SIZE_ACCESSORY_RECTANGULAR_H),
            .accessoryInline: (WH_SIZE_ACCESSORY_INLINE_W, WH_SIZE_ACCESSORY_INLINE_H),
        ]
        for family in WidgetFamily.allCases {
            let box = FamilyBox(family)
            #expect(Double(box.width) == abi[family]!.0 && Double(box.height) == abi[family]!.1, "\(family)")
        }
        #expect(FamilyBox(.systemSmall).width == 170 && FamilyBox(.systemMedium).width == 364)
        #expect(FamilyBox(.systemLarge).height == 382 && FamilyBox(.accessoryInline).height == 26)
    }

    @Test func aTemplateSeesTheMembersEscapedAndTheExtras() {
        let template = TemplateDescription(
            kind: "k", familyBits: 0,
            source:
                "<p>{{title}}</p><i>{{_family}} {{_width}}x{{_height}} {{_date}}</i>{{#items}}<b>{{n}}</b>{{/items}}")
        let widget = renderer.render(
            entry: entry(#"{"title":"<script>x</script>","items":[{"n":1},{"n":2.5}]}"#), family: .systemMedium,
            template: template)
        #expect(widget.usedTemplate)
        #expect(widget.document.contains("<p>&lt;script&gt;x&lt;/script&gt;</p>"))
        #expect(widget.document.contains("<i>systemMedium 364x170 2026-09-21T"))
        #expect(widget.document.contains("<b>1</b><b>2.5</b>"))
    }

    @Test func withoutATemplateTheGenericCardShowsEveryField() {
        let widget = renderer.render(
            entry: entry(#"{"status":"open","count":3,"nested":{"a":[1,2]}}"#), family: .systemSmall, template: nil)
        #expect(!widget.usedTemplate)
        for shown in ["<dt>status</dt><dd>open</dd>", "<dt>count</dt><dd>3</dd>", "<dt>nested</dt>"] {
            #expect(widget.document.contains(shown), "\(shown)")
        }
    }

    @Test func aTemplateThatDoesNotParseFallsBackToTheCardAndSaysWhy() {
        let widget = renderer.render(
            entry: entry(#"{"a":1}"#), family: .systemSmall,
            template: TemplateDescription(kind: "k", familyBits: 0, source: "{{#open}}never closed"))
        #expect(!widget.usedTemplate)
        #expect(widget.templateProblem?.contains("does not parse") == true)
        #expect(widget.document.contains("wh-problem") && widget.document.contains("<dt>a</dt>"))
    }

    @Test func everyWidgetIsASandboxedFrameWithItsOwnPolicyAndSize() {
        let widget = renderer.render(
            entry: entry(#"{"x":"\" onload=\"alert(1)"}"#), family: .accessoryCircular,
            template: TemplateDescription(kind: "k", familyBits: 0, source: "{{{x}}}<script>alert(2)</script>"))
        #expect(widget.frame.hasPrefix("<iframe class=\"wh-widget\" sandbox=\"\" "))
        #expect(widget.frame.contains("width=\"76\" height=\"76\""))
        // The document is inside one attribute: no raw quote or angle bracket escapes it.
        let srcdoc = widget.frame.components(separatedBy: "srcdoc=\"")[1].dropLast("\"></iframe>".count)
        #expect(!srcdoc.contains("\"") && !srcdoc.contains("<") && !srcdoc.contains(">"))
        #expect(widget.document.contains("Content-Security-Policy\" content=\"default-src 'none'"))
        #expect(!EntryRenderer.framePolicy.contains("script"))
    }
}
