//! Values the client was given that must never be printed: header values and the environment
//! of a stdio server. A server may echo them (a 401 body quoting `Authorization`, a stack trace
//! on stderr listing the environment); every text the client hands out passes through
//! [`Secrets::redact`] first.

use std::borrow::Cow;

pub use mcp_recovery_base::text::REDACTED;
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
    /// credentials alone, which a server may echo without the scheme).
    pub fn add(&mut self, value: String) {
        let value = value.trim().to_string();
        if let Some((_, credentials)) = value.split_once(' ') {
            let credentials = credentials.trim();
            if credentials.chars().count() >= MIN_SECRET_CHARS {
                self.push(credentials.to_string());
            }
        }
        if value.chars().count() >= MIN_SECRET_CHARS {
            self.push(value);
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
