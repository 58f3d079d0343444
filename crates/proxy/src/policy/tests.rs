//! Policy files read and checked, and the decisions a policy takes.

use super::*;
use crate::names::{fold_name, glob_match};

#[test]
fn globs() {
    assert!(glob_match("*", ""));
    assert!(glob_match("delete_*", "delete_file"));
    assert!(glob_match("*_file", "delete_file"));
    assert!(glob_match("d?l*e", "delete"));
    assert!(glob_match("a*b*c", "aXbYbZc"));
    assert!(!glob_match("delete_*", "undelete_file"));
    assert!(!glob_match("a?", "a"));
    assert!(glob_match("exact", "exact"));
    assert!(glob_match("purge_*", "PURGE_everything"));
    assert!(glob_match("PuRgE_?x", "purge_Ax"));
    // Only ASCII folds: other scripts are caught as unlisted look-alikes instead.
    assert!(!glob_match("é", "É"));
}

#[test]
fn look_alikes_fold_alike() {
    for like in [
        "PURGE_everything",
        "ｐｕｒｇｅ_everything",
        "purge_еverything",
        "pur\u{200b}ge_everything",
        "ΡURGE_everything",
    ] {
        assert_eq!(fold_name(like), "purge_everything", "{like:?}");
    }
    assert_ne!(fold_name("purge_every"), "purge_everything");
}

#[test]
fn unlisted_tools_are_refused_unless_the_policy_says_otherwise() {
    let mut policy = Policy::default();
    assert_eq!(policy.unlisted_tools(), Action::Deny);
    policy.file = PolicyFile::parse("unlisted-tools = \"ask\"\n").unwrap();
    assert_eq!(policy.unlisted_tools(), Action::Ask);
    policy.unlisted_tools = Some(Action::Allow);
    assert_eq!(policy.unlisted_tools(), Action::Allow);
    assert!(Action::Deny.is_stricter_than(Action::Ask));
    assert!(!Action::Allow.is_stricter_than(Action::Allow));
}

#[test]
fn flags_then_rules_then_classes() {
    let file = PolicyFile::parse(
        r#"
on-failure = "rollback"
[classes]
unknown = "ask"
irreversible = "deny"
[[tools]]
match = "get_*"
action = "allow"
[[tools]]
match = "*"
action = "ask"
"#,
    )
    .unwrap();
    let mut policy = Policy {
        file,
        ..Policy::default()
    };
    assert_eq!(policy.on_failure(), OnFailure::Rollback);
    assert_eq!(policy.decide("get_x", Class::Unknown).action, Action::Allow);
    assert_eq!(
        policy.decide("get_x", Class::Unknown).rule,
        "tools[0] 'get_*'"
    );
    assert_eq!(policy.decide("put", Class::ReadOnly).action, Action::Ask);
    policy.file.tools.clear();
    assert_eq!(policy.decide("put", Class::Unknown).action, Action::Ask);
    assert_eq!(
        policy.decide("put", Class::Irreversible).action,
        Action::Deny
    );
    assert_eq!(policy.decide("put", Class::ReadOnly).action, Action::Allow);
    policy.allow.push("put".into());
    policy.deny.push("p*".into());
    let decision = policy.decide("put", Class::ReadOnly);
    assert_eq!(decision.action, Action::Deny);
    assert_eq!(decision.rule, "--deny 'p*'");
    policy.on_failure = Some(OnFailure::Record);
    assert_eq!(policy.on_failure(), OnFailure::Record);
}

#[test]
fn bad_files_say_where() {
    let error = PolicyFile::parse("[classes]\nunknown = \"maybe\"\n").unwrap_err();
    assert!(error.contains("unknown variant"), "{error}");
    assert!(error.contains("line 2"), "{error}");
    let error = PolicyFile::parse("on_failure = \"rollback\"\n").unwrap_err();
    assert!(error.contains("unknown field"), "{error}");
    let error = PolicyFile::parse("call-timeout-secs = 0\n").unwrap_err();
    assert!(error.contains("at least 1"), "{error}");
    assert_eq!(Policy::default().on_failure(), OnFailure::Record);
}
