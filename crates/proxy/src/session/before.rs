//! The before-image an overlay declares for a tool: read before the call is journaled and
//! forwarded, only through a tool that may run unasked; and, when it declares `unchanged`, the
//! after-image: the same read once the call succeeded, before its outcome is journaled.

use std::io::Write;

use mcp_recovery_model::BeforeImage;
use serde_json::{Map, Value};

use crate::classify::Class;
use crate::policy::Unasked;
use crate::rollback::{Effects, Reply};

use super::state::{CallContext, Session};

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
        let image = self.declared_image(name)?;
        Some(self.read_image(&image, arguments))
    }

    /// Takes the after-image of a call that succeeded, when its overlay's before-image declares
    /// `unchanged`: the same read, with the same arguments and under the same conditions, run
    /// again before the outcome is journaled and the answer returned.
    pub(super) fn after_image(&mut self, call: &CallContext) -> Option<Map<String, Value>> {
        let image = self.declared_image(&call.name)?;
        if !image.unchanged {
            return None;
        }
        Some(self.read_image(&image, &call.arguments))
    }

    /// The before-image an overlay declares for `name`, as the server's tool list holds it.
    fn declared_image(&self, name: &str) -> Option<BeforeImage> {
        let tools = self.tools.as_deref()?;
        tools.iter().find(|t| t.name == name)?.before_image()
    }

    /// Runs the read of `image` with arguments bound from the call's: `name`, `arguments` and
    /// `result` (null, with a `reason` or an `error`, when it got none or was not sent).
    fn read_image(
        &mut self,
        image: &BeforeImage,
        arguments: &Map<String, Value>,
    ) -> Map<String, Value> {
        let listed = self.tools.iter().flatten().any(|t| t.name == image.read);
        let mut record = Map::new();
        record.insert("name".into(), Value::from(image.read.as_str()));
        let read_arguments = match mcp_recovery_plan::read_arguments(image, arguments) {
            Ok(read_arguments) => read_arguments,
            Err(failures) => {
                record.insert("result".into(), Value::Null);
                record.insert("reason".into(), Value::from(failures.join("; ")));
                return record;
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
            return record;
        }
        if let Some(why) = self.unasked_read_refused(&image.read) {
            record.insert("result".into(), Value::Null);
            record.insert("reason".into(), Value::from(why));
            return record;
        }
        let timeout = self.settings.policy.call_timeout();
        match self.call_tool(&image.read, &read_arguments, timeout) {
            Reply::Result(result) if nesting(&result) > MAX_IMAGE_NESTING => {
                record.insert("result".into(), Value::Null);
                record.insert(
                    "reason".into(),
                    Value::from(format!(
                        "its result nests deeper than {MAX_IMAGE_NESTING} levels, more than a journal line holds"
                    )),
                );
            }
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
        record
    }

    /// Why the proxy does not run `read` for a before-image: a tool that is not read-only, or
    /// one the policy would ask about, deny, or offer to a quorum.
    pub(super) fn unasked_read_refused(&self, read: &str) -> Option<String> {
        let class = self.classes.get(read).map_or(Class::Unknown, |c| c.class);
        Some(
            match self.settings.policy.refuses_unasked_read(read, class)? {
                Unasked::NotReadOnly(class) => format!(
                    "'{read}' is {}, not read-only, so the proxy does not run it for a before-image",
                    class.as_str()
                ),
                Unasked::Gated(rule) => format!(
                    "the policy does not let '{read}' run unasked ({rule}), so the proxy does not run it for a before-image"
                ),
            },
        )
    }
}

/// The deepest result an image keeps: a journal line is read back only while it nests at most
/// 127 levels (serde_json's limit), and the record holds the result two levels down.
const MAX_IMAGE_NESTING: usize = 125;

/// How many levels of arrays and objects `value` nests (0 for a scalar), counted without
/// recursion.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    deepest
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nesting_counts_containers_without_recursing() {
        assert_eq!(nesting(&json!(1)), 0);
        assert_eq!(nesting(&json!({})), 1);
        assert_eq!(nesting(&json!({"a": [1, {"b": []}], "c": 2})), 4);
        let mut deep = json!(0);
        for _ in 0..MAX_IMAGE_NESTING + 1 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(nesting(&deep), MAX_IMAGE_NESTING + 1);
    }
}
