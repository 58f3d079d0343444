//! `mcp-recovery audit verify`: check a journal's hash chain.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use mcp_recovery_journal::keys::{self, KeyError};
use mcp_recovery_journal::{Verifier, verify_reader};

use crate::Failure;
use crate::inputs::{self, Input, policy};

/// Arguments of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: AuditCommand,
}

/// The `audit` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Verify a journal: exit 0 when the chain holds (the head hash is printed), 1 naming the
    /// first broken line and why.
    Verify(VerifyArgs),
    /// Export a journal as OpenTelemetry spans over OTLP/HTTP (JSON), one trace per session,
    /// or as CSV (`--format csv`), one row per call and per compensation.
    ///
    /// The journal is verified first: one that fails is refused, naming where it broke, unless
    /// --unverified is given. No argument or result is exported, only its size and sha256
    /// digest: what a call carried stays in the journal, so there is nothing to redact. Exit
    /// status: 0 exported, 1 the journal failed verification, 2 it could not be read or the
    /// collector refused it (the endpoint and HTTP status are named, header values never).
    Export(crate::export::ExportArgs),
    /// Write a new ed25519 key pair: PATH holds the secret (readable by its owner only),
    /// PATH.pub the public key; the public key and its id are printed. Neither file may exist.
    Keygen(KeygenArgs),
}

/// Arguments of `audit keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where the secret key goes; the public key goes to the same path with `.pub` appended.
    #[arg(value_name = "PATH", value_parser = crate::cli::written_path)]
    pub path: PathBuf,
}

/// Arguments of `audit verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The journal (`-` for stdin).
    #[arg(value_name = "JOURNAL")]
    pub journal: PathBuf,
    /// A head hash saved earlier: the journal must still contain the record that had it (it
    /// may have grown since, never shrunk or been rewritten).
    #[arg(long, value_name = "HASH")]
    pub head: Option<String>,
    /// Check every checkpoint's signature with this public key (repeatable: any of them), and
    /// that every record is covered by a valid checkpoint after it; records after the last
    /// checkpoint are reported as unsigned.
    #[arg(long = "key", value_name = "PUB")]
    pub keys: Vec<PathBuf>,
    /// Checkpoints kept elsewhere (a directory of files of checkpoint lines, as
    /// `proxy --checkpoint-to` handed them): the journal's record at each one's seq must be
    /// that checkpoint, so a journal cut back or re-signed is caught.
    #[arg(long, value_name = "DIR")]
    pub checkpoints: Option<PathBuf>,
    /// Also re-check every approval decision's signature against this policy's approver keys,
    /// and report each call or compensation that ran without the quorum its `[[approvals]]`
    /// demand (exit 1).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

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
            mcp_recovery_proxy::escape(&shown)
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
                mcp_recovery_proxy::escape(&shown)
            ))
        })?;
        let records =
            mcp_recovery_journal::read_records(&text).map_err(|e| Failure::Usage(e.to_string()))?;
        let problems = crate::audit_quorum::check(&records, &policy);
        for problem in &problems {
            writeln!(out, "{}: {problem}", mcp_recovery_proxy::escape(&shown))?;
        }
        if !problems.is_empty() {
            return Ok(ExitCode::from(1));
        }
    }
    writeln!(
        out,
        "{}: {} records, chain intact, head {}",
        mcp_recovery_proxy::escape(&shown),
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
        mcp_recovery_proxy::escape(&shown),
        public.to_hex(),
        public.id()
    )?;
    Ok(ExitCode::SUCCESS)
}
