//! Source positions for JSON Pointers.
//!
//! `serde_json` keeps no positions, so a small scanner walks the text of a document the parser has
//! already accepted and records the byte ranges of the values (and member names) at the pointers
//! that diagnostics need. It is iterative, so nesting depth costs memory, never stack.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use mcp_recovery_model::escape_token;

use crate::Span;

/// Where one JSON value sits in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The member name, quotes included, when the value is an object member.
    pub key: Option<Range<usize>>,
    /// The value itself.
    pub value: Range<usize>,
}

struct Frame {
    is_object: bool,
    /// Length of the pointer of this container.
    base: usize,
    next_index: usize,
    /// Start and key of the container, when its place is wanted.
    open: Option<(usize, Option<Range<usize>>)>,
}

enum State {
    Value,
    MemberOrEnd,
    ElementOrEnd,
    AfterValue,
}

impl State {
    /// The state after `byte` that follows a value inside a container (`is_object`): only a
    /// comma continues.
    fn after_comma(byte: u8, is_object: Option<bool>) -> Option<Self> {
        is_object.filter(|_| byte == b',').map(Self::first_in)
    }

    /// The state after the opening bracket of an object or an array.
    fn first_in(is_object: bool) -> Self {
        if is_object {
            Self::MemberOrEnd
        } else {
            Self::ElementOrEnd
        }
    }
}

/// The position after the `:` that follows a member name ending at `pos`, if there is one.
fn after_colon(source: &[u8], pos: usize) -> Option<usize> {
    let pos = skip_blank(source, pos);
    (source.get(pos) == Some(&b':')).then_some(pos + 1)
}

/// One past the end of the string or scalar starting at `pos`.
fn value_end(source: &[u8], pos: usize) -> usize {
    if source.get(pos) == Some(&b'"') {
        string_end(source, pos)
    } else {
        scalar_end(source, pos)
    }
}

/// The place of `pointer` in `source` (JSON text), or of its nearest ancestor that is there:
/// the member's key when it has one, else the value.
pub fn json_place(source: &[u8], pointer: &str) -> Option<Range<usize>> {
    let mut ancestors = vec![pointer];
    let mut at = pointer;
    while let Some(cut) = at.rfind('/') {
        at = &at[..cut];
        ancestors.push(at);
    }
    let places = locate(source, &ancestors.iter().copied().collect());
    ancestors
        .iter()
        .find_map(|a| places.get(*a))
        .map(|place| place.key.clone().unwrap_or_else(|| place.value.clone()))
}

/// Finds the places of the `wanted` pointers in `source` (valid JSON text).
///
/// Pointers that select nothing are absent from the result. Malformed input ends the scan early;
/// it never panics.
pub(crate) fn locate(source: &[u8], wanted: &HashSet<&str>) -> HashMap<String, Place> {
    let mut found = HashMap::new();
    if wanted.is_empty() {
        return found;
    }
    // No wanted pointer is longer than this; deeper paths need no lookup, which keeps the scan
    // linear on pathologically deep text.
    let longest = wanted.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut path = String::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut key: Option<Range<usize>> = None;
    let mut state = State::Value;
    let mut pos = 0;
    loop {
        pos = skip_blank(source, pos);
        let Some(&byte) = source.get(pos) else { break };
        match state {
            State::Value => {
                let start = pos;
                let member_key = key.take();
                let record = path.len() <= longest && wanted.contains(path.as_str());
                match byte {
                    b'{' | b'[' => {
                        let is_object = byte == b'{';
                        stack.push(Frame {
                            is_object,
                            base: path.len(),
                            next_index: 0,
                            open: record.then_some((start, member_key)),
                        });
                        pos += 1;
                        state = State::first_in(is_object);
                    }
                    _ => {
                        pos = value_end(source, pos);
                        if record {
                            found.insert(
                                path.clone(),
                                Place {
                                    key: member_key,
                                    value: start..pos,
                                },
                            );
                        }
                        state = State::AfterValue;
                    }
                }
            }
            State::MemberOrEnd | State::ElementOrEnd | State::AfterValue
                if matches!(byte, b'}' | b']') =>
            {
                let Some(frame) = stack.pop() else { break };
                pos += 1;
                path.truncate(frame.base);
                if let Some((start, member_key)) = frame.open {
                    found.insert(
                        path.clone(),
                        Place {
                            key: member_key,
                            value: start..pos,
                        },
                    );
                }
                state = State::AfterValue;
            }
            State::MemberOrEnd => {
                let Some(frame) = stack.last() else { break };
                if byte != b'"' {
                    break;
                }
                let key_start = pos;
                pos = string_end(source, pos);
                path.truncate(frame.base);
                path.push('/');
                path.push_str(&escape_token(&decode_string(&source[key_start..pos])));
                key = Some(key_start..pos);
                let Some(value) = after_colon(source, pos) else {
                    break;
                };
                pos = value;
                state = State::Value;
            }
            State::ElementOrEnd => {
                let Some(frame) = stack.last_mut() else { break };
                path.truncate(frame.base);
                path.push('/');
                path.push_str(&frame.next_index.to_string());
                frame.next_index += 1;
                state = State::Value;
            }
            State::AfterValue => {
                let Some(next) = State::after_comma(byte, stack.last().map(|f| f.is_object)) else {
                    break;
                };
                (pos, state) = (pos + 1, next);
            }
        }
    }
    found
}

