//! Member names that JSON parsers read differently.
//!
//! The proxy reads a message with serde_json's rules: member names compared exactly, and of two
//! members of one name the last counts. Other parsers keep the first; Go's `encoding/json`
//! matches names regardless of case (Unicode simple folding, so `ſ` is `s` and the Kelvin sign
//! `k`), for it `name` and `NAME` are one member (the last counts) and a lone `Method` is the
//! `method`. A message from the client in which one object (at any depth) writes a name twice,
//! holds two names equal under case folding, or holds, where the proxy reads `method`, `id`,
//! `params` or a call's `name` and `arguments`, only a name that folds to it, means one thing to
//! the gate and the journal and another to such a server: the session refuses it.
//!
//! Only the client's messages are judged. A server's answer goes to the client as the server
//! wrote it, and legitimate results hold names such as `id` and `ID` side by side.

use std::borrow::Cow;
use std::collections::HashMap;

/// The names of a message the proxy reads (and of a client's answer the server reads).
const MESSAGE_NAMES: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];

/// The names of a message's `params` the proxy reads.
const PARAMS_NAMES: &[&str] = &[
    "name",
    "arguments",
    "_meta",
    "cursor",
    "requestId",
    "taskId",
];

/// Deeper than any text the JSON reader accepts: past it the names are not read.
const MAX_DEPTH: usize = 512;

/// Why a message's member names are ambiguous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ambiguity {
    /// One object writes this name twice.
    Repeated(String),
    /// One object holds these two names, equal under case folding.
    Folded(String, String),
    /// The message (or its `params`) holds this name, which folds to the second one, the name
    /// the proxy reads, and not that name itself.
    Variant(String, &'static str),
    /// The text could not be read as JSON.
    Unreadable,
}

impl Ambiguity {
    /// What is ambiguous, naming the members (escaped).
    pub(crate) fn describe(&self) -> String {
        match self {
            Ambiguity::Repeated(name) => format!(
                "the member {} is written twice in one object, and parsers differ on which one counts",
                quoted(name)
            ),
            Ambiguity::Folded(first, second) => format!(
                "the members {} and {} of one object are one name to servers that match names regardless of case",
                quoted(first),
                quoted(second)
            ),
            Ambiguity::Variant(name, read) => format!(
                "the member {} is {} to servers that match names regardless of case, and the proxy reads only {}",
                quoted(name),
                quoted(read),
                quoted(read)
            ),
            Ambiguity::Unreadable => "its member names could not be read".to_owned(),
        }
    }
}

/// What is ambiguous in one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The first ambiguity met.
    pub(crate) ambiguity: Ambiguity,
    /// The message's `id` itself is in doubt (written twice, or beside a name that folds to it):
    /// an answer cannot name it.
    pub(crate) id_unsure: bool,
}

/// The ambiguity of each message in `text` (a JSON text the JSON reader accepted): one entry
/// for a single message, one per element for a batch (a top-level array).
pub(crate) fn findings(text: &str) -> Vec<Option<Finding>> {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        text,
        at: 0,
        found: None,
        id_unsure: false,
        broken: false,
    };
    let mut found = Vec::new();
    scan.space();
    if scan.peek() == Some(b'[') {
        scan.at += 1;
        loop {
            scan.space();
            match scan.peek() {
                Some(b']') | None => break,
                Some(b',') => {
                    scan.at += 1;
                    continue;
                }
                Some(_) => {}
            }
            scan.value(Level::Message, 1);
            found.push(scan.take());
            if scan.broken {
                break;
            }
        }
    } else {
        scan.value(Level::Message, 0);
        found.push(scan.take());
    }
    if scan.broken {
        for entry in found.iter_mut().filter(|entry| entry.is_none()) {
            *entry = Some(Finding {
                ambiguity: Ambiguity::Unreadable,
                id_unsure: true,
            });
        }
        if found.is_empty() {
            found.push(Some(Finding {
                ambiguity: Ambiguity::Unreadable,
                id_unsure: true,
            }));
        }
    }
    found
}

/// The fold under which two names are one for a parser that matches names regardless of case:
/// lower, upper, then lower case again, which joins every Unicode simple case folding orbit
/// (`ſ`, `s` and `S`; `K`, `k` and the Kelvin sign; `ß` and `ẞ`) and some more.
pub(crate) fn fold(name: &str) -> Cow<'_, str> {
    if name.is_ascii() {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(name.to_ascii_lowercase());
        }
        return Cow::Borrowed(name);
    }
    Cow::Owned(name.to_lowercase().to_uppercase().to_lowercase())
}

