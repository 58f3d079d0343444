//! Values the client was given that must never be printed: header values and the environment
//! of a stdio server. A server may echo them (a 401 body quoting `Authorization`, a stack trace
//! on stderr listing the environment); every text the client hands out passes through
//! [`Secrets::redact`] first.

use std::borrow::Cow;

pub use mcp_recovery_base::text::REDACTED;
use mcp_recovery_base::text::{escape_controls, is_unsafe_char};
use serde_json::Value;

/// Secrets shorter than this are not redacted: replacing every `1` or `on` in a message would
/// destroy it while protecting nothing.
pub const MIN_SECRET_CHARS: usize = 4;

/// The values to hide, longest first (so that a secret containing another is replaced whole).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// Collects `values`, skipping those shorter than [`MIN_SECRET_CHARS`].
    pub fn new<I, S>(values: I) -> Secrets
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut secrets = Secrets::default();
        for value in values {
            secrets.add(value.into());
        }
        secrets
    }

    /// Adds one more value (and, for `Scheme credentials` values such as `Bearer abc…`, the
    /// credentials alone, which a server may echo without the scheme), in every spelling it may
    /// be printed in (see [`spellings`]).
    pub fn add(&mut self, value: String) {
        let value = value.trim().to_string();
        if let Some((_, credentials)) = value.split_once(' ') {
            let credentials = credentials.trim();
            if credentials.chars().count() >= MIN_SECRET_CHARS {
                spellings(credentials)
                    .into_iter()
                    .for_each(|s| self.push(s));
            }
        }
        if value.chars().count() >= MIN_SECRET_CHARS {
            spellings(&value).into_iter().for_each(|s| self.push(s));
        }
    }

    fn push(&mut self, value: String) {
        if !self.values.contains(&value) {
            self.values.push(value);
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// Whether there is nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every occurrence of a secret replaced by [`REDACTED`]. A text cut short
    /// (ending in `…`) also loses a trailing beginning of a secret, so that an excerpt that
    /// stops inside a token does not show its first half.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.values.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for secret in &self.values {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        if let Some(body) = out.strip_suffix('…') {
            for secret in &self.values {
                let partial = (MIN_SECRET_CHARS..secret.len())
                    .rev()
                    .filter(|&n| secret.is_char_boundary(n))
                    .find(|&n| body.ends_with(&secret[..n]));
                if let Some(n) = partial {
                    let kept = body.len() - n;
                    out = Cow::Owned(format!("{}{REDACTED}…", &body[..kept]));
                    break;
                }
            }
        }
        out
    }

    /// [`Secrets::redact`] applied in place to one string.
    pub fn redact_in_place(&self, text: &mut String) {
        self.replace(text);
    }

    /// [`Secrets::redact_in_place`], telling whether the text changed.
    fn replace(&self, text: &mut String) -> bool {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
            return true;
        }
        false
    }

    /// Redacts every string and object key inside `value`; true when anything changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        if self.values.is_empty() {
            return false;
        }
        match value {
            Value::String(text) => self.replace(text),
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.redact_value(item) | changed),
            Value::Object(map) => {
                let needs_key_change = map.keys().any(|k| self.redact(k) != k.as_str());
                if needs_key_change {
                    let old = std::mem::take(map);
                    for (key, item) in old {
                        map.insert(self.redact(&key).into_owned(), item);
                    }
                }
                map.values_mut().fold(needs_key_change, |changed, item| {
                    self.redact_value(item) | changed
                })
            }
            _ => false,
        }
    }
}

