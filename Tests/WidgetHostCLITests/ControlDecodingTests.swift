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

    @Test func aKeyTwiceIsRefusedNotTheLastTaken() {
        let message = problem(#"{"v":2,"op":"hello","op":"dance"}"#)
        #expect(
            message?.hasPrefix(#"duplicate key "op" at line 1, column 21 (op), first at line 1, column 8"#) == true,
            "\(message ?? "")")
    }
}
