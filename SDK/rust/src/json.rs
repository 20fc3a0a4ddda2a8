//! The little JSON a provider needs without a JSON crate: reading a member of
//! the configuration (a flat object of scalars) and quoting a string for
//! entry content.

/// A scalar JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    String(String),
    Number(f64),
    Boolean(bool),
    Null,
}

/// `text` as a JSON string literal, quotes included:
/// `quote("a \"b\"")` is `"a \"b\""` with the inner quotes escaped.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The scalar member `name` of the JSON object `object`, or `None` when the
/// text is not an object of scalars or has no such member.
pub fn member(object: &str, name: &str) -> Option<Scalar> {
    let mut reader = Reader {
        bytes: object.as_bytes(),
        at: 0,
    };
    reader.expect(b'{')?;
    if reader.peek()? == b'}' {
        return None;
    }
    loop {
        let key = reader.string()?;
        reader.expect(b':')?;
        let value = reader.scalar()?;
        if key == name {
            return Some(value);
        }
        match reader.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        u32::from_str_radix(core::str::from_utf8(digits).ok()?, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            match b {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.bytes.get(self.at)?;
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                if self.bytes.get(self.at..self.at + 2)? != b"\\u" {
                                    return None;
                                }
                                self.at += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return None;
                                }
                                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                high
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    let mut buffer = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                }
                b if b < 0x20 => return None,
                b => out.push(b),
            }
        }
    }

    fn scalar(&mut self) -> Option<Scalar> {
        match self.peek()? {
            b'"' => self.string().map(Scalar::String),
            b't' => self.word("true", Scalar::Boolean(true)),
            b'f' => self.word("false", Scalar::Boolean(false)),
            b'n' => self.word("null", Scalar::Null),
            _ => {
                let start = self.at;
                while let Some(&b) = self.bytes.get(self.at) {
                    if !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                        break;
                    }
                    self.at += 1;
                }
                let text = core::str::from_utf8(&self.bytes[start..self.at]).ok()?;
                let value: f64 = text.parse().ok()?;
                value.is_finite().then_some(Scalar::Number(value))
            }
        }
    }

    fn word(&mut self, word: &str, value: Scalar) -> Option<Scalar> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word.as_bytes()).then(|| {
            self.at = end;
            value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_members_of_each_type() {
        let json =
            r#" { "city" : "Lyon \"2\" \u00e9\ud83d\ude00", "days": 3, "ratio":-1.5e1, "on": true, "x": null } "#;
        assert_eq!(member(json, "city"), Some(Scalar::String("Lyon \"2\" é😀".into())));
        assert_eq!(member(json, "days"), Some(Scalar::Number(3.0)));
        assert_eq!(member(json, "ratio"), Some(Scalar::Number(-15.0)));
        assert_eq!(member(json, "on"), Some(Scalar::Boolean(true)));
        assert_eq!(member(json, "x"), Some(Scalar::Null));
        assert_eq!(member(json, "missing"), None);
    }

    #[test]
    fn refuses_what_is_not_a_flat_object() {
        assert_eq!(member("[]", "a"), None);
        assert_eq!(member("{}", "a"), None);
        assert_eq!(member(r#"{"a":{"b":1}}"#, "a"), None);
        assert_eq!(member(r#"{"a":"unterminated}"#, "a"), None);
        assert_eq!(member(r#"{"a":1e999}"#, "a"), None);
        assert_eq!(member(r#"{"a":"\ud800x"}"#, "a"), None);
    }

    #[test]
    fn quote_round_trips_through_member() {
        for text in ["plain", "quote \" and \\ backslash", "line\nbreak\t\u{1}", "é 😀"] {
            let object = format!("{{\"v\":{}}}", quote(text));
            assert_eq!(member(&object, "v"), Some(Scalar::String(text.into())), "{object}");
        }
    }
}
