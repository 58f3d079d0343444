//! Terminal colour: `--color auto|always|never`, then the conventions of the environment
//! (`NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`), then whether stdout is a terminal. The decision
//! is made once per run; styles are [`anstyle`] styles and colourful output is written through
//! [`anstream`], which strips the styles again wherever the decision is "no colour".

use std::ffi::OsString;
use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;

use crate::args::values::ColorWhen;

/// Bold, for headings.
#[cfg(feature = "demo")]
pub const BOLD: Style = Style::new().bold();
/// Dimmed, for what matters least.
pub const DIM: Style = Style::new().dimmed();
/// Green, for what went well.
pub const GOOD: Style = AnsiColor::Green.on_default();
/// Red, for what went wrong.
pub const BAD: Style = AnsiColor::Red.on_default();
/// Yellow, for what needs a look.
pub const WARN: Style = AnsiColor::Yellow.on_default();

static STDOUT_COLOR: OnceLock<bool> = OnceLock::new();

/// The `--color` of a command line, read before it is parsed (so that clap's own help and
/// errors follow it): the last `--color WHEN` or `--color=WHEN` before `--`; an invalid value
/// is left to the parser to report.
pub fn requested(args: impl IntoIterator<Item = OsString>) -> Option<ColorWhen> {
    let mut args = args.into_iter().skip(1);
    let mut found = None;
    while let Some(arg) = args.next() {
        let value = match arg.to_str() {
            Some("--") => break,
            Some("--color") => args.next(),
            Some(text) => match text.strip_prefix("--color=") {
                Some(value) => Some(OsString::from(value)),
                None => continue,
            },
            None => continue,
        };
        if let Some(when) = value
            .as_ref()
            .and_then(|v| v.to_str())
            .and_then(|v| ColorWhen::from_str(v, true).ok())
        {
            found = Some(when);
        }
    }
    found
}

/// Decides whether stdout gets colour, for the rest of the run.
pub fn init(when: ColorWhen) {
    use std::io::IsTerminal;
    let color = decide(when, std::io::stdout().is_terminal(), |name| {
        std::env::var_os(name)
    });
    let _ = STDOUT_COLOR.set(color);
    anstream::ColorChoice::write_global(if color {
        anstream::ColorChoice::AlwaysAnsi
    } else {
        anstream::ColorChoice::Never
    });
}

/// Whether stdout gets colour (as [`init`] decided; no colour before it).
pub fn stdout_color() -> bool {
    STDOUT_COLOR.get().copied().unwrap_or(false)
}

/// The decision, with the environment read through `var`:
///
/// 1. `--color always` / `--color never` win over everything.
/// 2. `NO_COLOR` set to anything but the empty string: no colour (no-color.org).
/// 3. `CLICOLOR_FORCE` set and not `0`: colour, terminal or not (bixense.com/clicolors).
/// 4. `CLICOLOR=0`: no colour.
/// 5. Otherwise colour only on a terminal that is not `TERM=dumb`.
pub fn decide(when: ColorWhen, terminal: bool, var: impl Fn(&str) -> Option<OsString>) -> bool {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    match when {
        ColorWhen::Always => return true,
        ColorWhen::Never => return false,
        ColorWhen::Auto => {}
    }
    if set("NO_COLOR").is_some() {
        return false;
    }
    if set("CLICOLOR_FORCE").is_some_and(|value| value != "0") {
        return true;
    }
    if set("CLICOLOR").is_some_and(|value| value == "0") {
        return false;
    }
    terminal && set("TERM").is_none_or(|term| term != "dumb")
}

/// `text` in `style` when `color` is on.
pub fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requested_colour_is_read_before_parsing() {
        let read = |args: &[&str]| requested(args.iter().map(OsString::from));
        assert_eq!(
            read(&["bin", "--color", "always", "lint"]),
            Some(ColorWhen::Always)
        );
        assert_eq!(
            read(&["bin", "lint", "--color=never"]),
            Some(ColorWhen::Never)
        );
        assert_eq!(
            read(&["bin", "--color=never", "--color", "always"]),
            Some(ColorWhen::Always)
        );
        assert_eq!(read(&["bin", "--color", "sometimes"]), None);
        assert_eq!(
            read(&["bin", "proxy", "--", "server", "--color", "always"]),
            None
        );
        assert_eq!(read(&["bin", "--color"]), None);
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn auto_follows_the_terminal() {
        assert!(decide(ColorWhen::Auto, true, env(&[])));
        assert!(!decide(ColorWhen::Auto, false, env(&[])));
        assert!(!decide(ColorWhen::Auto, true, env(&[("TERM", "dumb")])));
        assert!(decide(
            ColorWhen::Auto,
            true,
            env(&[("TERM", "xterm-256color")])
        ));
    }

    #[test]
    fn no_color_turns_it_off_unless_empty() {
        assert!(!decide(ColorWhen::Auto, true, env(&[("NO_COLOR", "1")])));
        assert!(decide(ColorWhen::Auto, true, env(&[("NO_COLOR", "")])));
        // NO_COLOR is the stronger convention.
        let both = [("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")];
        assert!(!decide(ColorWhen::Auto, true, env(&both)));
    }

    #[test]
    fn clicolor_force_turns_it_on_off_a_terminal() {
        assert!(decide(
            ColorWhen::Auto,
            false,
            env(&[("CLICOLOR_FORCE", "1")])
        ));
        assert!(!decide(
            ColorWhen::Auto,
            false,
            env(&[("CLICOLOR_FORCE", "0")])
        ));
        assert!(!decide(
            ColorWhen::Auto,
            false,
            env(&[("CLICOLOR_FORCE", "")])
        ));
        let both = [("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")];
        assert!(decide(ColorWhen::Auto, false, env(&both)));
    }

    #[test]
    fn clicolor_zero_turns_it_off_on_a_terminal() {
        assert!(!decide(ColorWhen::Auto, true, env(&[("CLICOLOR", "0")])));
        assert!(decide(ColorWhen::Auto, true, env(&[("CLICOLOR", "1")])));
        // CLICOLOR=1 asks for colour on a terminal only.
        assert!(!decide(ColorWhen::Auto, false, env(&[("CLICOLOR", "1")])));
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let all = [("NO_COLOR", "1"), ("CLICOLOR", "0"), ("TERM", "dumb")];
        assert!(decide(ColorWhen::Always, false, env(&all)));
        assert!(!decide(
            ColorWhen::Never,
            true,
            env(&[("CLICOLOR_FORCE", "1")])
        ));
    }

    #[test]
    fn paint_wraps_only_when_on() {
        assert_eq!(paint(false, DIM, "x"), "x");
        assert_eq!(paint(true, DIM, "x"), "\u{1b}[2mx\u{1b}[0m");
        assert_eq!(paint(true, GOOD, "ok"), "\u{1b}[32mok\u{1b}[0m");
    }
}
