//! Tool names as rules match them: globs whose letters match either case, and names folded
//! so look-alike spellings compare equal.

/// Matches `*` (any run, also empty) and `?` (one character); everything else literally, except
/// that ASCII letters match either case (`purge_*` matches `PURGE_everything`: servers that
/// look tools up case-insensitively must not get around a rule by a spelling).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c.eq_ignore_ascii_case(&text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A tool name as it looks: invisible format characters dropped, fullwidth forms and the Cyrillic
/// and Greek letters that look like Latin ones mapped to those, then lowercased. Two names that
/// fold alike look alike to a person (and to some servers).
pub fn fold_name(name: &str) -> String {
    name.chars()
        .filter(|&c| !mcp_recovery_base::text::is_unsafe_char(c))
        .map(|c| match u32::from(c) {
            // Fullwidth ASCII (U+FF01 to U+FF5E) is ASCII shifted by U+FEE0.
            code @ 0xff01..=0xff5e => char::from_u32(code - 0xfee0).unwrap_or(c),
            _ => LOOKALIKES
                .iter()
                .find(|(from, _)| *from == c)
                .map_or(c, |&(_, to)| to),
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Letters of other scripts drawn like Latin ones (after Unicode's confusables list).
const LOOKALIKES: &[(char, char)] = &[
    ('а', 'a'),
    ('в', 'b'),
    ('е', 'e'),
    ('к', 'k'),
    ('м', 'm'),
    ('н', 'h'),
    ('о', 'o'),
    ('р', 'p'),
    ('с', 'c'),
    ('т', 't'),
    ('у', 'y'),
    ('х', 'x'),
    ('ѕ', 's'),
    ('і', 'i'),
    ('ј', 'j'),
    ('ԁ', 'd'),
    ('ԛ', 'q'),
    ('ԝ', 'w'),
    ('һ', 'h'),
    ('ӏ', 'l'),
    ('ɡ', 'g'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('К', 'K'),
    ('М', 'M'),
    ('Н', 'H'),
    ('О', 'O'),
    ('Р', 'P'),
    ('С', 'C'),
    ('Т', 'T'),
    ('Х', 'X'),
    ('Ѕ', 'S'),
    ('І', 'I'),
    ('Ј', 'J'),
    ('α', 'a'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ν', 'v'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('υ', 'u'),
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
    ('ı', 'i'),
    ('ſ', 's'),
    ('\u{212a}', 'K'),
    ('\u{2160}', 'I'),
    ('\u{217c}', 'l'),
];
