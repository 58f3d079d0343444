//! Text from input as printed for a person: the one escape every printer uses, so a document, a
//! server or a file name can neither drive a terminal nor rearrange what a reader sees.

use std::borrow::Cow;

/// What a secret is replaced with wherever text from input is printed or journaled.
pub const REDACTED: &str = "***";

/// Whether `c` must never reach a terminal, a prompt or a CI log raw: C0 controls (line breaks
/// and tabs included), DEL, C1 controls (`U+009B` is a one-byte CSI), the bidirectional
/// formatting characters that reorder what a reviewer reads, the Unicode line and paragraph
/// separators, and the invisible format characters (zero-width spaces and joiners, the word
/// joiner and invisible operators, the byte-order mark, the soft hyphen, tag characters and the
/// other characters of general category Cf), and the Unicode noncharacters (`U+FDD0`–`U+FDEF`
/// and the last two code points of every plane, `U+FFFE`, `U+FFFF`, `U+1FFFE` … `U+10FFFF`),
/// which XML 1.0 forbids or discourages and which no text meant for a reader holds.
///
/// Every character outside this class is one XML 1.0 can carry (see [`is_xml_char`]), so text
/// passed through [`escape_controls`] is also valid XML character data.
pub fn is_unsafe_char(c: char) -> bool {
    is_noncharacter(c)
        || matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
        )
}

/// Whether `c` is one of the 66 Unicode noncharacters: `U+FDD0`–`U+FDEF`, and `U+xFFFE` and
/// `U+xFFFF` in each of the 17 planes.
pub fn is_noncharacter(c: char) -> bool {
    let code = u32::from(c);
    (0xfdd0..=0xfdef).contains(&code) || code & 0xfffe == 0xfffe
}

/// Whether `c` matches the `Char` production of XML 1.0: `#x9 | #xA | #xD | [#x20-#xD7FF] |
/// [#xE000-#xFFFD] | [#x10000-#x10FFFF]` (a `char` is never a surrogate). Any other character
/// makes an XML document ill-formed, wherever it appears, attribute values included.
pub fn is_xml_char(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..
    )
}

/// Writes the visible escape of an unsafe character: `\n`, `\r`, `\t`, else `\u{1b}`.
pub fn push_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
    }
}

