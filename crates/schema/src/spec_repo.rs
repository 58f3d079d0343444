//! The SEP-3172 changes to a checkout of the MCP specification repository, as text.
//!
//! A protocol version lives in `schema/<version>/`: `schema.ts` (the source of truth, from which
//! the repository generates `schema.json` and the schema reference) and
//! `examples/<TypeName>/*.json`. [`patch_schema_ts`] adds the `recovery` member to
//! `ToolAnnotations` and the generated declarations after it; running it again on its own output
//! changes nothing, and on an older output replaces what it wrote before. The file I/O is the
//! caller's.

use crate::examples::{Example, ExampleError};
use crate::typescript::{
    ADDED_MEMBER, BLOCK_BEGIN, BLOCK_END, EXTENDED_INTERFACE, TypeScriptError, added_member,
    declarations,
};

/// The version directory a SEP targets unless told otherwise: new schema changes go to `draft`.
pub const DEFAULT_VERSION: &str = "draft";

/// Why `schema.ts` cannot be patched, or the generated text cannot be produced.
#[derive(Debug, thiserror::Error)]
pub enum SpecRepoError {
    /// The version is neither `draft` nor a `YYYY-MM-DD` date.
    #[error("'{0}' is not a protocol version directory name (expected 'draft' or YYYY-MM-DD)")]
    Version(String),
    /// `schema.ts` has no single `interface ToolAnnotations` to extend.
    #[error("{0}")]
    Interface(String),
    /// `schema.ts` already declares a generated name outside the generated block.
    #[error(
        "schema.ts already declares `{0}` outside the generated block; remove that declaration and run again"
    )]
    Declared(String),
    /// The begin marker of the generated block has no end marker after it.
    #[error("schema.ts has the generated block's first line but not its last line ({BLOCK_END})")]
    Unterminated,
    /// The TypeScript generator failed (a defect, not bad input).
    #[error("cannot generate the TypeScript declarations: {0}")]
    TypeScript(#[from] TypeScriptError),
    /// An example failed to build (a defect, not bad input).
    #[error("cannot generate the examples: {0}")]
    Example(#[from] ExampleError),
}

/// True for `draft` and for a `YYYY-MM-DD` date: the only names a version directory has.
pub fn is_version(name: &str) -> bool {
    if name == "draft" {
        return true;
    }
    let bytes = name.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

/// The checked version directory name.
pub fn version(name: &str) -> Result<&str, SpecRepoError> {
    if is_version(name) {
        Ok(name)
    } else {
        Err(SpecRepoError::Version(name.to_owned()))
    }
}

/// Every example, with its path relative to the version directory and its file content.
pub fn example_files() -> Result<Vec<(String, String)>, SpecRepoError> {
    Ok(crate::examples::tool_examples()?
        .iter()
        .map(|example: &Example| (example.path(), pretty(&example.value)))
        .collect())
}

/// Pretty JSON with a trailing newline, as committed.
pub fn pretty(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// `schema.ts` with `recovery` added to `ToolAnnotations` and the generated declarations
/// placed right after that interface (or where a previous run put them).
pub fn patch_schema_ts(source: &str) -> Result<String, SpecRepoError> {
    let crlf = source.contains("\r\n");
    let source = source.replace("\r\n", "\n");
    let member = added_member()?;
    let block = format!("{BLOCK_BEGIN}\n\n{}\n{BLOCK_END}\n", declarations()?);

    let with_member = {
        let code = CodeMap::new(&source);
        let (open, close) = code.interface_body(&source, EXTENDED_INTERFACE)?;
        match code.member(&source, open, close, ADDED_MEMBER) {
            Some((start, end)) => format!("{}{member}{}", &source[..start], &source[end..]),
            None if !source[open..close].contains('\n') => {
                if !source[open + 1..close].trim().is_empty() {
                    return Err(SpecRepoError::Interface(format!(
                        "the body of `interface {EXTENDED_INTERFACE}` is on one line; format schema.ts (npm run format:schema) and run again"
                    )));
                }
                format!("{}{{\n{member}}}{}", &source[..open], &source[close + 1..])
            }
            None => {
                let line_start = source[..close].rfind('\n').map_or(0, |i| i + 1);
                let empty = source[open + 1..close].trim().is_empty();
                let gap = if empty { "" } else { "\n" };
                format!(
                    "{}{gap}{member}{}",
                    &source[..line_start],
                    &source[line_start..]
                )
            }
        }
    };

    let patched = match with_member.find(BLOCK_BEGIN) {
        Some(begin) => {
            let end = with_member[begin..]
                .find(BLOCK_END)
                .map(|i| begin + i + BLOCK_END.len())
                .ok_or(SpecRepoError::Unterminated)?;
            let end = if with_member[end..].starts_with('\n') {
                end + 1
            } else {
                end
            };
            format!("{}{block}{}", &with_member[..begin], &with_member[end..])
        }
        None => {
            let code = CodeMap::new(&with_member);
            for name in generated_names() {
                if code.declares(&with_member, &name) {
                    return Err(SpecRepoError::Declared(name));
                }
            }
            let (_, close) = code.interface_body(&with_member, EXTENDED_INTERFACE)?;
            let after = with_member[close..]
                .find('\n')
                .map_or(with_member.len(), |i| close + i + 1);
            let (head, tail) = with_member.split_at(after);
            let head = if head.ends_with('\n') {
                head.to_owned()
            } else {
                format!("{head}\n")
            };
            let gap = if tail.is_empty() || tail.starts_with('\n') {
                ""
            } else {
                "\n"
            };
            format!("{head}\n{block}{gap}{tail}")
        }
    };
    Ok(if crlf {
        patched.replace('\n', "\r\n")
    } else {
        patched
    })
}

/// The names the generated block declares.
fn generated_names() -> Vec<String> {
    match crate::sep_defs().get("$defs") {
        Some(serde_json::Value::Object(defs)) => defs
            .keys()
            .filter(|k| *k != EXTENDED_INTERFACE)
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// Which bytes of a TypeScript source are code, as opposed to comments and string literals.
struct CodeMap {
    code: Vec<bool>,
}

impl CodeMap {
    fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let mut code = vec![true; bytes.len()];
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            let end = match bytes[i] {
                b'/' if bytes.get(i + 1) == Some(&b'/') => bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p),
                b'/' if bytes.get(i + 1) == Some(&b'*') => source[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2),
                quote @ (b'"' | b'\'' | b'`') => {
                    let mut j = i + 1;
                    while j < bytes.len() && bytes[j] != quote {
                        j += if bytes[j] == b'\\' { 2 } else { 1 };
                    }
                    (j + 1).min(bytes.len())
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
            code[start..end].iter_mut().for_each(|c| *c = false);
            i = end;
        }
        Self { code }
    }

    fn is_code(&self, range: std::ops::Range<usize>) -> bool {
        self.code.get(range).is_some_and(|r| r.iter().all(|c| *c))
    }

    /// Start offsets of `word` as a whole identifier in code.
    fn words<'a>(&'a self, source: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        source
            .match_indices(word)
            .map(|(i, _)| i)
            .filter(move |&i| {
                let bytes = source.as_bytes();
                self.is_code(i..i + word.len())
                    && (i == 0 || !ident(bytes[i - 1]))
                    && bytes.get(i + word.len()).is_none_or(|b| !ident(*b))
            })
    }

    /// Byte offset of the name following `keyword` (`interface`, `type`) declaring `name`.
    fn declarations_of(&self, source: &str, name: &str) -> Vec<usize> {
        self.words(source, name)
            .filter(|&i| {
                let before = source[..i].trim_end();
                ["interface", "type", "class", "enum"].iter().any(|k| {
                    before.ends_with(k) && self.is_code(before.len() - k.len()..before.len())
                })
            })
            .collect()
    }

    fn declares(&self, source: &str, name: &str) -> bool {
        !self.declarations_of(source, name).is_empty()
    }

    /// Offsets of the `{` and `}` of the one `interface <name>` body.
    fn interface_body(&self, source: &str, name: &str) -> Result<(usize, usize), SpecRepoError> {
        let found: Vec<usize> = self
            .declarations_of(source, name)
            .into_iter()
            .filter(|&i| source[..i].trim_end().ends_with("interface"))
            .collect();
        let at = match found.as_slice() {
            [one] => *one,
            [] => {
                return Err(SpecRepoError::Interface(format!(
                    "schema.ts declares no `interface {name}` to add `{ADDED_MEMBER}` to"
                )));
            }
            _ => {
                return Err(SpecRepoError::Interface(format!(
                    "schema.ts declares `interface {name}` {} times; which one to extend is ambiguous",
                    found.len()
                )));
            }
        };
        let bytes = source.as_bytes();
        let open = (at..bytes.len())
            .find(|&i| bytes[i] == b'{' && self.code[i])
            .ok_or_else(|| unclosed(name))?;
        let mut depth = 0usize;
        for (i, byte) in bytes.iter().enumerate().skip(open) {
            if !self.code[i] {
                continue;
            }
            match byte {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok((open, i));
                    }
                }
                _ => {}
            }
        }
        Err(unclosed(name))
    }

    /// The byte range of the member `name` inside a body, from the first line of its doc comment
    /// to the end of its line, when the body declares it.
    fn member(
        &self,
        source: &str,
        open: usize,
        close: usize,
        name: &str,
    ) -> Option<(usize, usize)> {
        let bytes = source.as_bytes();
        let at = self.words(source, name).find(|&i| {
            i > open
                && i < close
                && self.depth(source, open, i) == 1
                && source[i + name.len()..]
                    .trim_start()
                    .starts_with([':', '?'])
        })?;
        let mut start = source[..at].rfind('\n').map_or(0, |i| i + 1);
        let before = source[..start].trim_end();
        if let Some(doc) = before.strip_suffix("*/").and_then(|b| b.rfind("/**")) {
            start = source[..doc].rfind('\n').map_or(0, |i| i + 1);
        }
        let mut end = at;
        let mut depth = 0usize;
        while end < close {
            if self.code[end] {
                match bytes[end] {
                    b'{' | b'(' | b'[' | b'<' => depth += 1,
                    b'}' | b')' | b']' | b'>' => depth = depth.saturating_sub(1),
                    b';' | b',' if depth == 0 => {
                        end += 1;
                        break;
                    }
                    b'\n' if depth == 0 => break,
                    _ => {}
                }
            }
            end += 1;
        }
        let end = source[end..close].find('\n').map_or(close, |i| end + i + 1);
        Some((start, end))
    }

    /// Brace depth at `at`, counting from the body's `{` at `open`.
    fn depth(&self, source: &str, open: usize, at: usize) -> usize {
        source.as_bytes()[open..at]
            .iter()
            .enumerate()
            .filter(|(i, _)| self.code[open + i])
            .fold(0usize, |d, (_, b)| match b {
                b'{' => d + 1,
                b'}' => d.saturating_sub(1),
                _ => d,
            })
    }
}

fn unclosed(name: &str) -> SpecRepoError {
    SpecRepoError::Interface(format!(
        "the body of `interface {name}` in schema.ts is not closed"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA_TS: &str = r#"/* Tools */
/**
 * Additional properties describing a {@link Tool} to clients.
 */
export interface ToolAnnotations {
  /**
   * A human-readable title for the tool. Not "}" nor `}`.
   */
  title?: string;

  // A note with a } brace.
  openWorldHint?: boolean;
}

/**
 * Definition for a tool the client can call.
 */
export interface Tool {
  annotations?: ToolAnnotations;
}
"#;

    fn patched(source: &str) -> String {
        patch_schema_ts(source).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn adds_the_member_and_the_block_after_the_interface() {
        let out = patched(SCHEMA_TS);
        let member = added_member().unwrap_or_else(|e| panic!("{e}"));
        let interface_end = out.find("\n}\n").unwrap_or(0);
        let member_at = out.find(&member).unwrap_or(usize::MAX);
        assert!(member_at < interface_end, "{out}");
        assert!(out.contains("  openWorldHint?: boolean;\n\n  /**"), "{out}");
        let block = out.find(BLOCK_BEGIN).unwrap_or(0);
        assert!(block > interface_end && block < out.find("export interface Tool ").unwrap_or(0));
        assert!(out.contains("export interface Recovery {"));
        assert!(out.ends_with("export interface Tool {\n  annotations?: ToolAnnotations;\n}\n"));
        assert_eq!(out.matches(BLOCK_BEGIN).count(), 1);
        assert!(
            out.contains(&format!("}}\n\n{BLOCK_BEGIN}\n\n/**")),
            "{out}"
        );
        assert!(
            out.contains(&format!("\n{BLOCK_END}\n\n/**\n * Definition")),
            "{out}"
        );
        assert!(!out.contains("\n\n\n"), "{out}");
        let tight = patched("interface ToolAnnotations {}\nexport interface Tool {}\n");
        assert!(
            tight.contains(&format!("{BLOCK_END}\n\nexport interface Tool")),
            "{tight}"
        );
        let last = patched("interface ToolAnnotations {}");
        assert!(last.ends_with(&format!("{BLOCK_END}\n")), "{last}");
    }

    #[test]
    fn running_again_changes_nothing() {
        let once = patched(SCHEMA_TS);
        assert_eq!(patched(&once), once);
    }

    #[test]
    fn an_older_output_is_replaced_not_duplicated() {
        let once = patched(SCHEMA_TS);
        let older = once
            .replace("recovery?: Recovery;", "recovery?: OldRecovery;")
            .replace("export interface Recovery {", "export interface OldShape {");
        assert_eq!(patched(&older), once);
    }

    #[test]
    fn crlf_sources_stay_crlf() {
        let crlf = SCHEMA_TS.replace('\n', "\r\n");
        let out = patched(&crlf);
        assert!(!out.replace("\r\n", "").contains('\n'));
        assert_eq!(out.replace("\r\n", "\n"), patched(SCHEMA_TS));
    }

    #[test]
    fn refuses_what_it_cannot_patch_safely() {
        let cases = [
            (
                "export interface Tool {}\n",
                "declares no `interface ToolAnnotations`",
            ),
            (
                "interface ToolAnnotations {}\ninterface ToolAnnotations {}\n",
                "2 times",
            ),
            (
                "interface ToolAnnotations {\n  title?: string;\n",
                "is not closed",
            ),
            (
                "interface ToolAnnotations { title?: string }\n",
                "is on one line",
            ),
            (
                "interface ToolAnnotations {}\nexport interface Recovery {}\n",
                "already declares `Recovery`",
            ),
            (
                &format!("interface ToolAnnotations {{}}\n{BLOCK_BEGIN}\n"),
                "not its last line",
            ),
        ];
        for (source, expected) in cases {
            let message = patch_schema_ts(source)
                .map(|_| ())
                .err()
                .map(|e| e.to_string());
            assert!(
                message.as_deref().is_some_and(|m| m.contains(expected)),
                "{source:?}: {message:?}"
            );
        }
    }

    #[test]
    fn names_in_comments_and_strings_are_not_declarations() {
        let source = "// interface ToolAnnotations {\nconst s = \"interface ToolAnnotations\";\nexport interface ToolAnnotations {}\n/** type Recovery = 1 */\n";
        let out = patched(source);
        assert!(
            out.contains("export interface ToolAnnotations {\n  /**"),
            "{out}"
        );
    }

    #[test]
    fn versions_are_draft_or_dates() {
        for ok in ["draft", "2026-07-28", "2025-11-25"] {
            assert!(is_version(ok), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "2026-7-28",
            "2026-07-28/..",
            "Draft",
            "2026_07_28",
        ] {
            assert!(!is_version(bad), "{bad}");
        }
    }
}
