//! The before-image an overlay declares for a tool: read before the call is journaled and
//! forwarded, only through a tool that may run unasked.

use std::io::Write;

use serde_json::{Map, Value};

use crate::classify::Class;
use crate::policy::Action;
use crate::rollback::{Effects, Reply};

use super::state::Session;

impl<W: Write> Session<W> {
    /// Takes the before-image an overlay declares for `name`: runs the declared read with
    /// arguments bound from the call's, before the call is journaled and forwarded. The read is
    /// sent only to a tool the server listed, that is read-only, and that the policy lets run
    /// without asking anyone (it is not journaled as a call of its own, so nothing else may
    /// pass that way); what it returned, or why nothing, is kept.
    pub(super) fn before_image(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        let tools = self.tools.as_deref()?;
        let image = tools.iter().find(|t| t.name == name)?.before_image()?;
        let listed = tools.iter().any(|t| t.name == image.read);
        let mut record = Map::new();
        record.insert("name".into(), Value::from(image.read.as_str()));
        let read_arguments = match mcp_recovery_plan::read_arguments(&image, arguments) {
            Ok(read_arguments) => read_arguments,
            Err(failures) => {
                record.insert("result".into(), Value::Null);
                record.insert("reason".into(), Value::from(failures.join("; ")));
                return Some(record);
            }
        };
        record.insert("arguments".into(), Value::Object(read_arguments.clone()));
        if !listed {
            record.insert("result".into(), Value::Null);
            record.insert(
                "reason".into(),
                Value::from(format!(
                    "the server does not list '{}', so it was not called",
                    image.read
                )),
            );
            return Some(record);
        }
        if let Some(why) = self.unasked_read_refused(&image.read) {
            record.insert("result".into(), Value::Null);
            record.insert("reason".into(), Value::from(why));
            return Some(record);
        }
        let timeout = self.settings.policy.call_timeout();
        match self.call_tool(&image.read, &read_arguments, timeout) {
            Reply::Result(result) => {
                record.insert("result".into(), result);
            }
            Reply::Error(error) => {
                record.insert("result".into(), Value::Null);
                record.insert("error".into(), error);
            }
            Reply::Lost(reason) => {
                record.insert("result".into(), Value::Null);
                record.insert("reason".into(), Value::from(reason));
            }
        }
        Some(record)
    }

    /// Why the proxy does not run `read` for a before-image: a tool that is not read-only, or
    /// one the policy would ask about, deny, or offer to a quorum.
    pub(super) fn unasked_read_refused(&self, read: &str) -> Option<String> {
        let class = self.classes.get(read).map_or(Class::Unknown, |c| c.class);
        if class != Class::ReadOnly {
            return Some(format!(
                "'{read}' is {}, not read-only, so the proxy does not run it for a before-image",
                class.as_str()
            ));
        }
        let decision = self.settings.policy.decide(read, class);
        if decision.action != Action::Allow || self.quorum_rule(read, class).is_some() {
            return Some(format!(
                "the policy does not let '{read}' run unasked ({}), so the proxy does not run it for a before-image",
                decision.rule
            ));
        }
        None
    }
}
