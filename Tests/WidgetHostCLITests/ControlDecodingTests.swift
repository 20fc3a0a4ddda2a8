import Testing
import WidgetHostControl
import WidgetHostModel

/// How a request line that is JSON but not a request is explained: the
/// field, the type expected and the type found (JSONDecoder's "The data
/// couldn't be read because it isn't in the correct format" named none).
@Suite("Control request decoding")
struct ControlDecodingTests {
    func problem(_ line: String) -> String? {
        do {
            _ = try ControlCoding.decode(ControlRequest.self, from: Array(line.utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aFieldOfTheWrongTypeIsNamedWithWhatItTakesAndWhatItHas() {
        #expect(
            problem(#"{"v":2,"op":"status","limit":"10"}"#)
                == #"field "limit": expected an integer, found a string ("10")"#)
        #expect(problem(#"{"v":"2","op":"hello"}"#) == #"field "v": expected an integer, found a string ("2")"#)
        #expect(problem(#"{"v":2,"op":7}"#) == "field \"op\": expected a string, found a number (7)")
        #expect(
            problem(#"{"v":2,"op":"view","visible":"yes"}"#)
                == #"field "visible": expected true or false, found a string ("yes")"#)
        #expect(
            problem(#"{"v":2,"op":"status","instances":"a"}"#)
                == #"field "instances": expected an array, found a string ("a")"#)
        #expect(
            problem(#"{"v":2,"op":"status","instances":["a",3]}"#)
                == "field \"instances[1]\": expected a string, found a number (3)")
        #expect(
            problem(#"{"v":2,"op":"watch","lastEventId":1.5}"#)
                == "field \"lastEventId\": expected a whole number that fits in 64 bits, found a number (1.5)")
        #expect(problem(#"{"op":"hello"}"#) == "field \"v\": expected a value (it is required), found nothing")
        #expect(problem("[1]") == "expected an object, found an array")
        #expect(problem(#"{"v":2,"op":"hello"}"#) == nil)
    }

    /// A number that breaks an integer field (`JSONDecoder` names no path
    /// for it) is found with the line's shape, which the type declares
    /// (``ControlLineShape``): the fields that take any number are passed
    /// over, in nested shapes too. The decoding error knows no field names
    /// (it once skipped `widget.timeout` and `widget.configuration` by
    /// name, whatever the type).
    @Test func theNumberThatBrokeAnIntegerFieldIsFoundWithTheShapeTheTypeDeclares() {
        func problem<T: Decodable>(_ type: T.Type, _ line: String) -> String? {
            do {
                _ = try ControlCoding.decode(type, from: Array(line.utf8))
                return nil
            } catch {
                return "\(error)"
            }
        }
        // `a` (and `inner.x`) take any number; `b` and `z` whole numbers only.
        #expect(
            problem(Probe.self, #"{"a":0.5,"b":1.5,"inner":{"x":0.25,"y":3},"z":4}"#)
                == "field \"b\": expected a whole number that fits in 64 bits, found a number (1.5)")
        #expect(
            problem(Probe.self, #"{"a":0.5,"b":1,"inner":{"x":0.25,"y":3},"z":1e20}"#)
                == "field \"z\": expected a whole number that fits in 64 bits, found a number (1e+20)")
        #expect(
            problem(Probe.self, #"{"a":0.5,"b":1,"inner":{"x":0.25,"y":3.5},"z":4}"#)
                == "field \"inner.y\": expected a whole number that fits in 64 bits, found a number (3.5)")
        #expect(problem(Probe.self, #"{"a":0.5,"b":1,"inner":{"x":0.25,"y":3},"z":4}"#) == nil)
        // The requests' own: a widget's `timeout` and `configuration` take any number.
        let widget = #""widget":{"id":"x","timeout":2.5,"configuration":{"ratio":0.25,"list":[1.5]}}"#
        #expect(
            problem(ControlRequest.self, #"{"v":2,"op":"instances.add",\#(widget),"lastEventId":1.5}"#)
                == "field \"lastEventId\": expected a whole number that fits in 64 bits, found a number (1.5)")
        #expect(problem(ControlRequest.self, #"{"v":2,"op":"instances.add",\#(widget)}"#) == nil)
    }

    /// A line shape with fields that take any number, one of them nested.
    struct Probe: Decodable, ControlLineShape {
        struct Inner: Decodable, ControlLineShape {
            var x: Double
            var y: Int
            static var fieldsTakingAnyNumber: Set<String> { ["x"] }
        }
        var a: Double
        var b: Int
        var inner: Inner
        var z: Int
        static var fieldsTakingAnyNumber: Set<String> { ["a"] }
        static var nestedShapes: [String: any ControlLineShape.Type] { ["inner": Inner.self] }
    }

    @Test func aKeyTwiceIsRefusedNotTheLastTaken() {
        let message = problem(#"{"v":2,"op":"hello","op":"dance"}"#)
        #expect(
            message?.hasPrefix(#"duplicate key "op" at line 1, column 21 (op), first at line 1, column 8"#) == true,
            "\(message ?? "")")
    }
}
