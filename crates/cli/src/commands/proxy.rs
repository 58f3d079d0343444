//! `mcp-recovery proxy`: put the recovery proxy in front of an MCP server (a command on stdio or
//! a Streamable HTTP URL), serving the client on stdio or on a loopback HTTP address.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use mcp_recovery_base::text::escape_controls;

use mcp_recovery_client::{Options, Secrets, Target};
use mcp_recovery_journal::keys::{PublicKey, SecretKey};
use mcp_recovery_journal::{Holder, Journal, JournalError};
use mcp_recovery_proxy::{
    Action, Approver, Board, End, Launch, NamedOverlay, OnFailure, Overlays, Policy, PolicyFile,
    ProxyError, Settings, UpstreamSpec, new_session_id, run_on_stdio, serve_approvals,
};

use crate::Failure;
use crate::allowed_hosts::AllowedHosts;
use crate::args::proxy::{ActionArg, OnFailureArg, PolicyArgs, ProxyArgs};
use crate::checkpoints::Shipper;
use crate::inputs::{self, Input};
use crate::live::{self, Server};
use crate::overlay::{LoadedOverlay, OverlayArg};

impl PolicyArgs {
    /// The policy in force and its approver.
    pub fn resolve(&self) -> Result<(Policy, Approver), Failure> {
        let file = match &self.policy {
            Some(path) => PolicyFile::read(path).map_err(|e| Failure::Usage(e.to_string()))?,
            None => PolicyFile::default(),
        };
        let policy = Policy {
            file,
            deny: self.deny.clone(),
            ask: self.ask.clone(),
            allow: self.allow.clone(),
            on_failure: self.on_failure.map(|f| match f {
                OnFailureArg::Rollback => OnFailure::Rollback,
                OnFailureArg::Ask => OnFailure::Ask,
                OnFailureArg::Record => OnFailure::Record,
            }),
            unlisted_tools: None,
        };
        let approver = match &self.approve_with {
            Some(command) => Approver::Command(command.clone()),
            None => Approver::Terminal,
        };
        Ok((policy, approver))
    }
}

/// Opens (or creates) the journal at `path` for appending, as its only writer (`holder`),
/// under the size cap of every input (`--max-file-size`, also the cap no append goes past) and
/// refused over it with the same error as any other input; with the public half of the
/// journal key, only a journal that key signed all of ([`Journal::open_signed_as`]).
fn open_journal(
    path: &Path,
    fsync: bool,
    holder: &Holder,
    key: Option<&PublicKey>,
) -> Result<Journal, Failure> {
    let max_bytes = inputs::policy().max_bytes;
    let opened = match key {
        Some(key) => Journal::open_signed_as(path, max_bytes, holder, key),
        None => Journal::open_as(path, max_bytes, holder),
    };
    let mut journal = opened.map_err(|e| match e {
        JournalError::TooLarge { limit, .. } => {
            Input::File(path.to_owned()).failure(inputs::ReadError::TooLarge { limit })
        }
        e @ JournalError::Locked { .. } if holder.wait.is_zero() => Failure::Usage(format!(
            "{e}; wait for it with --wait-lock SECONDS, or give this run its own journal"
        )),
        e => Failure::Usage(e.to_string()),
    })?;
    if let Some(aside) = journal.set_aside() {
        crate::torn::note_set_aside(&path.display().to_string(), aside);
    }
    journal.set_sync(fsync);
    Ok(journal)
}

/// [`open_journal`], and with a journal key (`--journal-key`) every record appended from now on
/// signed by it, each checkpoint handed to `ship_to` when given (by the [`Shipper`] returned,
/// to be finished once the journal is done with). What the journal already holds
/// must be signed by that key ([`Journal::open_signed_as`]), else it is refused: a
/// checkpoint signs the chain head, and so everything before it.
pub fn open_signing(
    path: &Path,
    fsync: bool,
    holder: &Holder,
    key: Option<&Path>,
    ship_to: Option<&str>,
) -> Result<(Journal, Option<Shipper>), Failure> {
    let Some(key) = key else {
        return Ok((open_journal(path, fsync, holder, None)?, None));
    };
    let mut journal = open_journal(path, fsync, holder, Some(&journal_public_key(key)?))?;
    let shipper = crate::checkpoints::sign_with(&mut journal, key, ship_to)?;
    Ok((journal, shipper))
}

