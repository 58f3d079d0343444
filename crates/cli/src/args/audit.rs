//! Arguments of `audit` and its subcommands `verify`, `export` and `keygen`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::args::values::written_path;

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
    Export(ExportArgs),
    /// Write a new ed25519 key pair: PATH holds the secret (readable by its owner only),
    /// PATH.pub the public key; the public key and its id are printed. Neither file may exist.
    Keygen(KeygenArgs),
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

/// What `audit export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// OpenTelemetry spans POSTed to an OTLP/HTTP collector (JSON encoding).
    Otlp,
    /// CSV, one row per call and per compensation.
    Csv,
}

/// Arguments of `audit export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The journal (`-` for stdin).
    #[arg(value_name = "JOURNAL")]
    pub journal: PathBuf,
    /// What to write.
    #[arg(long, value_enum, default_value_t = ExportFormat::Otlp)]
    pub format: ExportFormat,
    /// The collector's OTLP/HTTP base endpoint: spans are POSTed to URL/v1/traces. Without it,
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or OTEL_EXPORTER_OTLP_ENDPOINT (a
    /// base, as with this flag) is used.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// An HTTP header for the collector, as K=V (repeatable; for example authorization).
    /// OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS are read too. Values
    /// are never shown.
    #[arg(long = "header", value_name = "K=V")]
    pub headers: Vec<String>,
    /// Give up on a request to the collector after this many seconds (1 to 600).
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,
    /// With --format csv: write to PATH instead of standard output.
    #[arg(long, value_name = "PATH", value_parser = written_path)]
    pub output: Option<PathBuf>,
    /// Export a journal that fails verification (a warning says where it broke).
    #[arg(long)]
    pub unverified: bool,
    /// Verify every checkpoint's signature with this public key (repeatable: any of them), and
    /// that every record is covered by a valid checkpoint after it, as `audit verify --key`
    /// does: a journal that fails is not exported.
    #[arg(long = "key", value_name = "PUB")]
    pub keys: Vec<PathBuf>,
    /// Checkpoints kept elsewhere (a directory of files of checkpoint lines), checked as
    /// `audit verify --checkpoints` checks them: a journal that fails is not exported.
    #[arg(long, value_name = "DIR")]
    pub checkpoints: Option<PathBuf>,
}

/// Arguments of `audit keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where the secret key goes; the public key goes to the same path with `.pub` appended.
    #[arg(value_name = "PATH", value_parser = written_path)]
    pub path: PathBuf,
}