/// A member name written more than once in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    /// Pointer of the member.
    pub pointer: String,
    /// The decoded name.
    pub key: String,
    /// How many times it is written in the object.
    pub count: usize,
}

/// How a container is reached from its parent.
#[derive(Clone)]
enum Segment {
    Key(Range<usize>),
    Index(usize),
}

/// Objects with more members than this look names up in a hash set rather than a list.
const LINEAR_KEYS: usize = 16;

#[derive(Default)]
struct KeySet<'a> {
    list: Vec<Cow<'a, [u8]>>,
    set: HashSet<Cow<'a, [u8]>>,
}

impl<'a> KeySet<'a> {
    /// Adds `key`; false when it was already there.
    fn insert(&mut self, key: Cow<'a, [u8]>) -> bool {
        if self.list.len() < LINEAR_KEYS {
            if self.list.contains(&key) {
                return false;
            }
            self.list.push(key);
            return true;
        }
        if self.set.is_empty() {
            self.set.extend(self.list.iter().cloned());
        }
        self.set.insert(key)
    }
}

struct KeyFrame<'a> {
    is_object: bool,
    segment: Option<Segment>,
    next_index: usize,
    keys: KeySet<'a>,
    /// Names reported in this object, with their index in the output.
    reported: Vec<(Cow<'a, [u8]>, usize)>,
}

/// The identity of a member name: its bytes, decoded only when it has escapes.
fn key_identity(literal: &[u8]) -> Cow<'_, [u8]> {
    if literal.contains(&b'\\') {
        Cow::Owned(decode_string(literal).into_bytes())
    } else {
        Cow::Borrowed(
            literal
                .get(1..literal.len().saturating_sub(1))
                .unwrap_or_default(),
        )
    }
}

/// The first member whose name its object writes more than once in `source` (valid JSON text),
/// for a reader that refuses such a document: its pointer and why, both inert.
pub fn repeated_member(source: &[u8]) -> Option<(String, String)> {
    use mcp_recovery_base::text::escape_controls;
    let first = duplicate_keys(source).into_iter().next()?;
    let name = escape_controls(&first.key);
    let why = format!(
        "the member `{name}` is written more than once in its object, so which value is meant is not known"
    );
    Some((escape_controls(&first.pointer).into_owned(), why))
}