/// `text` with every [unsafe character](is_unsafe_char) replaced by its visible escape, so that
/// text taken from a document, a server or a file name prints as one inert line. Text without
/// one is returned as is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe_char(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text with every unsafe character outside C0 written as a `\uXXXX` escape: the same
/// JSON value, inert on a terminal. C0 controls are escaped in valid JSON already, and outside
/// strings JSON text is ASCII, so only string contents change. Text without one is returned as
/// is.
pub fn json_inert(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe_char(c) && u32::from(c) >= 0x20;
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            // A character past the BMP (a tag character) is written as its surrogate pair.
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// At most `max_chars` characters of `text`, cut on a character boundary, with `…` when
/// something was cut. Nothing is escaped: for text that is escaped when printed.
pub fn shorten(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// At most `max_chars` characters of `text`, [escaped](escape_controls), with `…` when something
/// was cut: input quoted in a message, inert whatever it holds.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    escape_controls(&shorten(text, max_chars)).into_owned()
}

/// [`excerpt`] of bytes that may not be UTF-8; decodes no more than the excerpt needs, since a
/// line may be megabytes long.
pub fn excerpt_bytes(bytes: &[u8], max_chars: usize) -> String {
    let head = &bytes[..bytes
        .len()
        .min(max_chars.saturating_mul(4).saturating_add(4))];
    let mut quoted = excerpt(&String::from_utf8_lossy(head), max_chars);
    if head.len() < bytes.len() && !quoted.ends_with('…') {
        quoted.push('…');
    }
    quoted
}

/// Escapes text for a Markdown table cell (CommonMark and GitHub Flavored Markdown), so that it
/// renders as the same text and nothing else: every ASCII punctuation character gets a
/// backslash (no `|` closes the cell, no `<` starts HTML, no `&` an entity, no backtick a code
/// span, no `[` a link), line breaks become spaces, other unsafe characters are written out.
/// Every Markdown output of input text (the census's, `lint --format markdown`) goes through it.
pub fn markdown_cell(text: &str) -> String {
    let flat = text.replace(['\r', '\n'], " ");
    let mut out = String::with_capacity(flat.len() + 8);
    for c in escape_controls(&flat).chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_unsafe_class() {
        let cases = [
            ("a\nb", "a\\nb"),
            ("a\r::stop-commands::x", "a\\r::stop-commands::x"),
            ("\t", "\\t"),
            (
                "x\u{1b}]0;pwned\u{7}\u{1b}[2J",
                "x\\u{1b}]0;pwned\\u{7}\\u{1b}[2J",
            ),
            (
                "\u{1b}]8;;http://e.test\u{1b}\\link",
                "\\u{1b}]8;;http://e.test\\u{1b}\\link",
            ),
            ("\u{1b}]52;c;cHduZWQ=\u{7}", "\\u{1b}]52;c;cHduZWQ=\\u{7}"),
            ("\u{7f}\u{80}\u{9b}\u{9f}", "\\u{7f}\\u{80}\\u{9b}\\u{9f}"),
            ("\u{202e}evil\u{202c}", "\\u{202e}evil\\u{202c}"),
            (
                "\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}",
                "\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
            ),
            ("\u{2028}\u{2029}\u{0}", "\\u{2028}\\u{2029}\\u{0}"),
            (
                "a\u{200b}b\u{200c}\u{200d}\u{2060}\u{feff}",
                "a\\u{200b}b\\u{200c}\\u{200d}\\u{2060}\\u{feff}",
            ),
            ("soft\u{ad}hyphen\u{e0041}", "soft\\u{ad}hyphen\\u{e0041}"),
        ];
        for (raw, escaped) in cases {
            assert_eq!(escape_controls(raw), escaped, "{raw:?}");
            assert!(!escape_controls(raw).chars().any(is_unsafe_char));
        }
        assert!(matches!(escape_controls("plain é 🦀 \\"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_unsafe_char_is_escaped() {
        let planes = (0..=0x3000u32)
            .chain(0xfe00..=0xffff)
            .chain(0xe0000..=0xe0080);
        for c in planes.filter_map(char::from_u32) {
            let text = c.to_string();
            let escaped = escape_controls(&text);
            assert!(!escaped.chars().any(is_unsafe_char), "{c:?}");
            assert_eq!(is_unsafe_char(c), escaped != text, "{c:?}");
        }
    }

    #[test]
    fn noncharacters_are_escaped() {
        let cases = [
            ("a\u{fffe}b\u{ffff}", "a\\u{fffe}b\\u{ffff}"),
            ("\u{fdd0}x\u{fdef}", "\\u{fdd0}x\\u{fdef}"),
            ("\u{1fffe}\u{1ffff}", "\\u{1fffe}\\u{1ffff}"),
            ("\u{10fffe}\u{10ffff}", "\\u{10fffe}\\u{10ffff}"),
        ];
        for (raw, escaped) in cases {
            assert_eq!(escape_controls(raw), escaped, "{raw:?}");
        }
        let nonchars: Vec<u32> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_noncharacter(c))
            .map(u32::from)
            .collect();
        assert_eq!(nonchars.len(), 66);
        let mut expected: Vec<u32> = (0xfdd0..=0xfdef).collect();
        for plane in 0..=0x10 {
            expected.extend([plane << 16 | 0xfffe, plane << 16 | 0xffff]);
        }
        expected.sort_unstable();
        assert_eq!(nonchars, expected);
        // Their neighbours are ordinary characters.
        for c in [
            '\u{fdcf}',
            '\u{fdf0}',
            '\u{fffd}',
            '\u{1fffd}',
            '\u{20000}',
            '\u{10fffd}',
        ] {
            assert!(!is_unsafe_char(c), "{c:?}");
        }
        assert_eq!(escape_controls(&shorten("ab\u{ffff}cd", 3)), "ab\\u{ffff}…");
    }

    #[test]
    fn escaped_text_is_xml_character_data() {
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            if !is_xml_char(c) {
                assert!(
                    is_unsafe_char(c),
                    "{c:?} is not an XML Char but is printed raw"
                );
            }
            assert!(
                escape_controls(&c.to_string()).chars().all(is_xml_char),
                "{c:?}"
            );
        }
        assert!(is_xml_char('\t') && is_xml_char('\u{d7ff}') && is_xml_char('\u{e000}'));
        assert!(is_xml_char('\u{10ffff}') && is_xml_char('\u{10000}') && is_xml_char('\u{fffd}'));
        assert!(!is_xml_char('\u{0}') && !is_xml_char('\u{1f}') && !is_xml_char('\u{fffe}'));
        assert!(!is_xml_char('\u{ffff}'));
    }

    #[test]
    fn excerpts_escape_and_shorten() {
        assert_eq!(excerpt("a\u{1b}[2Jb\r", 10), "a\\u{1b}[2Jb\\r");
        assert_eq!(
            excerpt("x\u{202e}y\u{2028}\u{200b}", 10),
            "x\\u{202e}y\\u{2028}\\u{200b}"
        );
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(shorten("a\u{1b}bc", 2), "a\u{1b}…");
        assert!(matches!(shorten("abc", 3), Cow::Borrowed(_)));
        assert_eq!(excerpt_bytes(b"ok\xff", 10), "ok\u{fffd}");
        assert_eq!(excerpt_bytes(&[b'x'; 10_000], 5), "xxxxx…");
    }

    #[test]
    fn markdown_cells_escape_everything_that_could_render() {
        assert_eq!(markdown_cell("a|b"), "a\\|b");
        assert_eq!(markdown_cell("<img src=x>"), "\\<img src\\=x\\>");
        assert_eq!(markdown_cell("[x](y)"), "\\[x\\]\\(y\\)");
        assert_eq!(
            markdown_cell("`code` *b* _i_"),
            "\\`code\\` \\*b\\* \\_i\\_"
        );
        assert_eq!(markdown_cell("&amp;"), "\\&amp\\;");
        assert_eq!(markdown_cell("line\nbreak\r"), "line break ");
        assert_eq!(markdown_cell("bell\u{7}"), "bell\\\\u\\{7\\}");
        assert_eq!(markdown_cell("plain text 12"), "plain text 12");
    }
}
