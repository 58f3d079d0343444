//! What the proxy's tests with overlays share: settings and requests of a scripted session.
#![allow(dead_code, clippy::unwrap_used)]

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_proxy::{
    Approver, DEFAULT_ROLLBACK_WINDOW, NamedOverlay, OnFailure, Overlays, Policy, Settings,
};
use serde_json::{Value, json};

/// A session that rolls back when a call fails, with one TOML overlay (`shown` is its name in
/// messages) and no one to approve anything.
pub fn rollback_settings(shown: &str, overlay: &str) -> Settings {
    Settings {
        policy: Policy {
            on_failure: Some(OnFailure::Rollback),
            ..Policy::default()
        },
        approver: Approver::Command("exit 1".into()),
        session: "s1".into(),
        upstream: "scripted".into(),
        overlays: Overlays::new(vec![NamedOverlay {
            shown: shown.into(),
            overlay: Overlay::parse(overlay, OverlayFormat::Toml).unwrap(),
            positions: std::collections::HashMap::new(),
        }]),
        secrets: mcp_recovery_client::Secrets::default(),
        rollback_window: DEFAULT_ROLLBACK_WINDOW,
        approvals: None,
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
