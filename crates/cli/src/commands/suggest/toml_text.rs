//! TOML text made inert: every string (value or quoted key) that holds a line break or a
//! character unsafe on a terminal is written as a one-line basic string with escapes, so a draft
//! shows no bidi control raw and no name can start a line of its own (`[tools.x]`) in the file a
//! reviewer reads. Every other byte stays as the TOML writer made it.

use mcp_recovery_base::text::is_unsafe_char;

/// `text` (TOML) with its strings made inert; comments are passed as they are (the draft's own
/// are escaped when written).
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['"', '\'', '#']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if rest.starts_with('#') {
            let end = rest.find('\n').unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let delimiter = ["\"\"\"", "'''", "\"", "'"]
            .into_iter()
            .find(|d| rest.starts_with(d))
            .unwrap_or("\"");
        let basic = delimiter.starts_with('"');
        let body = &rest[delimiter.len()..];
        let Some(end) = closing(body, delimiter, basic) else {
            // Not TOML this writer makes: left as it is.
            out.push_str(rest);
            return out;
        };
        let raw = &body[..end];
        // A line break right after an opening `"""` or `'''` is no part of the string.
        let raw = match delimiter.len() {
            3 => raw.strip_prefix('\n').unwrap_or(raw),
            _ => raw,
        };
        if raw.chars().any(|c| c == '\n' || is_unsafe_char(c)) {
            out.push('"');
            escape_into(&mut out, raw, basic);
            out.push('"');
        } else {
            out.push_str(&rest[..delimiter.len() + end + delimiter.len()]);
        }
        rest = &body[end + delimiter.len()..];
    }
    out.push_str(rest);
    out
}

/// Where the string whose body starts `body` ends: the offset of its closing delimiter (in a
/// basic string, escapes skipped; a closing `"""` may follow up to two quotes of the string).
fn closing(body: &str, delimiter: &str, basic: bool) -> Option<usize> {
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        if basic && c == '\\' {
            chars.next();
        } else if body[at..].starts_with(delimiter) {
            let extra = body[at + delimiter.len()..]
                .chars()
                .take_while(|&q| delimiter.len() == 3 && q == delimiter.as_bytes()[0] as char)
                .take(2)
                .count();
            return Some(at + extra);
        }
    }
    None
}

/// Writes the string `raw` (the body of a basic string, its escapes kept, or of a literal one,
/// which has none) as the body of a one-line basic string.
fn escape_into(out: &mut String, raw: &str, basic: bool) {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if basic => {
                out.push('\\');
                out.extend(chars.next());
            }
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if is_unsafe_char(c) && u32::from(c) > 0xffff => {
                out.push_str(&format!("\\U{:08X}", u32::from(c)));
            }
            c if is_unsafe_char(c) => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_with_breaks_or_unsafe_characters_become_escaped_basic_strings() {
        let value = serde_json::json!({"tools": {"a\u{202e}b\n[tools.x]": {
            "s": "x\u{202e}y\n[tools.y]\nz", "q": "a\"b\\c\u{2028}", "plain": "ok 'q' \"d\"",
            "c": "\u{1b}[31m", "tag": "t\u{e0041}", "ends": "line\n\"\"",
            "# not a comment": "x", "n": 1
        }}});
        let text = inert(&toml::to_string(&value).unwrap());
        assert!(!text.chars().any(is_unsafe_char_but_newline), "{text}");
        for line in text.lines() {
            assert!(!line.starts_with("[tools.x]") && !line.starts_with("[tools.y]"), "{text}");
        }
        let back: serde_json::Value = toml::from_str(&text).unwrap();
        assert_eq!(back, value, "{text}");
        // Nothing changes in text that needs no escape.
        let plain = "[tools.create_note]\nname = 'a\"b'\nother = \"x\" # c \"'\n";
        assert_eq!(inert(plain), plain);
    }

    fn is_unsafe_char_but_newline(c: char) -> bool {
        c != '\n' && is_unsafe_char(c)
    }
}
