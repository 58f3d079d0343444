//! The `id` at the head of a line too long to read: a server's answer over the line limit is
//! dropped, and its `id` (which SDKs write before the result) still ends the request it
//! answers at once rather than at its deadline.

use serde_json::Value;

/// The `id` member of the top-level object `text` begins, read without building any member
/// before it; `None` when the text is no object, is cut before the `id`, or is malformed on
/// the way.
pub(super) fn id(text: &[u8]) -> Option<Value> {
    let mut at = blank(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = blank(text, at);
        let end = string_end(text, at)?;
        let name: String = serde_json::from_slice(&text[at..end]).ok()?;
        at = blank(text, end);
        if text.get(at) != Some(&b':') {
            return None;
        }
        at = blank(text, at + 1);
        let end = value_end(text, at)?;
        if name == "id" {
            return serde_json::from_slice(&text[at..end]).ok();
        }
        at = blank(text, end);
        if text.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

fn blank(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(|b| b" \t\r\n".contains(b)) {
        at += 1;
    }
    at
}

/// Where the string opening at `at` ends (past its closing quote).
fn string_end(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match text.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Where the value starting at `at` ends: a string, a container (its brackets counted, strings
/// inside skipped) or a scalar.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'"' => string_end(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match text.get(i)? {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while text.get(i).is_some_and(|b| !b",}] \t\r\n".contains(b)) {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_id_is_found_before_the_text_is_cut() {
        let id_of = |text: &str| id(text.as_bytes());
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"te"#),
            Some(json!(7))
        );
        assert_eq!(
            id_of(r#" { "jsonrpc" : "2.0" , "i\u0064" : "a\"b" , "result": "#),
            Some(json!("a\"b"))
        );
        // Members before it are skipped, whatever they hold.
        assert_eq!(
            id_of(r#"{"result":{"x":["}",{"y":"]\\"}],"z":1e5},"id":-3,"jsonrpc":"2.0"}"#),
            Some(json!(-3))
        );
        // Cut before the id, no object, malformed: nothing.
        for text in [
            r#"{"jsonrpc":"2.0","result":{"content":"#,
            r#"[{"id":1}]"#,
            r#"{"jsonrpc" "2.0","id":1}"#,
            r#"{"id":"#,
            "",
        ] {
            assert_eq!(id_of(text), None, "{text}");
        }
    }
}
