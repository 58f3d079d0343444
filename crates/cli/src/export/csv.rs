//! Sessions as CSV for a spreadsheet: one row per call and per compensation, RFC 4180 quoting,
//! no control or bidirectional character, and no cell a spreadsheet would read as a formula.

use std::io::{self, Write};

use mcp_recovery_base::text::escape_controls;

use super::model::{OpKind, Session};

/// The header row.
pub const COLUMNS: [&str; 11] = [
    "session",
    "seq",
    "time",
    "kind",
    "tool",
    "class",
    "decision",
    "outcome",
    "duration_ms",
    "request",
    "hash",
];

/// Writes the header and one row per operation, in journal order within each session.
pub fn write(sessions: &[Session], out: &mut impl Write) -> io::Result<u64> {
    row(out, COLUMNS.iter().map(|c| (*c).to_owned()))?;
    let mut rows = 0;
    for session in sessions {
        for op in &session.ops {
            let kind = match op.kind {
                OpKind::Call => "call",
                OpKind::Compensation => "compensation",
            };
            let decision: Vec<String> = op.approvals.iter().map(|a| a.label()).collect();
            row(
                out,
                [
                    session.id.clone(),
                    op.start.seq.to_string(),
                    op.start.time_text.clone(),
                    kind.to_owned(),
                    op.tool.clone(),
                    op.class.clone().unwrap_or_default(),
                    decision.join("; "),
                    op.outcome.label(),
                    op.duration_ms().map(|d| d.to_string()).unwrap_or_default(),
                    op.request.clone().unwrap_or_default(),
                    op.start.hash.clone(),
                ]
                .into_iter(),
            )?;
            rows += 1;
        }
    }
    Ok(rows)
}

fn row(out: &mut impl Write, cells: impl Iterator<Item = String>) -> io::Result<()> {
    let cells: Vec<String> = cells.map(|c| cell(&c)).collect();
    out.write_all(cells.join(",").as_bytes())?;
    out.write_all(b"\r\n")
}

/// One cell: every control, bidirectional and invisible character escaped as everywhere else
/// (`\u{1b}`, `\n`, `\t`…), so no terminal sequence, hyperlink or reordering reaches whoever
/// opens the file; then a text a spreadsheet would take for a formula (starting with `=`, `+`,
/// `-` or `@`) gets a leading `'`; a cell holding a comma or quote is quoted, its quotes
/// doubled (RFC 4180).
pub fn cell(text: &str) -> String {
    let text = escape_controls(text);
    let guarded = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.into_owned()
    };
    if guarded.contains([',', '"']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn cells_are_quoted_and_never_formulas() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("=1+1"), "'=1+1");
        assert_eq!(cell("-2"), "'-2");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("\rx"), "\\rx");
        assert_eq!(cell("+1,\"2\""), "\"'+1,\"\"2\"\"\"");
    }

    #[test]
    fn cells_hold_no_control_or_bidirectional_character() {
        assert_eq!(cell("s\u{1b}[31mred"), "s\\u{1b}[31mred");
        assert_eq!(cell("a\u{7}b"), "a\\u{7}b");
        assert_eq!(
            cell("\u{1b}]8;;http://x\u{7}y"),
            "\\u{1b}]8;;http://x\\u{7}y"
        );
        assert_eq!(cell("evil\u{202e}txt"), "evil\\u{202e}txt");
        assert_eq!(cell("\u{202e}=1+1"), "\\u{202e}=1+1");
        assert_eq!(cell("a\nb"), "a\\nb");
        assert_eq!(cell("\tx"), "\\tx");
    }
}
