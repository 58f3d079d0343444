//! `mcp-recovery rollback`: run the compensation plan of a recorded session against a live
//! server, journaling each step; resumable after a crash.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use mcp_recovery_client::{ClientError, Connection};
use mcp_recovery_journal::{Journal, JournalError, Kind, read_records, verify};
use mcp_recovery_plan::{load_tools, parse_session_calls, trace_sessions};
use mcp_recovery_proxy::{
    Approver, Effects, Policy, Reply, Verdict, escape, prior_compensations, rollback,
};
use serde_json::{Map, Value, json};

use crate::Failure;
use crate::cli::ServerArgs;
use crate::inputs::Input;
use crate::live;
use crate::proxy_cmd::{PolicyArgs, one_server, open_journal, read_overlays};

/// Arguments of `rollback`.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The journal of the session to roll back (compensations are appended to it).
    #[arg(long, value_name = "FILE", value_parser = crate::cli::written_path)]
    pub journal: PathBuf,
    /// The session to roll back (default: the journal's last session).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print what would be done; call nothing and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The policy that gates the compensating calls.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Apply this overlay (JSON or TOML) to the server's tools before planning (repeatable; the
    /// server's own declarations win).
    #[arg(long = "overlay", value_name = "FILE")]
    pub overlays: Vec<PathBuf>,
    /// The MCP client config (Claude Desktop, Cursor, VS Code) whose --server to reach.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The live server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Runs `rollback`: exit 0 when every compensation succeeded or was done before, 1 when some
/// step needs attention, 2 when it could not run.
pub fn run(args: &RollbackArgs) -> Result<ExitCode, Failure> {
    let journal = Input::named(&args.journal);
    let shown = journal.display();
    let bytes = journal.read()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(broken) = verify(&text).broken {
        return Err(Failure::Usage(format!(
            "{shown}: the journal does not verify ({broken}); refusing to act on it"
        )));
    }
    let session = match &args.session {
        Some(session) => session.clone(),
        None => trace_sessions(&text)
            .pop()
            .ok_or_else(|| Failure::Usage(format!("{shown}: the journal has no session")))?,
    };
    let calls = parse_session_calls(&text, &session)
        .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
    let records = read_records(&text).map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
    let prior = prior_compensations(&records, &session);
    let (policy, approver) = args.policy.resolve()?;
    let overlays = read_overlays(&args.overlays)?;
    let server = one_server(
        live::servers(&args.server, args.config.as_deref())?,
        "rollback",
    )?;
    let name = server.name();
    let mut connection = Connection::open(server.target(), server.options())
        .map_err(Failure::server(name.clone()))?;
    let mut listed = connection
        .list_tools()
        .map_err(Failure::server(name.clone()))?;
    for overlay in &overlays {
        overlay.check_server(
            connection
                .initialize_result()
                .pointer("/serverInfo/name")
                .and_then(Value::as_str),
        )?;
        overlay.apply(&mut listed)?;
    }
    let tools = load_tools(&listed).map_err(|e| Failure::Usage(format!("server {name}: {e}")))?;
    let mut out = std::io::stdout().lock();
    if args.dry_run {
        let plan = mcp_recovery_plan::build_plan(
            &tools,
            &calls.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
        );
        writeln!(out, "session {}", escape(&session))?;
        for ((id, _), step) in calls.iter().rev().zip(&plan.steps) {
            let done = prior
                .get(&id.to_string())
                .filter(|p| p.outcomes > 0 || p.intents > 0)
                .map_or("", |p| {
                    if p.outcomes > 0 {
                        " (compensation already recorded)"
                    } else {
                        " (an earlier compensation's outcome is unknown)"
                    }
                });
            let call = step.call.as_ref().map_or_else(
                || "-".to_owned(),
                |c| format!("{} {}", c.name, Value::Object(c.arguments.clone())),
            );
            writeln!(
                out,
                "  call {id}: {} {} {}{done}: {}",
                escape(&step.tool),
                step.status,
                escape(&call),
                escape(&step.reason)
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    drop(out);
    let mut journal = open_journal(&args.journal, true)?;
    let timeout = Duration::from_secs(args.server.timeout);
    let mut runner = Runner::start(connection, &mut journal, session.clone(), approver, &policy);
    let report = rollback(
        &mut runner,
        &tools.tools,
        &policy,
        &calls,
        &prior,
        json!({"command": "rollback"}),
        timeout,
        None,
    )
    .map_err(|e| Failure::Usage(e.to_string()))?;
    runner.stop();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "session {}: {} compensated, {} already done, {} failed, {} skipped",
        escape(&session),
        report.compensated,
        report.already,
        report.failed,
        report.skipped
    )?;
    for line in &report.attention {
        writeln!(out, "  needs attention: {}", escape(line))?;
    }
    Ok(if report.attention.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
    approval_timeout: Duration,
}

impl<'j> Runner<'j> {
    fn start(
        mut connection: Connection,
        journal: &'j mut Journal,
        session: String,
        approver: Approver,
        policy: &Policy,
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
            session,
            approver,
            approval_timeout: policy.approval_timeout(),
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
            return Reply::Lost("the connection is closed".into());
        }
        match receiver.recv_timeout(timeout) {
            Ok(Ok(result)) => Reply::Result(result),
            Ok(Err(ClientError::Rpc { code, message, .. })) => {
                Reply::Error(json!({"code": code, "message": message}))
            }
            Ok(Err(e)) => Reply::Lost(e.to_string()),
            Err(_) => {
                // The connection is still waiting for that answer: nothing more can be sent
                // on it, and a rerun resumes from the journal.
                let reason = format!("no answer within {} ms", timeout.as_millis());
                self.broken = Some(reason.clone());
                Reply::Lost(reason)
            }
        }
    }

    fn approve(&mut self, impact: &Value) -> Verdict {
        self.approver.ask(impact, self.approval_timeout)
    }

    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        self.journal.append(&self.session, kind, fields).map(|_| ())
    }
}
