//! What the proxy's tests share: settings, requests and journaled runs of a scripted session.
#![allow(dead_code, clippy::unwrap_used)]

pub mod files;

use std::path::Path;
use std::sync::{Arc, Mutex};

use mcp_recovery_journal::Journal;
use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_proxy::{
    Approver, DEFAULT_ROLLBACK_WINDOW, NamedOverlay, OnFailure, Overlays, Policy, ScriptRun,
    Settings, run_scripted,
};
use serde_json::{Map, Value, json};

/// A session of `policy`, without overlays, and no one to approve anything.
pub fn settings(policy: Policy) -> Settings {
    Settings {
        policy,
        approver: Approver::Command("exit 1".into()),
        session: "s1".into(),
        upstream: "scripted".into(),
        overlays: Overlays::default(),
        secrets: mcp_recovery_client::Secrets::default(),
        rollback_window: DEFAULT_ROLLBACK_WINDOW,
        approvals: None,
    }
}

/// A session that rolls back when a call fails, with one TOML overlay (`shown` is its name in
/// messages) and no one to approve anything.
pub fn rollback_settings(shown: &str, overlay: &str) -> Settings {
    Settings {
        overlays: Overlays::new(vec![NamedOverlay {
            shown: shown.into(),
            overlay: Overlay::parse(overlay, OverlayFormat::Toml).unwrap(),
            positions: std::collections::HashMap::new(),
        }]),
        ..settings(Policy {
            on_failure: Some(OnFailure::Rollback),
            ..Policy::default()
        })
    }
}

/// What a scripted session journaling to `DIR/journal.jsonl` did: the lines the client got and
/// the server got, and the journal's records (the journal verified).
pub struct Journaled {
    pub client: Vec<String>,
    pub received: Vec<String>,
    pub records: Vec<Map<String, Value>>,
}

/// Runs one session to its end: `client` is what the client writes, `server` answers each line.
pub fn run_journaled(
    dir: &Path,
    settings: Settings,
    client: Vec<u8>,
    server: impl FnMut(&str) -> Vec<String> + Send + 'static,
) -> Journaled {
    let path = dir.join("journal.jsonl");
    let _ = std::fs::remove_file(&path);
    let journal = Journal::open(&path, 1 << 30).unwrap();
    let ScriptRun {
        end,
        output,
        received,
    } = run_scripted(
        settings,
        Some(Arc::new(Mutex::new(journal))),
        client,
        Vec::new(),
        server,
    );
    end.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(mcp_recovery_journal::verify(&text).broken.is_none());
    Journaled {
        client: String::from_utf8(output)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
        received,
        records: mcp_recovery_journal::read_records(&text).unwrap(),
    }
}

/// A `tools/call` request line.
pub fn request(id: u32, name: &str, arguments: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
    )
}
