//! HTTP headers given on the command line, with values that may come from the environment.

use std::fmt;

use crate::error::ClientError;

/// One HTTP header sent with every request to a Streamable HTTP server.
///
/// Its `Debug` output and every error about it show the name only: values are often secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    name: String,
    value: String,
}

impl Header {
    /// A header from a name and an already resolved value.
    pub fn new(name: &str, value: &str) -> Result<Header, ClientError> {
        let name = name.trim();
        check_name(name)?;
        let value = value.trim();
        check_value(name, value)?;
        Ok(Header {
            name: name.to_string(),
            value: value.to_string(),
        })
    }

    /// Parses `Name: value`, replacing each `${VAR}` in the value with the environment
    /// variable `VAR`, so that `--header 'Authorization: Bearer ${TOKEN}'` keeps the token out
    /// of the command line and of logs. A `$` not followed by `{` is literal.
    pub fn parse(spec: &str) -> Result<Header, ClientError> {
        Header::parse_with(spec, |var| std::env::var(var).ok())
    }

    /// [`Header::parse`] with an explicit variable lookup (for callers with their own environment).
    pub fn parse_with(
        spec: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Header, ClientError> {
        let Some((name, template)) = spec.split_once(':') else {
            // Without a colon there is no telling name from value (`Authorization Bearer abc`),
            // so none of the text is repeated: it may be a token.
            return Err(ClientError::InvalidHeader {
                name: String::new(),
                reason: "expected `Name: value` with a colon (the text given is not shown, as \
                         it may hold a secret)"
                    .into(),
            });
        };
        let name = name.trim();
        if check_name(name).is_err() {
            // A name that is not a token may be a value typed in its place: never echo it.
            return Err(invalid(
                "",
                "the text before the first colon is not a header name (letters, digits and \
                 !#$%&'*+-.^_`|~ only; the text is not shown, as it may hold a secret)",
            ));
        }
        let value = expand(name, template, lookup)?;
        Header::new(name, &value)
    }

    /// The header name as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header value (a secret, perhaps: do not log it).
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Header")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

fn invalid(name: &str, reason: impl Into<String>) -> ClientError {
    ClientError::InvalidHeader {
        name: name.chars().take(64).collect(),
        reason: reason.into(),
    }
}

/// RFC 9110 `token`: the characters a field name may use.
fn check_name(name: &str) -> Result<(), ClientError> {
    if name.is_empty() {
        return Err(invalid(name, "the name is empty"));
    }
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if !name.chars().all(token) {
        return Err(invalid(
            name,
            "the name may use only letters, digits and !#$%&'*+-.^_`|~",
        ));
    }
    Ok(())
}

fn check_value(name: &str, value: &str) -> Result<(), ClientError> {
    // Visible ASCII, spaces and tabs only: no CR/LF that could split the request.
    let allowed = |c: char| c == '\t' || (' '..='~').contains(&c);
    if !value.chars().all(allowed) {
        return Err(invalid(
            name,
            "the value contains a control or non-ASCII character",
        ));
    }
    Ok(())
}

fn expand(
    name: &str,
    template: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ClientError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(invalid(name, "`${` without a closing `}`"));
        };
        let var = &after[..end];
        let var_ok = !var.is_empty()
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !var.starts_with(|c: char| c.is_ascii_digit());
        if !var_ok {
            return Err(invalid(
                name,
                format!("`${{{var}}}` is not an environment variable name"),
            ));
        }
        match lookup(var) {
            Some(value) => out.push_str(&value),
            None => {
                return Err(invalid(
                    name,
                    format!("the environment variable {var} is not set"),
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        (var == "TOKEN").then(|| "s3cret".to_string())
    }

    #[test]
    fn literal_and_expanded_values() {
        let h = Header::parse_with("X-Api-Version: 2", env).unwrap();
        assert_eq!((h.name(), h.value()), ("X-Api-Version", "2"));
        let h = Header::parse_with("Authorization: Bearer ${TOKEN}", env).unwrap();
        assert_eq!(h.value(), "Bearer s3cret");
        let h = Header::parse_with("X-Price: $5 ${TOKEN}${TOKEN}", env).unwrap();
        assert_eq!(h.value(), "$5 s3crets3cret");
    }

    #[test]
    fn secrets_never_show() {
        let h = Header::parse_with("Authorization: Bearer ${TOKEN}", env).unwrap();
        assert!(!format!("{h:?}").contains("s3cret"));
        let err = Header::parse_with("Authorization: Bearer ${MISSING}", env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid header \"Authorization\": the environment variable MISSING is not set"
        );
        let err = Header::parse_with("X-Key: line\r\nInjected: yes", env).unwrap_err();
        assert!(!err.to_string().contains("Injected"));
        // A forgotten colon or a value typed in the name's place never echoes the text.
        for spec in ["Authorization Bearer s3cret", "Bearer s3cret: x", "s3cret"] {
            let err = Header::parse_with(spec, env).unwrap_err();
            assert!(!err.to_string().contains("s3cret"), "{spec}: {err}");
        }
    }

    #[test]
    fn malformed_specs() {
        for spec in [
            "no colon",
            ": empty name",
            "Bad Name: v",
            "X: ${",
            "X: ${1A}",
            "X: ${}",
        ] {
            assert!(
                matches!(
                    Header::parse_with(spec, env),
                    Err(ClientError::InvalidHeader { .. })
                ),
                "{spec}"
            );
        }
    }
}
