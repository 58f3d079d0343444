//! The fast path of the reader: one pass over text that is already UTF-8, building the value
//! directly.
//!
//! It accepts a subset of what serde_json accepts and gives the same value for it: whenever
//! anything is off (a syntax error, a lone surrogate, nesting deeper than [`DEPTH`]) it answers
//! `None`, and the caller reads the text again through serde_json, which gives the value or the
//! error with its line and column. So this path decides nothing on its own about what is JSON.
//!
//! Members and items are collected on two stacks shared by every level, so each container is
//! allocated once, at its length, and nothing is grown per container.

use serde_json::{Map, Number, Value};

/// Nesting this path reads; deeper documents go to serde_json, whose limit (127) decides.
const DEPTH: usize = 100;

/// Parses `text` as one JSON value and tells whether some object repeats a member name; `None`
/// when the text is not a value this path reads.
pub(super) fn parse(text: &str) -> Option<(Value, bool)> {
    let mut parser = Parser::new(text);
    parser.whitespace();
    let value = parser.value()?;
    parser.whitespace();
    (parser.at == parser.bytes.len()).then_some((value, parser.repeated))
}

/// The tools arrays of a document, left unbuilt: where each element is written, and its `name`
/// when it is an object whose `name` member is a string.
#[derive(Debug)]
pub(crate) struct Skimmed {
    /// The document with every tools array empty.
    pub document: Value,
    /// The arrays left unbuilt, by JSON Pointer (`""`, `/tools`, `/result/tools`).
    pub arrays: Vec<(&'static str, Vec<Element>)>,
}

/// One element of an unbuilt array.
#[derive(Debug)]
pub(crate) struct Element {
    pub start: usize,
    pub end: usize,
    pub name: Option<Box<str>>,
}

/// Reads `text` as [`parse`] does, except that the arrays where a tools list keeps its tools
/// (the root array, `/tools`, `/result/tools`) are checked and measured without being built.
/// `None` whenever [`parse`] would answer `None` for the text, or some object repeats a member
/// name, or the root is no container.
pub(crate) fn skim(text: &str) -> Option<Skimmed> {
    let mut parser = Parser::new(text);
    let mut arrays = Vec::new();
    parser.whitespace();
    let document = match parser.peek()? {
        b'[' => {
            arrays.push(("", parser.unbuilt_array()?));
            Value::Array(Vec::new())
        }
        b'{' => parser.skim_object(false, &mut arrays)?,
        _ => return None,
    };
    parser.whitespace();
    (parser.at == parser.bytes.len() && !parser.repeated).then_some(Skimmed { document, arrays })
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    depth: usize,
    /// Items of the arrays being read, innermost last.
    items: Vec<Value>,
    /// Members of the objects being read, innermost last.
    members: Vec<(String, Value)>,
    /// The decoded text of a string with escapes.
    scratch: String,
    repeated: bool,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
            items: Vec::new(),
            members: Vec::new(),
            scratch: String::new(),
            repeated: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// Moves past `literal` when the text continues with it.
    fn eat(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.at + literal.len();
        (self.bytes.get(self.at..end) == Some(literal)).then(|| self.at = end)
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(Value::String),
            b'{' => self.nested(Self::object),
            b'[' => self.nested(Self::array),
            b't' => self.eat(b"true").map(|()| Value::Bool(true)),
            b'f' => self.eat(b"false").map(|()| Value::Bool(false)),
            b'n' => self.eat(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Option<Value>) -> Option<Value> {
        if self.depth == DEPTH {
            return None;
        }
        self.depth += 1;
        self.at += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    /// After an item or a member: whether a `,` follows (and another comes) or the container's
    /// `close`; either is passed.
    fn more(&mut self, close: u8) -> Option<bool> {
        self.whitespace();
        let next = self.peek()?;
        self.at += 1;
        if next == b',' {
            self.whitespace();
            Some(true)
        } else {
            (next == close).then_some(false)
        }
    }

    /// After `[`.
    fn array(&mut self) -> Option<Value> {
        self.whitespace();
        if self.eat(b"]").is_some() {
            return Some(Value::Array(Vec::new()));
        }
        let base = self.items.len();
        loop {
            let item = self.value()?;
            self.items.push(item);
            if !self.more(b']')? {
                break;
            }
        }
        Some(Value::Array(self.items.drain(base..).collect()))
    }

    /// After `{`.
    fn object(&mut self) -> Option<Value> {
        self.whitespace();
        if self.eat(b"}").is_some() {
            return Some(Value::Object(Map::new()));
        }
        let base = self.members.len();
        loop {
            let name = self.member_name()?;
            let value = self.value()?;
            self.members.push((name, value));
            if !self.more(b'}')? {
                break;
            }
        }
        let written = self.members.len() - base;
        let mut map = Map::with_capacity(written);
        map.extend(self.members.drain(base..));
        self.repeated |= map.len() < written;
        Some(Value::Object(map))
    }

    /// At `{` of the root object (or of its `result` when `in_result`): builds every member
    /// but the tools array.
    fn skim_object(
        &mut self,
        in_result: bool,
        arrays: &mut Vec<(&'static str, Vec<Element>)>,
    ) -> Option<Value> {
        self.depth += 1;
        self.at += 1;
        self.whitespace();
        let mut map = Map::new();
        if self.eat(b"}").is_none() {
            loop {
                let name = self.member_name()?;
                let value = match (name.as_str(), self.peek()?, in_result) {
                    ("tools", b'[', _) => {
                        let pointer = if in_result { "/result/tools" } else { "/tools" };
                        arrays.push((pointer, self.unbuilt_array()?));
                        Value::Array(Vec::new())
                    }
                    ("result", b'{', false) => self.skim_object(true, arrays)?,
                    _ => self.value()?,
                };
                self.repeated |= map.insert(name, value).is_some();
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(Value::Object(map))
    }

    /// At `[`: checks each element and notes where it is written.
    fn unbuilt_array(&mut self) -> Option<Vec<Element>> {
        if self.depth == DEPTH {
            return None;
        }
        self.depth += 1;
        self.at += 1;
        self.whitespace();
        let mut elements = Vec::new();
        if self.eat(b"]").is_none() {
            loop {
                let start = self.at;
                let name = if self.peek()? == b'{' {
                    self.skip_object_noting_name()?
                } else {
                    self.skip_value()?;
                    None
                };
                elements.push(Element {
                    start,
                    end: self.at,
                    name,
                });
                if !self.more(b']')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(elements)
    }

    /// At `{`: checks the object and returns its `name` member when that is a string.
    fn skip_object_noting_name(&mut self) -> Option<Option<Box<str>>> {
        if self.depth == DEPTH {
            return None;
        }
        self.depth += 1;
        self.at += 1;
        self.whitespace();
        let mut name = None;
        if self.eat(b"}").is_none() {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let is_name = self.string_equals("name")?;
                self.whitespace();
                self.eat(b":")?;
                self.whitespace();
                if is_name && self.peek()? == b'"' {
                    name = Some(self.string()?.into_boxed_str());
                } else {
                    self.skip_value()?;
                }
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(name)
    }

    /// Checks one value as [`Self::value`] reads it, without building it.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string_read().map(drop),
            b'{' => self.skip_object_noting_name().map(drop),
            b'[' => {
                if self.depth == DEPTH {
                    return None;
                }
                self.depth += 1;
                self.at += 1;
                self.whitespace();
                if self.eat(b"]").is_none() {
                    loop {
                        self.skip_value()?;
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Some(())
            }
            b't' => self.eat(b"true"),
            b'f' => self.eat(b"false"),
            b'n' => self.eat(b"null"),
            b'-' | b'0'..=b'9' => {
                self.at = self.number_end()?;
                Some(())
            }
            _ => None,
        }
    }

    /// At `"`: reads a string as [`Self::string`] does without keeping it, and tells whether
    /// it is `expected`.
    fn string_equals(&mut self, expected: &str) -> Option<bool> {
        Some(match self.string_read()? {
            Some((start, end)) => &self.bytes[start..end] == expected.as_bytes(),
            None => self.scratch == expected,
        })
    }

    /// A member's name and the `:` after it.
    fn member_name(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        let name = self.string()?;
        self.whitespace();
        self.eat(b":")?;
        self.whitespace();
        Some(name)
    }

    /// At `"`.
    fn string(&mut self) -> Option<String> {
        Some(match self.string_read()? {
            Some((start, end)) => self.text.get(start..end)?.to_owned(),
            None => self.scratch.clone(),
        })
    }

    /// At `"`: moves past the string; `Some(range)` when it is written without escapes (its
    /// text is that range of the source), `None` when its decoded text is in the scratch text.
    #[allow(clippy::option_option)]
    fn string_read(&mut self) -> Option<Option<(usize, usize)>> {
        let start = self.at + 1;
        let mut i = plain_run(self.bytes, start);
        match self.bytes.get(i)? {
            b'"' => {
                self.at = i + 1;
                return Some(Some((start, i)));
            }
            b'\\' => {}
            _ => return None,
        }
        self.scratch.clear();
        self.scratch.push_str(self.text.get(start..i)?);
        loop {
            match self.bytes.get(i)? {
                b'"' => break,
                b'\\' => i = self.escape(i + 1)?,
                _ => return None,
            }
            let run = plain_run(self.bytes, i);
            self.scratch.push_str(self.text.get(i..run)?);
            i = run;
        }
        self.at = i + 1;
        Some(None)
    }

    /// Decodes the escape after the `\` at `i - 1` into the scratch text; returns where it ends.
    fn escape(&mut self, i: usize) -> Option<usize> {
        let decoded = match self.bytes.get(i)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(i + 1)?;
                if (0xD800..0xDC00).contains(&unit) {
                    // A leading surrogate must be followed by an escaped trailing one.
                    if self.bytes.get(i + 5..i + 7)? != b"\\u" {
                        return None;
                    }
                    let low = self.hex4(i + 7)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    self.scratch.push(char::from_u32(code)?);
                    return Some(i + 11);
                }
                self.scratch.push(char::from_u32(unit)?);
                return Some(i + 5);
            }
            _ => return None,
        };
        self.scratch.push(decoded);
        Some(i + 1)
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        let digits = self.text.get(i..i + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as written.
    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        let i = self.number_end()?;
        self.at = i;
        let text = self.text.get(start..i)?;
        Some(Value::Number(Number::from_string_unchecked(
            text.to_owned(),
        )))
    }

    /// Where the number at the cursor ends, when it is one.
    fn number_end(&self) -> Option<usize> {
        let mut i = self.at;
        if self.bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match self.bytes.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => i = digits(self.bytes, i),
            _ => return None,
        }
        if self.bytes.get(i) == Some(&b'.') {
            let end = digits(self.bytes, i + 1);
            if end == i + 1 {
                return None;
            }
            i = end;
        }
        if let Some(b'e' | b'E') = self.bytes.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = self.bytes.get(i) {
                i += 1;
            }
            let end = digits(self.bytes, i);
            if end == i {
                return None;
            }
            i = end;
        }
        Some(i)
    }
}

fn digits(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Where the run of bytes from `i` that a string holds as they are (anything but `"`, `\` and
/// control characters) ends.
fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Eight bytes at a time: a byte's high bit is set where it is below 0x20, `"` or `\`. A
    // borrow can only mark bytes after the first true one, so the lowest mark is exact.
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let control = word.wrapping_sub(0x20 * ONES);
        let quote = (word ^ (u64::from(b'"') * ONES)).wrapping_sub(ONES);
        let backslash = (word ^ (u64::from(b'\\') * ONES)).wrapping_sub(ONES);
        let marks = (control | quote | backslash) & !word & HIGH;
        if marks != 0 {
            return i + (marks.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while bytes
        .get(i)
        .is_some_and(|&b| b >= 0x20 && b != b'"' && b != b'\\')
    {
        i += 1;
    }
    i
}
