//! The approvers and approval rules of a policy, checked as it is read: names, keys and Slack
//! users of their own, and rules naming known approvers once each.

use mcp_recovery_base::text::escape_controls;

use super::PolicyFile;

impl PolicyFile {
    /// Approvers have distinct names, and keys and Slack user ids of their own (so no one
    /// person counts twice towards a quorum); every key is an ed25519 public key a signature can
    /// be bound to (`PublicKey::from_hex` refuses weak keys). Each rule names known approvers,
    /// once each, and asks for a quorum of at least one and at most as many as it names. `text`
    /// is the file, for the lines errors give.
    pub(super) fn check_approvals(&self, text: &str) -> Result<(), String> {
        let mut names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut keys = std::collections::HashMap::new();
        let mut slack_users = std::collections::HashMap::new();
        for (index, approver) in self.approvers.iter().enumerate() {
            let shown = escape_controls(&approver.name);
            if approver.name.is_empty() {
                return Err(format!("approvers[{index}].name is empty"));
            }
            // A name is printed to approvers, auditors and Slack: nothing in it may act unseen.
            if approver
                .name
                .chars()
                .any(mcp_recovery_base::text::is_unsafe_char)
            {
                return Err(format!(
                    "approvers[{index}].name '{shown}' holds a control, invisible or bidirectional \
                     character"
                ));
            }
            // Names that read alike (`alice`, `Alice`, `аlice` with a Cyrillic а) would let one
            // approver pass for another wherever a person reads the name.
            if let Some(&first) = names.get(&crate::names::fold_name(&approver.name)) {
                let other = &self.approvers[first];
                return Err(if other.name == approver.name {
                    format!("approvers[{index}].name: '{shown}' is named twice")
                } else {
                    format!(
                        "approvers[{index}].name: '{shown}' reads like approvers[{first}] ('{}'): \
                         each approver needs a name nobody could take for another's",
                        escape_controls(&other.name)
                    )
                });
            }
            names.insert(crate::names::fold_name(&approver.name), index);
            mcp_recovery_journal::keys::PublicKey::from_hex(&approver.key)
                .map_err(|why| format!("approvers[{index}].key (of '{shown}'): {why}"))?;
            // Named twice, to this approver (at its line) and to an earlier one.
            let twice = |member: &str, first: usize| {
                format!(
                    "is given twice, to '{shown}'{} and to approvers[{first}] ('{}'): each \
                     approver needs their own, or one person could count twice towards a quorum",
                    line_of(text, index, member),
                    escape_controls(&self.approvers[first].name),
                )
            };
            if let Some(&first) = keys.get(approver.key.as_str()) {
                return Err(format!("approvers[{index}].key {}", twice("key", first)));
            }
            keys.insert(approver.key.as_str(), index);
            if let Some(user) = &approver.slack_user {
                if user.is_empty() {
                    return Err(format!("approvers[{index}].slack-user is empty"));
                }
                if let Some(&first) = slack_users.get(user.as_str()) {
                    let user = escape_controls(user);
                    let twice = twice("slack-user", first);
                    return Err(format!("approvers[{index}].slack-user: '{user}' {twice}"));
                }
                slack_users.insert(user.as_str(), index);
            }
        }
        for (index, rule) in self.approvals.iter().enumerate() {
            if rule.pattern.is_none() && rule.class.is_none() {
                return Err(format!(
                    "approvals[{index}] needs `match` (a tool glob) or `class`"
                ));
            }
            let mut seen = std::collections::HashSet::new();
            for name in &rule.of {
                let shown = escape_controls(name);
                if !self.approvers.iter().any(|a| a.name == *name) {
                    return Err(format!(
                        "approvals[{index}].of: '{shown}' is not in [[approvers]]"
                    ));
                }
                if !seen.insert(name.as_str()) {
                    return Err(format!("approvals[{index}].of: '{shown}' is named twice"));
                }
            }
            if rule.quorum == 0 || rule.quorum > rule.of.len() {
                return Err(format!(
                    "approvals[{index}].quorum = {} must be between 1 and the {} approvers of `of`",
                    rule.quorum,
                    rule.of.len()
                ));
            }
        }
        Ok(())
    }
}

/// ` (line N)` for `approvers[index].member` of the policy `text`, when it can be found.
fn line_of(text: &str, index: usize, member: &str) -> String {
    use toml::de::{DeTable, DeValue};

    let Ok(document) = DeTable::parse(text) else {
        return String::new();
    };
    let at = match document.get_ref().get("approvers").map(|a| a.get_ref()) {
        Some(DeValue::Array(approvers)) => match approvers.get(index).map(|a| a.get_ref()) {
            Some(DeValue::Table(approver)) => approver.get(member).map(|v| v.span().start),
            _ => None,
        },
        _ => None,
    };
    at.and_then(|at| text.get(..at))
        .map_or_else(String::new, |before| {
            format!(" (line {})", before.matches('\n').count() + 1)
        })
}
