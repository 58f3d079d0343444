//! Values the client was given that must never be printed: header values and the environment
//! of a stdio server. A server may echo them (a 401 body quoting `Authorization`, a stack trace
//! on stderr listing the environment); every text the client hands out passes through
//! [`Secrets::redact`] first.

use std::borrow::Cow;

pub use mcp_recovery_base::text::REDACTED;
use mcp_recovery_base::text::{escape_controls, is_unsafe_char};
use serde_json::Value;

/// The shortest secret that is redacted, in characters (Unicode scalar values) of the value as
/// given, leading and trailing whitespace removed: 4. A shorter value (`1`, `on`, `dev`) is
/// printed as is wherever it appears, since replacing every occurrence of a word that short would
/// destroy messages while protecting nothing. The minimum applies to a header value and to its
/// credentials alone (`Bearer abc` is redacted, `abc` on its own is not), and to each line of a
/// value of several lines.
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
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    fn push(&mut self, value: String) {
        if !self.values.contains(&value) {
            self.values.push(value);
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
            let Some(&last) = body.as_bytes().last() else {
                return out;
            };
            for secret in &self.values {
                // Only a beginning of the secret that ends in the last byte of the text can be
                // the tail of the text.
                let partial = (MIN_SECRET_CHARS..secret.len())
                    .rev()
                    .filter(|&n| secret.as_bytes()[n - 1] == last && secret.is_char_boundary(n))
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
/// is escaped before it is redacted; the value as each common JSON encoder writes it inside a
/// string, once and twice (a JSON document quoted inside another), which a server may echo in a
/// body or on stderr (see [`Encoder`]), each also made inert; and, for a value of several lines,
/// each line long enough, since a server that prints the value is read a line at a time.
///
/// The number of spellings is bounded (at most two for each of the 28 encoders and each of two
/// levels, plus the raw and inert value and the lines) and most coincide: a secret of letters,
/// digits and `-` has one.
fn spellings(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    let mut more = |spelling: String| {
        for spelling in [escape_controls(&spelling).into_owned(), spelling] {
            if spelling.chars().count() >= MIN_SECRET_CHARS && !out.contains(&spelling) {
                out.push(spelling);
            }
        }
    };
    more(value.to_owned());
    for encoder in Encoder::all() {
        let once = encoder.quote(value);
        more(encoder.quote(&once));
        more(once);
    }
    if value.contains(['\n', '\r']) {
        value
            .split(['\n', '\r'])
            .for_each(|line| more(line.trim().to_owned()));
    }
    out
}

/// Which characters a JSON encoder writes as `\uXXXX` beyond the control characters every
/// encoder escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escaped {
    /// None: serde_json, JavaScript's `JSON.stringify`, `json.dumps(ensure_ascii=False)`.
    Required,
    /// Every [unsafe character](is_unsafe_char), as `mcp-recovery` itself writes JSON.
    Unsafe,
    /// `<`, `>`, `&`, U+2028 and U+2029: Go's `encoding/json`, Rails' `to_json`.
    Html,
    /// [`Escaped::Html`] and `=`, `'`: Gson.
    HtmlQuotes,
    /// Every character outside ASCII: Python's `json.dumps`, PHP's `json_encode`, Jackson with
    /// `ESCAPE_NON_ASCII`.
    NonAscii,
    /// [`Escaped::NonAscii`] and `<`, `>`, `&`, all in the same case of hex.
    NonAsciiHtml,
    /// [`Escaped::NonAscii`] and `<`, `>`, `&` in upper-case hex whatever the case of the others
    /// (`\u00e4\u003C`): PHP's `JSON_HEX_TAG | JSON_HEX_AMP`, Django's `json_script`.
    NonAsciiHexTag,
}

impl Escaped {
    fn escapes(self, c: char) -> bool {
        let html = matches!(c, '<' | '>' | '&');
        match self {
            Escaped::Required => false,
            Escaped::Unsafe => is_unsafe_char(c),
            Escaped::Html => html || matches!(c, '\u{2028}' | '\u{2029}'),
            Escaped::HtmlQuotes => html || matches!(c, '\u{2028}' | '\u{2029}' | '=' | '\''),
            Escaped::NonAscii => !c.is_ascii(),
            Escaped::NonAsciiHtml | Escaped::NonAsciiHexTag => html || !c.is_ascii(),
        }
    }
}

/// How a JSON encoder writes the inside of a string: `"`, `\` and the control characters as
/// JSON requires (`\n`, `\t`, … `\u001b`), the characters of its [`Escaped`] class as `\uXXXX`
/// (a character past the BMP as its surrogate pair), in lower- or upper-case hex, and `/` as
/// `\/` or as is.
#[derive(Debug, Clone, Copy)]
struct Encoder {
    escaped: Escaped,
    upper: bool,
    solidus: bool,
}

impl Encoder {
    /// Every combination: 28 encoders.
    fn all() -> impl Iterator<Item = Encoder> {
        use Escaped::*;
        [
            Required,
            Unsafe,
            Html,
            HtmlQuotes,
            NonAscii,
            NonAsciiHtml,
            NonAsciiHexTag,
        ]
        .into_iter()
        .flat_map(|escaped| {
            [(false, false), (true, false), (false, true), (true, true)].map(|(upper, solidus)| {
                Encoder {
                    escaped,
                    upper,
                    solidus,
                }
            })
        })
    }

    /// `value` as the inside of a JSON string this encoder writes.
    fn quote(self, value: &str) -> String {
        let mut out = String::with_capacity(value.len() + 8);
        for c in value.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' if self.solidus => out.push_str("\\/"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if c < ' ' || self.escaped.escapes(c) => {
                    let upper = self.upper
                        || (self.escaped == Escaped::NonAsciiHexTag
                            && matches!(c, '<' | '>' | '&'));
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        if upper {
                            out.push_str(&format!("\\u{unit:04X}"));
                        } else {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                }
                c => out.push(c),
            }
        }
        out
    }
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

    /// Each text holds the secret as one encoder writes it; each must come out as `***`.
    fn assert_redacted(secret: &str, texts: &[&str]) {
        let secrets = Secrets::new([secret]);
        for text in texts {
            let redacted = secrets.redact(text);
            assert_eq!(
                redacted.matches(REDACTED).count(),
                1,
                "{secret:?} in {text}: {redacted}"
            );
        }
    }

    #[test]
    fn every_common_json_encoder_spelling_is_redacted() {
        // Python's json.dumps (ensure_ascii): lower-case hex, surrogate pairs past the BMP;
        // Jackson's ESCAPE_NON_ASCII and others: upper-case hex.
        assert_redacted(
            "pässwörd-123",
            &[
                r#"{"API_KEY": "p\u00e4ssw\u00f6rd-123"}"#,
                r#"{"API_KEY":"p\u00E4ssw\u00F6rd-123"}"#,
                r#"{"API_KEY": "pässwörd-123"}"#,
                r#"error: {"body": "{\"API_KEY\": \"p\\u00e4ssw\\u00f6rd-123\"}"}"#,
            ],
        );
        assert_redacted(
            "key🦀-secret",
            &[r"key\ud83e\udd80-secret", r"key\uD83E\uDD80-secret"],
        );
        // Go's encoding/json: & < > and the line separators as \u escapes.
        assert_redacted(
            "Bearer ab&cd<ef>gh",
            &[
                r#"{"error":"bad credentials","header":"Bearer ab\u0026cd\u003cef\u003egh"}"#,
                r#"{"token":"ab\u0026cd\u003cef\u003egh"}"#,
                r#"{"token":"ab\u0026cd\u003Cef\u003Egh"}"#,
            ],
        );
        // PHP's JSON_HEX_TAG and Django's json_script: upper-case tags, lower-case others.
        assert_redacted(
            "<tök>&",
            &[r"\u003Ct\u00f6k\u003E\u0026", r"\u003Ct\u00F6k\u003E\u0026"],
        );
        assert_redacted("line\u{2028}sep", &[r#""line\u2028sep""#]);
        // PHP's json_encode: / as \/; Gson: = and ' as \u escapes too.
        assert_redacted(
            "abc/def+ghi=",
            &[
                r"abc\/def+ghi=",
                r"abc/def+ghi\u003d",
                r"abc\/def+ghi\u003D",
            ],
        );
        // Quotes, backslashes and controls, once and twice escaped.
        assert_redacted(
            "a\"b\\c\u{1b}d/é",
            &[
                r#"a\"b\\c\u001bd/é"#,
                r#"a\"b\\c\u001Bd\/\u00E9"#,
                r#"a\\\"b\\\\c\\u001bd/é"#,
                r#"a\\\"b\\\\c\\u001bd\\\/\\u00e9"#,
            ],
        );
    }

    #[test]
    fn spellings_match_real_encoders_and_stay_few() {
        let secret = "Tök<en>&/=\u{2028}🦀\"\\\t\u{1b}'end";
        let secrets = Secrets::new([secret]);
        // serde_json, once and twice (a JSON document inside a JSON string).
        let once = serde_json::to_string(&json!({ "k": secret })).unwrap();
        let twice = serde_json::to_string(&json!({ "body": once })).unwrap();
        assert_eq!(secrets.redact(&once), r#"{"k":"***"}"#);
        assert_eq!(secrets.redact(&twice), r#"{"body":"{\"k\":\"***\"}"}"#);
        // Every encoder's spelling, once and twice, raw or made inert.
        for encoder in Encoder::all() {
            let once = encoder.quote(secret);
            for text in [encoder.quote(&once), once] {
                let inert = escape_controls(&text).into_owned();
                for text in [text, inert] {
                    assert_eq!(secrets.redact(&format!("x{text}x")), "x***x", "{encoder:?}");
                }
            }
        }
        // Bounded, deduplicated, longest first.
        let all = spellings(secret);
        assert!(all.len() <= 2 + 2 * 2 * 28, "{}", all.len());
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
        assert!(secrets.values.windows(2).all(|w| w[0].len() >= w[1].len()));
        // A plain token has one spelling; one with a / three (as is, \/ once and \\\/ twice).
        assert_eq!(spellings("s3cret-TOKEN_42").len(), 1);
        assert_eq!(spellings("abc/def").len(), 3);
        // Short values stay unredacted in every spelling.
        assert!(Secrets::new(["ä/&"]).is_empty());
        assert_eq!(
            Secrets::new(["äöü"]).redact(r"\u00e4\u00f6\u00fc"),
            r"\u00e4\u00f6\u00fc"
        );
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