/// The member names written more than once in their object, in document order, found in one
/// pass over `source` (valid JSON text) that builds a pointer only for a duplicate. Malformed
/// input ends the scan early; it never panics.
pub(crate) fn duplicate_keys(source: &[u8]) -> Vec<DuplicateKey> {
    let mut found: Vec<DuplicateKey> = Vec::new();
    let mut stack: Vec<KeyFrame<'_>> = Vec::new();
    let mut segment: Option<Segment> = None;
    let mut state = State::Value;
    let mut pos = 0;
    loop {
        pos = skip_blank(source, pos);
        let Some(&byte) = source.get(pos) else { break };
        match state {
            State::Value => match byte {
                b'{' | b'[' => {
                    let is_object = byte == b'{';
                    stack.push(KeyFrame {
                        is_object,
                        segment: segment.take(),
                        next_index: 0,
                        keys: KeySet::default(),
                        reported: Vec::new(),
                    });
                    pos += 1;
                    state = State::first_in(is_object);
                }
                _ => {
                    segment = None;
                    pos = value_end(source, pos);
                    state = State::AfterValue;
                }
            },
            State::MemberOrEnd | State::ElementOrEnd | State::AfterValue
                if matches!(byte, b'}' | b']') =>
            {
                if stack.pop().is_none() {
                    break;
                }
                pos += 1;
                state = State::AfterValue;
            }
            State::MemberOrEnd => {
                if byte != b'"' {
                    break;
                }
                let key_start = pos;
                pos = string_end(source, pos);
                let literal = &source[key_start..pos];
                let identity = key_identity(literal);
                let Some(frame) = stack.last_mut() else { break };
                if !frame.keys.insert(identity.clone()) {
                    if let Some(&(_, index)) =
                        frame.reported.iter().find(|(key, _)| *key == identity)
                    {
                        found[index].count += 1;
                    } else {
                        frame.reported.push((identity, found.len()));
                        let pointer = pointer_of(source, &stack, literal);
                        found.push(DuplicateKey {
                            pointer,
                            key: decode_string(literal),
                            count: 2,
                        });
                    }
                }
                segment = Some(Segment::Key(key_start..pos));
                let Some(value) = after_colon(source, pos) else {
                    break;
                };
                pos = value;
                state = State::Value;
            }
            State::ElementOrEnd => {
                let Some(frame) = stack.last_mut() else { break };
                segment = Some(Segment::Index(frame.next_index));
                frame.next_index += 1;
                state = State::Value;
            }
            State::AfterValue => {
                let Some(next) = State::after_comma(byte, stack.last().map(|f| f.is_object)) else {
                    break;
                };
                (pos, state) = (pos + 1, next);
            }
        }
    }
    found
}

