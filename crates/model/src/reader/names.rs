//! Group names a pattern may write more than once, in different branches of an alternation
//! (`(?:+++ b/(?<path>…)|Binary files … b/(?<path>…) differ)`): the regular expression engine
//! takes each name once, so every repetition is renamed `NAME[N]` before compiling, and the
//! value read names the member by what the pattern wrote.

use std::collections::HashMap;

/// `pattern` with the second and later groups of each name renamed `NAME[2]`, `NAME[3]`, …;
/// `Err` for a name that is not letters, digits and `_` (the renamed spelling is reserved).
pub(super) fn distinct(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    // Depth in a character class, where `(` and `?` are literal.
    let mut class = 0usize;
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if c == '\\' {
            let escaped = rest[1..].chars().next().map_or(0, char::len_utf8);
            out.push_str(&rest[..1 + escaped]);
            rest = &rest[1 + escaped..];
            continue;
        }
        if class > 0 {
            match c {
                '[' => class += 1,
                ']' => class -= 1,
                _ => {}
            }
        } else if c == '[' {
            class = 1;
            // A `]` first in a class (after an optional `^`) is literal.
            let opening = if rest[1..].starts_with("^]") {
                3
            } else if rest[1..].starts_with(']') {
                2
            } else {
                1
            };
            out.push_str(&rest[..opening]);
            rest = &rest[opening..];
            continue;
        } else if let Some(after) = rest
            .strip_prefix("(?P<")
            .or_else(|| rest.strip_prefix("(?<"))
            && let Some(end) = after.find('>')
        {
            let name = &after[..end];
            if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(format!(
                    "the group name '{name}' is not letters, digits and `_`"
                ));
            }
            let count = seen.entry(name).or_insert(0);
            *count += 1;
            out.push_str("(?<");
            out.push_str(name);
            if *count > 1 {
                out.push_str(&format!("[{count}]"));
            }
            out.push('>');
            rest = &after[end + 1..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Ok(out)
}

/// The name a pattern wrote for a group `distinct` may have renamed.
pub(super) fn written(name: &str) -> &str {
    name.split_once('[').map_or(name, |(written, _)| written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_are_numbered_outside_classes_and_escapes() {
        assert_eq!(
            distinct(r"(?<a>x)|(?P<a>y)|(?<b>z)|(?<a>w)").unwrap(),
            r"(?<a>x)|(?<a[2]>y)|(?<b>z)|(?<a[3]>w)"
        );
        // Not groups: an escaped parenthesis, a class holding the characters.
        assert_eq!(
            distinct(r"\(?<a>[(?<a>]x[]a](?<a>y)").unwrap(),
            r"\(?<a>[(?<a>]x[]a](?<a>y)"
        );
        assert_eq!(
            distinct(r"[^](?<a>][[:alpha:]](?<a>.)").unwrap(),
            r"[^](?<a>][[:alpha:]](?<a>.)"
        );
        assert!(distinct(r"(?<a[1]>x)").unwrap_err().contains("a[1]"));
        assert_eq!(written("path[2]"), "path");
        assert_eq!(written("path"), "path");
    }
}
