import Testing
import WidgetHostModel

@Suite("JSONValue.parse")
struct JSONValueTests {
    @Test func parsesEscapesNumbersNestingAndSortsMembers() throws {
        let text = #"{"b":[1,2.5,-0.5e2,true,false,null,{}],"a":"x\"\u00e9\ud83d\ude00\n\/"}"#
        let expected = JSONValue.object([
            ("a", .string("x\"é😀\n/")),
            ("b", .array([.number(1), .number(2.5), .number(-50), .bool(true), .bool(false), .null, .object([])])),
        ])
        #expect(try JSONValue.parse(text) == expected)
        #expect(try JSONValue.parse(" \"s\" ") == .string("s"))
        #expect(try JSONValue.parse("[]") == .array([]))
    }

    @Test func rejectsWhatIsNotJSON() {
        for text in ["[01]", "{'a':1}", "[1 2]", "\"\\x\"", "", "{\"a\":1} x", "nul", "[1.]", "-"] {
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try JSONValue.parse(text) }
        }
    }
}