/// The pointer of member `literal` of the innermost container of `stack`.
fn pointer_of(source: &[u8], stack: &[KeyFrame<'_>], literal: &[u8]) -> String {
    let mut pointer = String::new();
    let push_key = |pointer: &mut String, literal: &[u8]| {
        pointer.push('/');
        pointer.push_str(&escape_token(&decode_string(literal)));
    };
    for frame in stack {
        match &frame.segment {
            Some(Segment::Key(range)) => push_key(&mut pointer, &source[range.clone()]),
            Some(Segment::Index(index)) => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            None => {}
        }
    }
    push_key(&mut pointer, literal);
    pointer
}

fn skip_blank(source: &[u8], mut pos: usize) -> usize {
    while matches!(source.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// One past the closing quote of the string starting at `start`.
fn string_end(source: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    // Strings are most of a document's bytes: jump to the next quote or backslash.
    while let Some(found) = source
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        i += found;
        if source[i] == b'"' {
            return i + 1;
        }
        i += 2;
    }
    source.len()
}

fn scalar_end(source: &[u8], start: usize) -> usize {
    let mut i = start;
    while let Some(&b) = source.get(i) {
        if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    // Never stand still on a stray byte: the scan must always advance.
    i.max(start + 1).min(source.len())
}

/// The text of a JSON string literal (quotes included).
fn decode_string(literal: &[u8]) -> String {
    if !literal.contains(&b'\\') {
        let inner = literal
            .get(1..literal.len().saturating_sub(1))
            .unwrap_or_default();
        return String::from_utf8_lossy(inner).into_owned();
    }
    serde_json::from_slice::<String>(literal)
        .unwrap_or_else(|_| String::from_utf8_lossy(literal).into_owned())
}

/// The source range of the character at byte `offset` of the decoded string whose literal
/// (quotes included) occupies `literal` in `source`. The end of the string maps to the closing
/// quote.
pub(crate) fn char_in_string(
    source: &[u8],
    literal: Range<usize>,
    offset: usize,
) -> Option<Range<usize>> {
    let bytes = source.get(literal.clone())?;
    let mut raw = 1;
    let mut decoded = 0;
    while raw + 1 < bytes.len() {
        let (raw_len, decoded_len) = if bytes[raw] == b'\\' {
            escape_lengths(&bytes[raw..])
        } else {
            let len = utf8_len(bytes[raw]);
            (len, len)
        };
        if decoded >= offset {
            let start = literal.start + raw;
            return Some(start..(start + raw_len).min(literal.end));
        }
        raw += raw_len;
        decoded += decoded_len;
    }
    let quote = literal.end.checked_sub(1)?;
    Some(quote..literal.end)
}

/// Raw and decoded byte lengths of the escape sequence at the start of `bytes`.
fn escape_lengths(bytes: &[u8]) -> (usize, usize) {
    if bytes.get(1) != Some(&b'u') {
        return (2, 1);
    }
    let unit = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    match unit(2) {
        Some(0xD800..=0xDBFF) => {
            let paired = bytes.get(6..8) == Some(b"\\u")
                && unit(8).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
            if paired { (12, 4) } else { (6, 3) }
        }
        Some(code) => (6, char::from_u32(code).map_or(3, char::len_utf8)),
        None => (2, 1),
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Bytes per block of [`LineIndex`]'s code-point checkpoints: a lookup counts at most this many
/// bytes, and the checkpoints cost one `usize` per block.
const BLOCK: usize = 256;

/// Line starts and code-point checkpoints of a text, for byte offset → line and column.
///
/// Built in one pass; each lookup is a binary search plus a scan of at most two blocks, so the
/// positions of any number of findings cost time linear in the text (a minified one-line
/// document with a million findings included), never a rescan from the start of the line.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    source: &'a [u8],
    starts: Vec<usize>,
    /// Code points in `source[..i * BLOCK]`, for each block `i`.
    checkpoints: Vec<usize>,
}

/// Whether a byte starts a code point (is not a UTF-8 continuation byte); on text that is not
/// UTF-8 this still counts one column per non-continuation byte.
fn starts_code_point(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

/// Code points in `bytes` (see [`starts_code_point`]). Most text is ASCII, which is checked far
/// faster than the bytes are counted one by one.
fn code_points_in(bytes: &[u8]) -> usize {
    if bytes.is_ascii() {
        bytes.len()
    } else {
        bytes.iter().filter(|&&b| starts_code_point(b)).count()
    }
}

impl<'a> LineIndex<'a> {
    /// Indexes `source` (any bytes).
    pub fn new(source: &'a [u8]) -> Self {
        let mut starts = vec![0];
        let mut checkpoints = Vec::with_capacity(source.len() / BLOCK + 1);
        let mut code_points = 0;
        for (block, bytes) in source.chunks(BLOCK).enumerate() {
            checkpoints.push(code_points);
            code_points += code_points_in(bytes);
            let base = block * BLOCK;
            starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| base + i + 1));
        }
        checkpoints.push(code_points);
        Self {
            source,
            starts,
            checkpoints,
        }
    }

    /// Code points before byte `offset` (at most `source.len()`).
    fn code_points_before(&self, offset: usize) -> usize {
        let block = offset / BLOCK;
        let base = self.checkpoints.get(block).copied().unwrap_or(0);
        let from = (block * BLOCK).min(offset);
        base + code_points_in(&self.source[from..offset])
    }

    /// The byte offset of the start of 1-based `line`, when it exists.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    /// The 1-based line of byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.source.len());
        self.starts.partition_point(|s| *s <= offset).max(1)
    }

    /// The bytes of 1-based `line`, without its line break.
    pub fn line_range(&self, line: usize) -> Option<Range<usize>> {
        let start = self.line_start(line)?;
        let end = self
            .starts
            .get(line)
            .map_or(self.source.len(), |next| next - 1);
        Some(start..end)
    }

    /// 1-based line and column of byte `offset` (clamped to the text); columns count Unicode
    /// code points.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.source.len());
        let line = self.line_of(offset);
        let start = self.line_start(line).unwrap_or(0);
        let column = self.code_points_before(offset) - self.code_points_before(start) + 1;
        (line, column)
    }

    /// A span for a byte range.
    pub fn span(&self, range: Range<usize>) -> Span {
        let start = range.start.min(self.source.len());
        let end = range.end.clamp(start, self.source.len());
        let (line, column) = self.position(start);
        let (end_line, end_column) = self.position(end);
        Span {
            start,
            end,
            line,
            column,
            end_line,
            end_column,
        }
    }
}

#[cfg(test)]
mod tests;