/// A name as the messages quote it: printable ASCII as is (`"` and `\` escaped), every other
/// character as `\u{…}`, at most 80 characters of it.
fn quoted(name: &str) -> String {
    let mut out = String::from("\"");
    for (count, c) in name.chars().enumerate() {
        if count == 80 {
            out.push('…');
            break;
        }
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// Where a value sits: a message, a message's `params`, or anywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Message,
    Params,
    Other,
}

/// A reading of the member names of a JSON text, already known to be valid.
struct Scan<'t> {
    bytes: &'t [u8],
    text: &'t str,
    at: usize,
    /// The first ambiguity of the current message.
    found: Option<Ambiguity>,
    id_unsure: bool,
    /// The text was not what the reader expected; nothing more is read.
    broken: bool,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The current message's finding, and a fresh start for the next one.
    fn take(&mut self) -> Option<Finding> {
        let id_unsure = std::mem::take(&mut self.id_unsure);
        self.found.take().map(|ambiguity| Finding {
            ambiguity,
            id_unsure,
        })
    }

    fn note(&mut self, ambiguity: Ambiguity) {
        self.found.get_or_insert(ambiguity);
    }

    fn value(&mut self, level: Level, depth: usize) {
        if self.broken {
            return;
        }
        if depth > MAX_DEPTH {
            self.broken = true;
            return;
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.object(level, depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
            }
            None => self.broken = true,
        }
    }

    fn array(&mut self, depth: usize) {
        self.at += 1;
        loop {
            self.space();
            match self.peek() {
                Some(b']') => {
                    self.at += 1;
                    return;
                }
                Some(b',') => self.at += 1,
                Some(_) => self.value(Level::Other, depth + 1),
                None => self.broken = true,
            }
            if self.broken {
                return;
            }
        }
    }

    fn object(&mut self, level: Level, depth: usize) {
        self.at += 1;
        // Each name by its fold, as written (escapes decoded).
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut id_seen = false;
        loop {
            self.space();
            match self.peek() {
                Some(b'}') => {
                    self.at += 1;
                    return;
                }
                Some(b',') => {
                    self.at += 1;
                    continue;
                }
                Some(b'"') => {}
                _ => {
                    self.broken = true;
                    return;
                }
            }
            let Some(name) = self.string() else {
                self.broken = true;
                return;
            };
            self.space();
            if self.peek() != Some(b':') {
                self.broken = true;
                return;
            }
            self.at += 1;
            let folded = fold(&name).into_owned();
            if level == Level::Message && folded == "id" {
                if name != "id" || id_seen {
                    self.id_unsure = true;
                }
                id_seen = true;
            }
            let read = match level {
                Level::Message => MESSAGE_NAMES,
                Level::Params => PARAMS_NAMES,
                Level::Other => &[],
            };
            match seen.get(&folded) {
                Some(prior) if *prior == name => self.note(Ambiguity::Repeated(name.clone())),
                Some(prior) => self.note(Ambiguity::Folded(prior.clone(), name.clone())),
                None => {}
            }
            if let Some(read) = read
                .iter()
                .find(|read| **read != name && fold(read) == folded)
            {
                self.note(Ambiguity::Variant(name.clone(), read));
            }
            let inner = if level == Level::Message && name == "params" {
                Level::Params
            } else {
                Level::Other
            };
            seen.entry(folded).or_insert(name);
            self.value(inner, depth + 1);
            if self.broken {
                return;
            }
        }
    }

    /// The string at the cursor, its escapes decoded; `None` when it is not one.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            match self.bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        self.at = i + 1;
        let quoted = self.text.get(start..=i)?;
        if escaped {
            serde_json::from_str(quoted).ok()
        } else {
            Some(quoted[1..quoted.len() - 1].to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Option<Ambiguity> {
        findings(text).remove(0).map(|finding| finding.ambiguity)
    }

    #[test]
    fn plain_messages_are_not_ambiguous() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[{"y":1},{"y":2}]}}}"#,
            r#"{"id":"x","result":{"id":1,"Id2":[{"a":"b"}],"s":"\"name\":1,\"name\":2"}}"#,
            r#" { "a" : { } , "b" : [ ] , "c" : "\\" } "#,
            "3",
            "\"text\"",
        ] {
            assert_eq!(findings(text), vec![None], "{text}");
        }
    }

    #[test]
    fn repeated_and_folded_names_at_any_depth() {
        assert_eq!(
            first(r#"{"params":{"name":"a","name":"b"}}"#),
            Some(Ambiguity::Repeated("name".into()))
        );
        assert_eq!(
            first(r#"{"params":{"name":"a","n\u0061me":"b"}}"#),
            Some(Ambiguity::Repeated("name".into()))
        );
        assert_eq!(
            first(r#"{"params":{"name":"safe","NAME":"delete"}}"#),
            Some(Ambiguity::Folded("name".into(), "NAME".into()))
        );
        assert_eq!(
            first(r#"{"params":{"arguments":{"deep":[{"path":1,"PATH":2}]}}}"#),
            Some(Ambiguity::Folded("path".into(), "PATH".into()))
        );
        // The long s and the Kelvin sign fold to ASCII letters; ß and ẞ are one.
        assert_eq!(
            first("{\"x\":{\"ſize\":1,\"size\":2}}"),
            Some(Ambiguity::Folded("ſize".into(), "size".into()))
        );
        assert_eq!(
            first("{\"x\":{\"\u{212a}ey\":1,\"key\":2}}"),
            Some(Ambiguity::Folded("\u{212a}ey".into(), "key".into()))
        );
        assert!(first("{\"x\":{\"ß\":1,\"ẞ\":2}}").is_some());
    }

    #[test]
    fn a_lone_variant_of_a_name_the_proxy_reads_is_ambiguous() {
        assert_eq!(
            first(r#"{"id":7,"Method":"tools/call","params":{"name":"x"}}"#),
            Some(Ambiguity::Variant("Method".into(), "method"))
        );
        assert_eq!(
            first(r#"{"id":7,"method":"tools/call","params":{"Name":"x"}}"#),
            Some(Ambiguity::Variant("Name".into(), "name"))
        );
        assert_eq!(
            first("{\"id\":7,\"method\":\"tools/list\",\"params\":{\"cur\u{17f}or\":\"x\"}}"),
            Some(Ambiguity::Variant("cur\u{17f}or".into(), "cursor"))
        );
        assert_eq!(
            first(r#"{"id":7,"method":"tools/call","params":{"name":"x","ARGUMENTS":{}}}"#),
            Some(Ambiguity::Variant("ARGUMENTS".into(), "arguments"))
        );
        // Deeper, such a name is only data.
        assert_eq!(
            first(r#"{"id":7,"method":"m","params":{"arguments":{"Name":1,"Method":2}}}"#),
            None
        );
    }

    #[test]
    fn the_id_is_unsure_only_when_its_own_name_is_ambiguous() {
        let unsure = |text: &str| findings(text)[0].as_ref().map(|f| f.id_unsure);
        assert_eq!(unsure(r#"{"id":1,"ID":2,"method":"m"}"#), Some(true));
        assert_eq!(unsure(r#"{"id":1,"id":2,"method":"m"}"#), Some(true));
        assert_eq!(unsure(r#"{"Id":1,"method":"m"}"#), Some(true));
        assert_eq!(
            unsure(r#"{"id":1,"method":"m","params":{"id":1,"ID":2}}"#),
            Some(false)
        );
    }

    #[test]
    fn a_batch_is_judged_element_by_element() {
        let found = findings(
            r#"[{"id":1,"method":"m"}, {"id":2,"method":"m","METHOD":"n"} ,3,[{"a":1,"a":2}]]"#,
        );
        assert_eq!(found.len(), 4);
        assert_eq!(found[0], None);
        assert_eq!(
            found[1].as_ref().map(|f| &f.ambiguity),
            Some(&Ambiguity::Folded("method".into(), "METHOD".into()))
        );
        assert_eq!(found[2], None);
        assert_eq!(
            found[3].as_ref().map(|f| &f.ambiguity),
            Some(&Ambiguity::Repeated("a".into()))
        );
    }

    #[test]
    fn names_are_quoted_visibly() {
        let text = Ambiguity::Folded("ſ\"\n".into(), "S".into()).describe();
        assert!(text.contains(r#""\u{17f}\"\u{a}" and "S""#), "{text}");
    }
}
