//! `mcp-recovery audit verify`: check a journal's hash chain, its checkpoints and, with a
//! policy, the approvals of the calls it gates; `audit export` checks it the same way.

mod binding;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_recovery_journal::keys::{self, KeyError};
use mcp_recovery_journal::{Verifier, verify_reader};

use crate::Failure;
use crate::args::audit::{AuditArgs, AuditCommand, KeygenArgs};
use crate::inputs::{self, Input, policy};

/// Runs `audit`.
pub fn run(args: &AuditArgs) -> Result<ExitCode, Failure> {
    let args = match &args.command {
        AuditCommand::Verify(args) => args,
        AuditCommand::Export(args) => {
            // The journal is verified as `audit verify` verifies it, with the same flags.
            return crate::export::run(args, |input, bytes| {
                let verifier = verifier(input, None, &args.keys, args.checkpoints.as_deref())?;
                verify_reader(bytes, policy().max_bytes, verifier)
                    .map(|report| report.broken)
                    .map_err(|e| input.failure(inputs::journal_read_error(e)))
            });
        }
        AuditCommand::Keygen(args) => return keygen(args),
    };
    let input = Input::named(&args.journal);
    let shown = args.journal.display().to_string();
    let verifier = verifier(
        &input,
        args.head.as_deref(),
        &args.keys,
        args.checkpoints.as_deref(),
    )?;
    let report = verify_reader(input.open()?, policy().max_bytes, verifier)
        .map_err(|e| input.failure(inputs::journal_read_error(e)))?;
    let mut out = std::io::stdout().lock();
    // A fault other than an incomplete last line breaks the journal. With that line alone, the
    // whole records before it are checked and reported, then the line, and the exit status is
    // 1 until a writer moves it aside.
    if let (Some(broken), None) = (&report.broken, report.torn) {
        writeln!(
            out,
            "{}: broken at {broken}",
            mcp_recovery_base::text::escape_controls(&shown)
        )?;
        return Ok(ExitCode::from(1));
    }
    if let Some(file) = &args.policy {
        let Input::File(_) = &input else {
            return Err(Failure::Usage(
                "--policy needs the journal as a file, not stdin".into(),
            ));
        };
        let policy = mcp_recovery_proxy::PolicyFile::read(file)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let text = String::from_utf8(input.read()?).map_err(|_| {
            Failure::Usage(format!(
                "cannot read {}: not UTF-8 text",
                mcp_recovery_base::text::escape_controls(&shown)
            ))
        })?;
        let whole = report
            .torn
            .and_then(|torn| text.get(..usize::try_from(torn.offset).ok()?))
            .unwrap_or(&text);
        let records = mcp_recovery_journal::read_records(whole)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let (mut problems, slack) = crate::audit_quorum::check(&records, &policy);
        let (unbound, mut notes) = binding::check(&records, &policy);
        problems.extend(unbound);
        notes.extend(slack);
        for problem in &problems {
            writeln!(
                out,
                "{}: {problem}",
                mcp_recovery_base::text::escape_controls(&shown)
            )?;
        }
        if !problems.is_empty() {
            return Ok(ExitCode::from(1));
        }
        for note in &notes {
            writeln!(
                out,
                "{}: note: {note}",
                mcp_recovery_base::text::escape_controls(&shown)
            )?;
        }
    }
    writeln!(
        out,
        "{}: {} records, chain intact, head {}",
        mcp_recovery_base::text::escape_controls(&shown),
        report.records,
        report
            .head
            .as_deref()
            .unwrap_or(mcp_recovery_journal::GENESIS)
    )?;
    if let Some(torn) = &report.torn {
        let line = format!("{shown}: {}", crate::torn::incomplete(&shown, torn));
        writeln!(out, "{}", mcp_recovery_base::text::escape_controls(&line))?;
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The checks `audit verify` and `audit export` make of the journal `input`: the chain; its
/// out-of-line members against `JOURNAL.d` (not for a journal on stdin); a `head` saved
/// earlier; every checkpoint's signature with one of the public `keys`, and no record left
/// unsigned; the checkpoints kept in the directory `checkpoints`.
fn verifier(
    input: &Input,
    head: Option<&str>,
    keys: &[PathBuf],
    checkpoints: Option<&Path>,
) -> Result<Verifier, Failure> {
    let verifier = match head {
        Some(head) => Verifier::expecting_head(head),
        None => Verifier::new(),
    };
    let verifier = match input {
        Input::File(path) => verifier.with_side_files(path),
        Input::Stdin | Input::Unlisted(..) => verifier,
    };
    let verifier = crate::checkpoints::with_keys(verifier, keys)?;
    match checkpoints {
        Some(dir) => crate::checkpoints::with_kept(verifier, dir),
        None => Ok(verifier),
    }
}

fn keygen(args: &KeygenArgs) -> Result<ExitCode, Failure> {
    let public = keys::generate(&args.path).map_err(|e| match e {
        KeyError::Io { path, source } => Failure::WriteFile {
            path: path.display().to_string(),
            source,
        },
        other => Failure::Usage(other.to_string()),
    })?;
    let shown = keys::public_path(&args.path).display().to_string();
    writeln!(
        std::io::stdout().lock(),
        "{}: ed25519 {} (key id {})",
        mcp_recovery_base::text::escape_controls(&shown),
        public.to_hex(),
        public.id()
    )?;
    Ok(ExitCode::SUCCESS)
}
