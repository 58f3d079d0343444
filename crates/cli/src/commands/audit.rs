//! `mcp-recovery audit verify`: check a journal's hash chain.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_journal::keys::{self, KeyError};
use mcp_recovery_journal::{Verifier, verify_reader};

use crate::Failure;
use crate::args::audit::{AuditArgs, AuditCommand, KeygenArgs, VerifyArgs};
use crate::inputs::{self, Input, policy};

/// Runs `audit`.
pub fn run(args: &AuditArgs) -> Result<ExitCode, Failure> {
    let args = match &args.command {
        AuditCommand::Verify(args) => args,
        AuditCommand::Export(args) => return crate::export::run(args),
        AuditCommand::Keygen(args) => return keygen(args),
    };
    let input = Input::named(&args.journal);
    let shown = args.journal.display().to_string();
    let verifier = match &args.head {
        Some(head) => Verifier::expecting_head(head),
        None => Verifier::new(),
    };
    // Out-of-line members are checked against `JOURNAL.d` (not for a journal on stdin).
    let verifier = match &input {
        Input::File(path) => verifier.with_side_files(path),
        Input::Stdin => verifier,
    };
    let verifier = checkpoint_checks(verifier, args)?;
    let report = verify_reader(input.open()?, policy().max_bytes, verifier)
        .map_err(|e| input.failure(inputs::journal_read_error(e)))?;
    let mut out = std::io::stdout().lock();
    if let Some(broken) = report.broken {
        writeln!(
            out,
            "{}: broken at {broken}",
            mcp_recovery_base::text::escape_controls(&shown)
        )?;
        return Ok(ExitCode::from(1));
    }
    if let Some(file) = &args.policy {
        let Input::File(path) = &input else {
            return Err(Failure::Usage(
                "--policy needs the journal as a file, not stdin".into(),
            ));
        };
        let policy = mcp_recovery_proxy::PolicyFile::read(file)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::Usage(format!(
                "cannot read {}: {e}",
                mcp_recovery_base::text::escape_controls(&shown)
            ))
        })?;
        let records =
            mcp_recovery_journal::read_records(&text).map_err(|e| Failure::Usage(e.to_string()))?;
        let problems = crate::audit_quorum::check(&records, &policy);
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
    Ok(ExitCode::SUCCESS)
}

/// `verifier` with the checkpoint checks `--key` and `--checkpoints` ask for.
fn checkpoint_checks(verifier: Verifier, args: &VerifyArgs) -> Result<Verifier, Failure> {
    let verifier = crate::checkpoints::with_keys(verifier, &args.keys)?;
    match &args.checkpoints {
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
