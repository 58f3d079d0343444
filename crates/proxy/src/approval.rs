//! Asking a person (on the controlling terminal) or a program (`--approve-with CMD`) whether a
//! call may run.

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::group;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Who decides `ask` calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approver {
    /// The controlling terminal (`/dev/tty`), never the MCP stdio.
    Terminal,
    /// A shell command that reads the impact as JSON on stdin; exit status 0 approves.
    Command(String),
}

/// An approval decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// True when the call may run.
    pub approved: bool,
    /// Who decided: `terminal`, `command`.
    pub by: &'static str,
    /// Why, in words.
    pub reason: String,
}

impl Approver {
    /// Asks about `impact` (the JSON shown or handed over), waiting at most `timeout`; no
    /// answer in time is a refusal.
    pub fn ask(&self, impact: &Value, timeout: Duration) -> Verdict {
        match self {
            Approver::Terminal => {
                // Sessions of an HTTP listener share the one terminal: one question at a time.
                static TERMINAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
                let _turn = TERMINAL
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                ask_terminal(impact, timeout)
            }
            Approver::Command(command) => ask_command(command, impact, timeout),
        }
    }
}

fn refuse(by: &'static str, reason: impl Into<String>) -> Verdict {
    Verdict {
        approved: false,
        by,
        reason: reason.into(),
    }
}

/// The impact as lines for a person: every value is JSON text (escaped), so it is shown as data.
pub fn describe(impact: &Value) -> String {
    let mut out = String::new();
    if let Value::Object(map) = impact {
        for (key, value) in map {
            let shown = match value {
                Value::String(text) => escape_controls(text).into_owned(),
                other => escape_controls(&other.to_string()).into_owned(),
            };
            out.push_str(&format!("  {key}: {shown}\n"));
        }
    }
    out
}

fn ask_terminal(impact: &Value, timeout: Duration) -> Verdict {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty");
    let Ok(mut tty) = tty else {
        return refuse(
            "terminal",
            "no controlling terminal to ask on (use --approve-with CMD)",
        );
    };
    let lines = terminal_lines()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // A line typed before this question is shown answers nothing; one typed once it is shown
    // does, however soon.
    while lines.try_recv().is_ok() {}
    let prompt = format!(
        "\nmcp-recovery proxy: approval needed\n{}approve? [y/N] ",
        describe(impact)
    );
    if tty
        .write_all(prompt.as_bytes())
        .and_then(|()| tty.flush())
        .is_err()
    {
        return refuse("terminal", "the terminal cannot be written");
    }
    match lines.recv_timeout(timeout) {
        Ok(answer) => {
            let answer = answer.trim().to_ascii_lowercase();
            if answer == "y" || answer == "yes" {
                Verdict {
                    approved: true,
                    by: "terminal",
                    reason: "approved on the terminal".into(),
                }
            } else {
                refuse("terminal", "refused on the terminal")
            }
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            refuse("terminal", "the terminal cannot be read")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let _ = tty.write_all(b"\n(no answer in time: refused)\n");
            refuse(
                "terminal",
                format!("no answer within {} s", timeout.as_secs()),
            )
        }
    }
}

/// The lines typed on the controlling terminal, read by one thread for the whole process: a
/// question that timed out leaves no reader behind to take the answer to the next one.
fn terminal_lines() -> &'static std::sync::Mutex<mpsc::Receiver<String>> {
    static LINES: std::sync::OnceLock<std::sync::Mutex<mpsc::Receiver<String>>> =
        std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        let (sender, receiver) = mpsc::channel();
        if let Ok(tty) = std::fs::File::open("/dev/tty") {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(tty);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if sender.send(line).is_err() => return,
                        Ok(_) => {}
                    }
                }
            });
        }
        std::sync::Mutex::new(receiver)
    })
}

fn ask_command(command: &str, impact: &Value, timeout: Duration) -> Verdict {
    // The approver's stdout goes to our stderr: our stdout carries only JSON-RPC.
    let stdout = match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::null(),
    };
    // In a group of its own, so that what it starts ends with it on a timeout.
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::inherit());
    group::isolate(&mut shell);
    let child = shell.spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return refuse("command", format!("the approver could not start: {e}")),
    };
    // The wait starts now, whatever the approver reads: its input is written by a thread of its
    // own, and one that does not read it still decides by its exit status.
    let deadline = Instant::now().checked_add(timeout);
    if let Some(mut stdin) = child.stdin.take() {
        let text = format!("{impact}\n");
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => {
                return Verdict {
                    approved: true,
                    by: "command",
                    reason: "the approver exited 0".into(),
                };
            }
            Ok(Some(status)) => {
                return refuse("command", format!("the approver refused ({status})"));
            }
            Ok(None) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                group::kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                return refuse(
                    "command",
                    format!("the approver did not decide within {} s", timeout.as_secs()),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return refuse("command", format!("cannot wait for the approver: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn commands_decide_by_exit_status_and_see_the_impact() {
        let impact = json!({"tool": "charge_payment", "arguments": {"amount": 5}});
        let yes = Approver::Command("grep -q charge_payment".into());
        assert!(yes.ask(&impact, Duration::from_secs(10)).approved);
        let no = Approver::Command("exit 3".into());
        let verdict = no.ask(&impact, Duration::from_secs(10));
        assert!(!verdict.approved);
        assert!(verdict.reason.contains("refused"), "{}", verdict.reason);
        // An approver that reads nothing of a large impact still times out, and its late
        // exit 0 approves nothing.
        let large = json!({"tool": "charge_payment", "arguments": {"note": "x".repeat(1 << 20)}});
        let deaf = Approver::Command("sleep 2".into());
        let verdict = deaf.ask(&large, Duration::from_millis(200));
        assert!(!verdict.approved, "{}", verdict.reason);
        assert!(
            verdict.reason.contains("did not decide"),
            "{}",
            verdict.reason
        );
        let slow = Approver::Command("sleep 5".into());
        let verdict = slow.ask(&impact, Duration::from_millis(200));
        assert!(!verdict.approved);
        assert!(
            verdict.reason.contains("did not decide"),
            "{}",
            verdict.reason
        );
    }

    #[test]
    fn descriptions_escape_control_characters() {
        let shown = describe(&json!({"tool": "x\u{1b}[2Jy", "arguments": {"a": "\n"}}));
        assert!(!shown.contains('\u{1b}'));
        assert!(shown.contains("x\\u{1b}[2Jy"), "{shown}");
        assert!(shown.contains("\"\\n\""), "{shown}");
    }

    #[test]
    fn descriptions_escape_every_unsafe_class() {
        // C0, C1, DEL, bidi controls, separators, zero-width and other format characters.
        let unsafe_chars = [
            '\u{7}',
            '\u{85}',
            '\u{7f}',
            '\u{61c}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{2028}',
            '\u{2029}',
            '\u{200b}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{ad}',
            '\u{e0041}',
        ];
        for c in unsafe_chars {
            let text = format!("a{c}b");
            let shown =
                describe(&json!({"tool": text, "arguments": {"note": text, text.clone(): 1}}));
            assert!(!shown.contains(c), "{c:?} raw in {shown}");
            assert!(
                shown.contains(&format!("a\\u{{{:x}}}b", u32::from(c))),
                "{shown}"
            );
            assert!(!escape_controls(&text).contains(c));
        }
    }
}