/// The spellings of a secret that text handed out may hold: the value itself; the value made
/// inert as every quoted excerpt is (a tab as `\t`, U+202E as `\u{202e}`), since server output
/// is escaped before it is redacted; the value as a JSON string writes it (`\t`, `\u202e`),
/// which a server may echo in a body; and, for a value of several lines, each line long enough,
/// since a server that prints the value is read a line at a time.
fn spellings(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    let mut more = |spelling: String| {
        if spelling.chars().count() >= MIN_SECRET_CHARS && !out.contains(&spelling) {
            out.push(spelling);
        }
    };
    more(escape_controls(value).into_owned());
    more(json_spelling(value));
    if value.contains(['\n', '\r']) {
        value
            .split(['\n', '\r'])
            .for_each(|line| more(line.trim().to_owned()));
    }
    out
}

/// `value` as the inside of a JSON string, with every character that is unsafe on a terminal
/// written as a `\uXXXX` escape (as `ensure_ascii` encoders and `mcp-recovery` itself write it).
fn json_spelling(value: &str) -> String {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    let inner = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(&quoted);
    let mut out = String::with_capacity(inner.len());
    for c in inner.chars() {
        if is_unsafe_char(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn replaces_every_occurrence_and_the_credentials_alone() {
        let secrets = Secrets::new(["Bearer s3cret-token", "ab"]);
        assert_eq!(
            secrets.redact("got Bearer s3cret-token, then s3cret-token; ab"),
            "got ***, then ***; ab"
        );
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_cut_excerpt_loses_the_start_of_a_secret() {
        let secrets = Secrets::new(["s3cret-token"]);
        assert_eq!(secrets.redact("auth: s3cret-to…"), "auth: ***…");
        assert_eq!(secrets.redact("auth: s3c…"), "auth: s3c…");
    }

    #[test]
    fn escaped_spellings_are_redacted_too() {
        // Server output is made inert before it is redacted: the escaped spelling must go too.
        for secret in ["sec\tret", "SEC\u{202e}RETtok", "ENV\u{1b}[31mKEY"] {
            let secrets = Secrets::new([secret]);
            let escaped = escape_controls(secret);
            assert_ne!(escaped, secret);
            let line = format!("line 1 of stdout is not JSON: `{escaped}`");
            assert_eq!(secrets.redact(&line), "line 1 of stdout is not JSON: `***`");
            assert_eq!(secrets.redact(&format!("raw {secret}")), "raw ***");
            let json = serde_json::to_string(&json!({"key": secret})).unwrap();
            assert_eq!(secrets.redact(&json), r#"{"key":"***"}"#, "{json}");
            // Cut inside the escaped spelling: the beginning goes too.
            let cut = format!("key: {}…", &escaped[..escaped.len() - 2]);
            assert_eq!(secrets.redact(&cut), "key: ***…");
        }
        // An ensure_ascii JSON encoder writes U+202E as \u202e.
        let secrets = Secrets::new(["SEC\u{202e}RETtok"]);
        assert_eq!(
            secrets.redact(r#"{"k": "SEC\u202eRETtok"}"#),
            r#"{"k": "***"}"#
        );
        // A value over several lines is printed a line at a time.
        let secrets = Secrets::new(["first-line\nsecond-line"]);
        assert_eq!(
            secrets.redact("`first-line` then `second-line` and `first-line\\nsecond-line`"),
            "`***` then `***` and `***`"
        );
        // Short values stay unredacted, whatever their escaped spelling.
        assert!(Secrets::new(["a\tb"]).is_empty());
    }

    #[test]
    fn values_and_keys_inside_documents() {
        let secrets = Secrets::new(["hunter22"]);
        let mut doc = json!({"tools": [{"description": "key hunter22", "hunter22": 1}]});
        assert!(secrets.redact_value(&mut doc));
        assert_eq!(
            doc,
            json!({"tools": [{"description": "key ***", "***": 1}]})
        );
        // Whether anything changed is told apart, a key alone included.
        assert!(!secrets.redact_value(&mut json!({"a": ["b", 1, {"c": "d"}]})));
        assert!(secrets.redact_value(&mut json!({"a": [{"x hunter22": 1}]})));
        assert!(!Secrets::default().redact_value(&mut json!("hunter22")));
    }
}