/// The public half of the secret key file `--journal-key` names.
pub fn journal_public_key(key: &Path) -> Result<PublicKey, Failure> {
    SecretKey::read(key)
        .map(|k| k.public())
        .map_err(|e| Failure::Usage(format!("--journal-key: {e}")))
}

/// Exactly one server: what `proxy` and `rollback` work against.
pub fn one_server(servers: Option<Vec<Server>>, command: &str) -> Result<Server, Failure> {
    let mut servers = servers.unwrap_or_default();
    match servers.len() {
        1 => Ok(servers.remove(0)),
        0 => Err(Failure::Usage(format!(
            "{command} needs a server: a command after `--`, or --config FILE --server NAME"
        ))),
        n => Err(Failure::Usage(format!(
            "{command} works against one server, and {n} were named"
        ))),
    }
}

/// Reads every `--overlay` file, in order.
pub fn read_overlays(paths: &[PathBuf]) -> Result<Vec<LoadedOverlay>, Failure> {
    paths.iter().map(|p| LoadedOverlay::read(p)).collect()
}

/// The board calls and compensations the policy's `[[approvals]]` gate wait on (`None` without
/// `[[approvals]]`), served at `listen` (`--approvals-listen`) when given. Refused: a
/// `signing-secret-env` the policy names that is not set; `[[approvals]]` with no place to take
/// decisions (`--approvals-listen`, `--listen`, or a fetch URL for every rule);
/// `--approvals-listen` without `[[approvals]]`. `under_listen` is whether `--listen` (which
/// serves them too) is given, `None` for a command without it; `command` is the one saying
/// where the approvals are taken.
pub fn approvals_board(
    policy: &Policy,
    listen: Option<SocketAddr>,
    under_listen: Option<bool>,
    command: &str,
) -> Result<Option<Arc<Board>>, Failure> {
    if let Some(name) = policy
        .file
        .notifies()
        .filter_map(|n| n.signing_secret_env.as_deref())
        .find(|name| std::env::var_os(name).is_none_or(|v| v.is_empty()))
    {
        // The name, never the value.
        return Err(Failure::Usage(format!(
            "the policy's signing-secret-env names {}, which is not set",
            escape_controls(name)
        )));
    }
    let board = Board::new(&policy.file);
    match (&board, listen) {
        (Some(board), Some(address)) => {
            let bound = serve_approvals(Arc::clone(board), address).map_err(|why| {
                Failure::Usage(format!("cannot take approvals on {address}: {why}"))
            })?;
            // One write, so that a reader of the stream never sees half the address.
            let line = format!("mcp-recovery {command}: approvals at http://{bound}/approvals\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        }
        (Some(_), None)
            if under_listen != Some(true)
                && !policy
                    .file
                    .approvals
                    .iter()
                    .all(|rule| policy.file.fetch_for(rule).is_some()) =>
        {
            let or = if under_listen.is_some() {
                "--listen, or "
            } else {
                ""
            };
            return Err(Failure::Usage(format!(
                "the policy's [[approvals]] need a place to take decisions: \
                 --approvals-listen 127.0.0.1:PORT (or {or}a fetch URL for every rule)"
            )));
        }
        (None, Some(_)) => {
            return Err(Failure::Usage(
                "--approvals-listen needs a policy with [[approvals]]".into(),
            ));
        }
        _ => {}
    }
    Ok(board)
}

/// The server `proxy` starts: the command after `--` (with `--env`), or the --config entry.
fn server(args: &ProxyArgs) -> Result<Server, Failure> {
    let base = Options {
        env: args
            .env
            .iter()
            .map(|spec| live::parse_pair(spec, "--env", "K=V"))
            .collect::<Result<_, _>>()?,
        ..Options::default()
    };
    let servers = match (&args.config, &args.server) {
        (Some(file), Some(name)) => {
            let allowed = AllowedHosts::new(&args.allow_hosts);
            let names = std::slice::from_ref(name);
            live::configured(file, &args.inputs, &allowed, names, &base)?
        }
        _ => match (args.transport.http_target()?, args.command.split_first()) {
            (Some(target), _) => vec![Server::new(target, base)],
            (None, Some((program, rest))) => vec![Server::new(
                Target::Stdio {
                    program: program.clone(),
                    args: rest.to_vec(),
                },
                base,
            )],
            (None, None) => Vec::new(),
        },
    };
    one_server(Some(servers), "proxy")
}

/// Runs `proxy`: exit 0 when the client closed the session, 2 when the server could not start
/// or the journal failed, 1 when the server exited first, 128 + the signal's number after
/// SIGINT or SIGTERM.
pub fn run(args: &ProxyArgs) -> Result<ExitCode, Failure> {
    // Before any thread starts, so that none takes them with their default action.
    let signals = crate::interrupts::block()?;
    let (mut policy, approver) = args.policy.resolve()?;
    policy.unlisted_tools = args.unlisted_tools.map(|a| match a {
        ActionArg::Allow => Action::Allow,
        ActionArg::Ask => Action::Ask,
        ActionArg::Deny => Action::Deny,
    });
    let overlays = read_overlays(&args.overlays)?
        .into_iter()
        .map(|o| NamedOverlay {
            positions: mcp_recovery_validator::overlay_positions(&o.overlay, &o.text),
            shown: o.shown,
            overlay: o.overlay,
        })
        .collect();
    let server = server(args)?;
    let options = server.options();
    let upstream = match server.target() {
        Target::Stdio { program, args } => UpstreamSpec::Stdio(Launch {
            program: program.clone(),
            args: args.clone(),
            env: options.env.clone(),
            cwd: options.cwd.clone(),
        }),
        Target::Http { url, headers } => UpstreamSpec::Http {
            url: url.clone(),
            headers: headers.clone(),
        },
    };
    let secrets = server.target().secrets(options);
    if args.journal.is_none() && args.journal_key.is_some() {
        return Err(Failure::Usage("--journal-key needs --journal FILE".into()));
    }
    let (journal, shipper) = match args.journal.as_deref() {
        Some(path) => {
            let (journal, shipper) = open_signing(
                path,
                !args.no_fsync,
                &args.lock.holder("proxy"),
                args.journal_key.as_deref(),
                args.checkpoint_to.as_deref(),
            )?;
            name_unfinished(path, &upstream, &secrets);
            (Some(journal), shipper)
        }
        None => (None, None),
    };
    let approvals = approvals_board(
        &policy,
        args.approvals_listen,
        Some(args.transport.listen.is_some()),
        "proxy",
    )?;
    let settings = Settings {
        policy,
        approver,
        session: new_session_id().map_err(|e| Failure::Usage(e.to_string()))?,
        upstream: secrets.redact(&upstream.describe()).into_owned(),
        overlays: Overlays::new(overlays),
        secrets,
        rollback_window: args.rollback_window,
        approvals,
    };
    if let Some(address) = args.transport.listen {
        // The sessions closed, the checkpoints handed over, the process ends.
        signals.take(move |code| {
            drop(shipper);
            std::process::exit(code);
        });
        return Err(args
            .transport
            .listen(address, &settings, journal, &upstream));
    }
    signals.take(|_| {});
    let _shipper = shipper;
    match run_on_stdio(settings, journal, &upstream) {
        Ok(End::ClientClosed) => Ok(ExitCode::SUCCESS),
        Ok(End::Closed(_)) => Ok(crate::interrupts::exit_code().unwrap_or(ExitCode::from(1))),
        Ok(End::ServerClosed(reason)) => {
            eprintln!(
                "mcp-recovery proxy: the server exited: {}",
                escape_controls(&reason)
            );
            Ok(ExitCode::from(1))
        }
        Err(ProxyError::Spawn { command, source }) => Err(Failure::Usage(format!(
            "cannot start the server {command}: {source}"
        ))),
        Err(e) => Err(Failure::Usage(e.to_string())),
    }
}

/// Names on stderr each session of the journal at `path` that ended by an interrupt, was closed
/// by the proxy, or was cut off (the proxy killed or crashed: its writer is gone, since this one
/// holds the journal) with calls that may have taken effect and no rollback since, and the
/// command that rolls it back.
fn name_unfinished(path: &Path, upstream: &UpstreamSpec, secrets: &Secrets) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(records) = mcp_recovery_journal::read_records(&text) else {
        return;
    };
    for left in mcp_recovery_proxy::unfinished(&records) {
        let calls: Vec<String> = left.calls.iter().map(u64::to_string).collect();
        eprintln!(
            "mcp-recovery proxy: session {} {} with the effects of calls {} left in place; \
             `{}` rolls them back",
            escape_controls(&left.session),
            left.how(),
            calls.join(", "),
            escape_controls(&upstream.rollback_command(path, &left.session, secrets))
        );
    }
}
