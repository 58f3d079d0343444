//! `mcp-recovery rollback`: run the compensation plan of a recorded session against a live
//! server, journaling each step; resumable after a crash.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::{ClientError, Connection, Secrets};
use mcp_recovery_journal::{Journal, JournalError, Kind, Verifier, read_records};
use mcp_recovery_plan::{
    Status, Step, ToolList, TraceError, TracedCall, build_plan, load_tools, parse_session_calls,
};
use mcp_recovery_proxy::{
    Approver, Board, Class, Effects, Policy, Prior, Reply, Verdict, ask_quorum,
    prior_compensations, prior_key, redacted_record, rollback,
};
use serde_json::{Map, Value, json};

use crate::Failure;
use crate::args::proxy::RollbackArgs;
use crate::commands::proxy::{
    approvals_board, journal_public_key, one_server, open_signing, read_overlays,
};
use crate::inputs::Input;
use crate::live;
use crate::overlay::OverlayArg;

/// Runs `rollback`: exit 0 when every compensation succeeded or was done before, 1 when some
/// step needs attention, 2 when it could not run.
pub fn run(args: &RollbackArgs) -> Result<ExitCode, Failure> {
    // The writer's lock is taken before the journal is read, so no other writer appends
    // between the reading and the rollback's own records.
    let (mut journal, _shipper) = if args.dry_run {
        (None, None)
    } else {
        let (journal, shipper) = open_signing(
            &args.journal,
            true,
            &args.lock.holder("rollback"),
            args.journal_key.as_deref(),
            args.checkpoint_to.as_deref(),
        )?;
        (Some(journal), shipper)
    };
    let input = Input::named(&args.journal);
    let shown = input.display();
    let bytes = input.read()?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        Failure::Usage(format!(
            "{shown}: the journal is not UTF-8 (byte {}); refusing to act on it",
            e.valid_up_to() + 1
        ))
    })?;
    // A writer moved an incomplete last line aside when it opened the journal; a dry run
    // leaves it where it is, and out.
    let report = verified(text, &args.keys, args.journal_key.as_deref())?;
    let text = match (report.torn, report.broken) {
        (Some(torn), _) => crate::torn::whole_lines(text, &shown, &torn),
        (None, Some(broken)) => {
            return Err(Failure::Usage(format!(
                "{shown}: the journal does not verify ({broken}); refusing to act on it"
            )));
        }
        (None, None) => text,
    };
    let (policy, approver) = args.policy.resolve()?;
    // A dry run takes no decisions.
    let approvals = if args.dry_run {
        None
    } else {
        approvals_board(&policy, args.approvals_listen, None, "rollback")?
    };
    let overlays = read_overlays(&args.overlays)?;
    let server = one_server(
        live::servers(&args.server, args.config.as_deref())?,
        "rollback",
    )?;
    let name = server.name();
    // The server never inherits the secrets the policy reads from this environment.
    let mut options = server.options().clone();
    options.withheld = policy.file.secret_variables();
    let mut connection =
        Connection::open(server.target(), &options).map_err(Failure::server(name.clone()))?;
    let mut listed = connection
        .list_tools()
        .map_err(Failure::server(name.clone()))?;
    let server_name = connection
        .server_name()
        .or_else(|| mcp_recovery_model::server_name(&listed))
        .map(str::to_owned);
    for overlay in &overlays {
        overlay.check_server(server_name.as_deref())?;
        overlay.apply(&mut listed)?;
    }
    let tools = load_tools(&listed).map_err(|e| Failure::Usage(format!("server {name}: {e}")))?;
    // Big results were written beside the journal; the plan binds from them.
    let text = crate::read_back::inline(text, &args.journal, args.session.as_deref(), &tools)
        .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
    let records = read_records(&text).map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
    let sessions = chosen_sessions(args, &shown, &text, &records, &tools)?;
    let mut out = std::io::stdout().lock();
    if args.dry_run {
        for session in &sessions {
            dry_run(&mut out, &tools, session)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    drop(out);
    let Some(journal) = journal.as_mut() else {
        return Err(Failure::Usage("the journal is not open".into()));
    };
    let timeout = Duration::from_secs(args.server.timeout);
    let secrets = server.target().secrets(server.options());
    let mut runner = Runner::start(connection, journal, approver, &policy, secrets, approvals);
    let mut attention = false;
    for session in &sessions {
        runner.session.clone_from(&session.id);
        let report = rollback(
            &mut runner,
            &tools.tools,
            &policy,
            &session.calls,
            &session.prior,
            json!({"command": "rollback"}),
            timeout,
            None,
        )
        .map_err(|e| Failure::Usage(e.to_string()))?;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "session {}: {} compensated, {} already done, {} failed, {} skipped",
            escape_controls(&session.id),
            report.compensated,
            report.already,
            report.failed,
            report.skipped
        )?;
        for line in &report.attention {
            writeln!(out, "  needs attention: {}", escape_controls(line))?;
        }
        attention |= !report.attention.is_empty();
    }
    runner.stop();
    Ok(if attention {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The journal's verification: the chain and canonical form, and the checkpoint signatures
/// when `keys` (`--key`) or a journal key (`--journal-key`, its public half) are given.
fn verified(
    text: &str,
    keys: &[PathBuf],
    journal_key: Option<&Path>,
) -> Result<mcp_recovery_journal::Verification, Failure> {
    let mut publics = crate::checkpoints::public_keys(keys)?;
    if let Some(key) = journal_key {
        publics.push(journal_public_key(key)?);
    }
    let mut verifier = if publics.is_empty() {
        Verifier::new()
    } else {
        Verifier::new().with_keys(publics)
    };
    for line in text.as_bytes().split_inclusive(|&b| b == b'\n') {
        verifier.push(line);
    }
    Ok(verifier.finish())
}

/// A session of the journal as a rollback sees it.
struct Recorded {
    id: String,
    /// The `time` and `upstream` of its `session.start` record.
    started: String,
    upstream: String,
    calls: Vec<(Value, TracedCall)>,
    prior: HashMap<String, Prior>,
    /// Compensations the plan makes that no earlier rollback completed.
    left: usize,
    /// Steps needing attention (unknown outcomes, irreversible or undeclared tools) that no
    /// rollback has reported since the session's last call.
    unreported: usize,
}

impl Recorded {
    fn read(
        id: &str,
        text: &str,
        records: &[Map<String, Value>],
        tools: &ToolList,
    ) -> Result<Recorded, TraceError> {
        let calls = parse_session_calls(text, id)?;
        let prior = prior_compensations(records, id);
        let plan = build_plan(
            tools,
            &calls.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
        );
        let left = calls
            .iter()
            .rev()
            .zip(&plan.steps)
            .filter(|((key, _), step)| {
                step.status == Status::Compensate
                    && !earlier(&prior, key, step)
                        .iter()
                        .all(|p| p.is_some_and(|p| p.succeeded))
            })
            .count();
        let last = |kinds: &[Kind]| {
            records.iter().rposition(|r| {
                r.get("session").and_then(Value::as_str) == Some(id)
                    && r.get("kind")
                        .and_then(Value::as_str)
                        .and_then(Kind::parse)
                        .is_some_and(|k| kinds.contains(&k))
            })
        };
        let reported = last(&[Kind::RollbackEnd]) > last(&[Kind::CallIntent, Kind::CallOutcome]);
        let unreported = if reported {
            0
        } else {
            plan.steps
                .iter()
                .filter(|s| s.status.needs_attention())
                .count()
        };
        let start = records.iter().find(|r| {
            r.get("session").and_then(Value::as_str) == Some(id)
                && r.get("kind").and_then(Value::as_str) == Some(Kind::SessionStart.as_str())
        });
        let member = |name: &str| {
            start
                .and_then(|r| r.get(name))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        };
        Ok(Recorded {
            id: id.to_owned(),
            started: member("time"),
            // A journal written before URLs were reduced holds the whole URL.
            upstream: match member("upstream") {
                url if url.starts_with("http://") || url.starts_with("https://") => {
                    mcp_recovery_client::shown_url(&url)
                }
                upstream => upstream,
            },
            calls,
            prior,
            left,
            unreported,
        })
    }
}

/// One session's id, its journal lines and its records.
type SessionLines = (String, String, Vec<Map<String, Value>>);

/// The sessions to roll back: `--session`; else every one with effects left (compensations not
/// yet done, or steps needing attention no rollback has reported) when `--all` says so (newest
/// first), else the only one. Several without `--all` are listed and refused: nothing is rolled
/// back by guessing which.
fn chosen_sessions(
    args: &RollbackArgs,
    shown: &str,
    text: &str,
    records: &[Map<String, Value>],
    tools: &ToolList,
) -> Result<Vec<Recorded>, Failure> {
    let read = |id: &str, text: &str, records: &[Map<String, Value>]| {
        Recorded::read(id, text, records, tools)
            .map_err(|e| Failure::Usage(format!("{shown}: {e}")))
    };
    if let Some(id) = &args.session {
        let started = |r: &&Map<String, Value>| {
            r.get("kind").and_then(Value::as_str) == Some("session.start")
        };
        let known: Vec<&str> = records
            .iter()
            .filter(started)
            .filter_map(|r| r.get("session").and_then(Value::as_str))
            .collect();
        if !known.contains(&id.as_str()) {
            // The message is escaped where it is printed.
            let newest: Vec<&str> = known.iter().rev().take(10).copied().collect();
            let newest = match newest.as_slice() {
                [] => "none".to_owned(),
                some => some.join(", "),
            };
            return Err(Failure::Usage(format!(
                "{shown}: no session '{id}' was started in this journal (its newest: {newest})"
            )));
        }
        return Ok(vec![read(id, text, records)?]);
    }
    // Each session's lines and records, gathered in one pass, so that a journal of many
    // sessions is read once rather than once per session.
    let mut groups: Vec<SessionLines> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (line, record) in text.lines().zip(records) {
        let id = record
            .get("session")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let at = *index.entry(id.to_owned()).or_insert_with(|| {
            groups.push((id.to_owned(), String::new(), Vec::new()));
            groups.len() - 1
        });
        let (_, lines, own) = &mut groups[at];
        lines.push_str(line);
        lines.push('\n');
        own.push(record.clone());
    }
    let mut open = Vec::new();
    for (id, lines, own) in groups.iter().rev() {
        let session = read(id, lines, own)?;
        if session.left > 0 || session.unreported > 0 {
            open.push(session);
        }
    }
    // How the sessions that did not end normally ended, as `proxy` names them at its start. A
    // dry run holds no lock: a session without a `session.end` may still be running.
    let unfinished = mcp_recovery_proxy::unfinished(records);
    let how = |id: &str| match unfinished.iter().find(|u| u.session == id) {
        Some(u) if u.cause.is_none() && args.dry_run => {
            "; it has no session.end (cut off, or its proxy still runs)".to_owned()
        }
        Some(u) => format!("; it {}", u.how()),
        None => String::new(),
    };
    if open.len() > 1 && !args.all {
        let mut out = std::io::stdout().lock();
        writeln!(out, "sessions with effects left (newest first):")?;
        for session in &open {
            writeln!(
                out,
                "  {}  started {}  upstream {}  {} to compensate, {} needing attention{}",
                escape_controls(&session.id),
                escape_controls(&session.started),
                escape_controls(&session.upstream),
                session.left,
                session.unreported,
                how(&session.id)
            )?;
        }
        return Err(Failure::Usage(format!(
            "{shown}: {} sessions have effects left; name one with --session ID, or roll them \
             all back, newest first, with --all",
            open.len()
        )));
    }
    let mut out = std::io::stdout().lock();
    match open.as_slice() {
        [] => writeln!(out, "no session of {shown} has effects left to roll back")?,
        [one] if !args.all => writeln!(
            out,
            "rolling back session {} (started {}, upstream {}): the only one with effects left{}",
            escape_controls(&one.id),
            escape_controls(&one.started),
            escape_controls(&one.upstream),
            how(&one.id)
        )?,
        _ => {}
    }
    Ok(open)
}

/// `--dry-run`: the plan of one session and what earlier runs did.
fn dry_run(out: &mut impl Write, tools: &ToolList, session: &Recorded) -> Result<(), Failure> {
    let plan = build_plan(
        tools,
        &session
            .calls
            .iter()
            .map(|(_, c)| c.clone())
            .collect::<Vec<_>>(),
    );
    writeln!(out, "session {}", escape_controls(&session.id))?;
    for ((id, _), step) in session.calls.iter().rev().zip(&plan.steps) {
        let earlier = earlier(&session.prior, id, step);
        let recorded = || earlier.iter().flatten();
        // Every recorded call was sent (an intent) or answered; a failed one stops its step.
        let done = if recorded().any(|p| p.outcomes == 0) {
            " (an earlier compensation's outcome is unknown)"
        } else if recorded().any(|p| !p.succeeded) {
            " (an earlier compensation failed)"
        } else if earlier.iter().all(Option::is_some) && !earlier.is_empty() {
            " (compensation already recorded)"
        } else if recorded().next().is_some() {
            " (part of the compensation already recorded)"
        } else {
            ""
        };
        writeln!(
            out,
            "  call {}: {} {} {}{done}: {}",
            escape_controls(&id.to_string()),
            escape_controls(&step.tool),
            step.status,
            escape_controls(&step.calls_summary()),
            escape_controls(&step.reason)
        )?;
    }
    Ok(())
}

/// What the journal recorded of each compensating call of a step, in order.
fn earlier(prior: &HashMap<String, Prior>, call: &Value, step: &Step) -> Vec<Option<Prior>> {
    step.calls()
        .enumerate()
        .map(|(part, planned)| prior.get(&prior_key(call, part, &planned.name)).copied())
        .collect()
}

type Job = (
    String,
    Map<String, Value>,
    mpsc::Sender<Result<Value, ClientError>>,
);

/// The live connection on a worker thread, so one compensating call can be given up on after
/// its own `timeoutMs` while the connection's timeout stays the `--timeout`.
struct Runner<'j> {
    jobs: Option<mpsc::Sender<Job>>,
    worker: Option<std::thread::JoinHandle<()>>,
    broken: Option<String>,
    journal: &'j mut Journal,
    session: String,
    approver: Approver,
    policy: &'j Policy,
    /// The secrets the connection was given: never journaled.
    secrets: Secrets,
    /// Where compensations the policy's `[[approvals]]` gate wait for their quorum.
    approvals: Option<Arc<Board>>,
}

impl<'j> Runner<'j> {
    fn start(
        mut connection: Connection,
        journal: &'j mut Journal,
        approver: Approver,
        policy: &'j Policy,
        secrets: Secrets,
        approvals: Option<Arc<Board>>,
    ) -> Runner<'j> {
        let (jobs, receiver) = mpsc::channel::<Job>();
        let worker = std::thread::spawn(move || {
            for (name, arguments, reply) in receiver {
                let _ = reply.send(connection.call_tool(&name, Value::Object(arguments)));
            }
            connection.close();
        });
        Runner {
            jobs: Some(jobs),
            worker: Some(worker),
            broken: None,
            journal,
            session: String::new(),
            approver,
            policy,
            secrets,
            approvals,
        }
    }

    fn stop(&mut self) {
        self.jobs = None;
        if self.broken.is_none()
            && let Some(worker) = self.worker.take()
        {
            let _ = worker.join();
        }
    }
}

impl Effects for Runner<'_> {
    fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
    ) -> Reply {
        if let Some(reason) = &self.broken {
            return Reply::Lost(format!("not sent: {reason}"));
        }
        let Some(jobs) = &self.jobs else {
            return Reply::Lost("not sent: the connection is closed".into());
        };
        let (sender, receiver) = mpsc::channel();
        if jobs
            .send((name.to_owned(), arguments.clone(), sender))
            .is_err()
        {
            self.broken = Some("the connection is closed".into());
            return Reply::Lost("the connection is closed".into());
        }
        match receiver.recv_timeout(timeout) {
            Ok(Ok(result)) => Reply::Result(result),
            Ok(Err(ClientError::Rpc { code, message, .. })) => {
                Reply::Error(json!({"code": code, "message": message}))
            }
            Ok(Err(e)) => {
                // The server exited or the connection broke: what follows is not sent.
                let reason = e.to_string();
                self.broken = Some(reason.clone());
                Reply::Lost(reason)
            }
            Err(_) => {
                // The connection is still waiting for that answer: nothing more can be sent
                // on it, and a rerun resumes from the journal.
                let reason = format!("no answer within {} ms", timeout.as_millis());
                self.broken = Some(reason.clone());
                Reply::Lost(reason)
            }
        }
    }

    fn unsent(&mut self) -> Option<String> {
        self.broken.clone()
    }

    fn approve(&mut self, impact: &Value) -> Verdict {
        self.approver.ask(impact, self.policy.approval_timeout())
    }

    fn approve_quorum(
        &mut self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: Class,
    ) -> Option<(Verdict, Map<String, Value>)> {
        let (verdict, record) = ask_quorum(
            self.approvals.as_ref(),
            self.policy,
            &self.secrets,
            &self.session,
            impact,
            arguments,
            class,
        );
        Some((verdict, record?))
    }

    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        let fields = redacted_record(&self.secrets, fields);
        self.journal.append(&self.session, kind, fields).map(|_| ())
    }
}
