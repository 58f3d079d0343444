//! The proxy's policy loader on any text: `PolicyFile::parse` never panics and refuses with a
//! message; the first lines of the text, taken as tool names and as globs, match exactly when
//! a dynamic-programming matcher says they do (ASCII letters in either case), and every glob matches its own text
//! with `*` read as nothing and `?` as one character; `Policy::decide` on an accepted
//! file, with some lines as `--deny`/`--ask`/`--allow` flags, picks the first flag, then the
//! first tool rule, then the class action, and names the rule that decided.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_recovery_proxy::{Action, Class, Policy, PolicyFile, glob_match};

/// Lines taken as tool names and globs (each pair is matched, so keep it small).
const LINES: usize = 8;

/// The textbook dynamic-programming glob matcher (ASCII letters in either case): `matches[i][j]` says whether the first `i`
/// characters of the glob match the first `j` characters of the text.
fn reference_match(glob: &str, text: &str) -> bool {
    let glob: Vec<char> = glob.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let mut matches = vec![vec![false; text.len() + 1]; glob.len() + 1];
    matches[0][0] = true;
    for i in 1..=glob.len() {
        for j in 0..=text.len() {
            matches[i][j] = match glob[i - 1] {
                '*' => matches[i - 1][j] || (j > 0 && matches[i][j - 1]),
                '?' => j > 0 && matches[i - 1][j - 1],
                c => j > 0 && text[j - 1].eq_ignore_ascii_case(&c) && matches[i - 1][j - 1],
            };
        }
    }
    matches[glob.len()][text.len()]
}

fn class_action(file: &PolicyFile, class: Class) -> Option<Action> {
    let classes = &file.classes;
    match class {
        Class::ReadOnly => classes.read_only,
        Class::Compensable => classes.compensable,
        Class::Irreversible => classes.irreversible,
        Class::Destructive => classes.destructive,
        Class::Unknown => classes.unknown,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines: Vec<&str> = text.lines().take(LINES).collect();
    for glob in &lines {
        for name in &lines {
            assert_eq!(
                glob_match(glob, name),
                reference_match(glob, name),
                "glob {glob:?} on {name:?}"
            );
        }
        // Every glob matches its own text with `*` taken as empty and `?` as one character.
        assert!(
            glob_match(glob, &glob.replace('*', "").replace('?', "x")),
            "{glob:?}"
        );
    }

    let file = match PolicyFile::parse(text) {
        Ok(file) => file,
        Err(message) => {
            assert!(!message.trim().is_empty());
            return;
        }
    };
    let mut policy = Policy {
        file,
        ..Policy::default()
    };
    assert!(policy.call_timeout().as_secs() >= 1);
    assert!(policy.approval_timeout().as_secs() >= 1);
    for (i, line) in lines.iter().enumerate().skip(LINES / 2) {
        let flag = match i % 3 {
            0 => &mut policy.deny,
            1 => &mut policy.ask,
            _ => &mut policy.allow,
        };
        flag.push((*line).to_owned());
    }
    for tool in &lines {
        for class in Class::ALL {
            let decision = policy.decide(tool, class);
            let flags = [
                (&policy.deny, Action::Deny, "--deny"),
                (&policy.ask, Action::Ask, "--ask"),
                (&policy.allow, Action::Allow, "--allow"),
            ];
            let by_flag = flags.iter().find_map(|(globs, action, flag)| {
                let glob = globs.iter().find(|g| glob_match(g, tool))?;
                Some((*action, format!("{flag} '{glob}'")))
            });
            let by_rule = || {
                let (index, rule) = policy
                    .file
                    .tools
                    .iter()
                    .enumerate()
                    .find(|(_, rule)| glob_match(&rule.pattern, tool))?;
                Some((rule.action, format!("tools[{index}] '{}'", rule.pattern)))
            };
            let (action, rule) = by_flag.or_else(by_rule).unwrap_or_else(|| {
                (
                    class_action(&policy.file, class).unwrap_or(Action::Allow),
                    format!("class {class}"),
                )
            });
            assert_eq!(decision.action, action, "{tool:?} {class}");
            assert_eq!(decision.rule, rule, "{tool:?} {class}");
        }
    }
});
