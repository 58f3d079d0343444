//! What the commands say of an incomplete last line of a journal (a crash or a failed write
//! inside a record): readers leave it out and name it, writers move it aside and say where.

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_journal::{SetAside, Torn};

/// The incomplete last line `torn` of the journal shown as `shown`, and what moves it aside.
pub fn incomplete(shown: &str, torn: &Torn) -> String {
    let (moved, writer) = match torn.unsigned {
        Some(_) => ("moves both", " with --journal-key"),
        None => ("moves it", ""),
    };
    format!(
        "line {}: {}; `mcp-recovery rollback` or the next `mcp-recovery proxy`{writer} on this \
         journal {moved} to {shown}.torn-… and goes on from the whole records before",
        torn.line,
        torn.describe()
    )
}

/// `text`, the journal shown as `shown`, without its incomplete last line `torn`, which a note
/// on stderr names: what `plan` and `rollback --dry-run` read.
pub fn whole_lines<'t>(text: &'t str, shown: &str, torn: &Torn) -> &'t str {
    let note = format!("{shown}: {}; it is left out", incomplete(shown, torn));
    eprintln!("note: {}", escape_controls(&note));
    text.get(..usize::try_from(torn.offset).unwrap_or(usize::MAX))
        .unwrap_or(text)
}

/// Says on stderr that the writer of the journal shown as `shown` moved its incomplete last
/// line aside when it opened it.
pub fn note_set_aside(shown: &str, aside: &SetAside) {
    let (record, moved) = match aside.unsigned {
        Some(seq) => (
            format!(
                ", and so was record seq {seq} on the line before, written with it as its \
                 checkpoint and so unsigned"
            ),
            "both were",
        ),
        None => (String::new(), "it was"),
    };
    let note = format!(
        "journal {shown}: its last line (line {}, {} bytes) was incomplete, cut while it was \
         written and never acknowledged{record}; {moved} moved to {}, and the journal goes on \
         from the whole records before",
        aside.line,
        aside.bytes,
        aside.path.display()
    );
    eprintln!("note: {}", escape_controls(&note));
}
