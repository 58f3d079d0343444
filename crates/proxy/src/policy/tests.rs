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

/// A policy of three approvers (the keys of RFC 8032's first three test vectors) and one rule
/// of two of them, with `extra` before the approvers.
fn approvers(extra: &str, keys: [&str; 3], users: [&str; 3]) -> String {
    let mut text = format!("{extra}\n");
    for ((name, key), user) in ["alice", "bob", "carol"].iter().zip(keys).zip(users) {
        text.push_str(&format!(
            "[[approvers]]\nname = \"{name}\"\nkey = \"{key}\"\nslack-user = \"{user}\"\n\n"
        ));
    }
    text + "[[approvals]]\nmatch = \"charge_*\"\nquorum = 2\nof = [\"alice\", \"bob\", \"carol\"]\n"
}

const KEYS: [&str; 3] = [
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
];
const USERS: [&str; 3] = ["UALICE", "UBOB", "UCAROL"];

#[test]
fn distinct_approvers_load() {
    let file = PolicyFile::parse(&approvers("", KEYS, USERS)).unwrap();
    assert_eq!(file.approvers.len(), 3);
}

/// Two approvers with one key (or one Slack user) would let one person meet a quorum alone.
#[test]
fn approvers_sharing_a_key_or_a_slack_user_are_refused() {
    let shared = approvers("", [KEYS[0], KEYS[0], KEYS[2]], USERS);
    let error = PolicyFile::parse(&shared).unwrap_err();
    assert!(
        error.starts_with(
            "approvers[1].key is given twice, to 'bob' (line 9) and to approvers[0] ('alice')"
        ),
        "{error}"
    );
    assert!(error.contains("count twice"), "{error}");
    let later = approvers("", [KEYS[0], KEYS[1], KEYS[1]], USERS);
    let error = PolicyFile::parse(&later).unwrap_err();
    assert!(
        error.contains(
            "approvers[2].key is given twice, to 'carol' (line 14) and to approvers[1] ('bob')"
        ),
        "{error}"
    );
    let users = approvers("", KEYS, ["UALICE", "UBOB", "UALICE"]);
    let error = PolicyFile::parse(&users).unwrap_err();
    assert!(
        error.starts_with(
            "approvers[2].slack-user: 'UALICE' is given twice, to 'carol' (line 15) and to approvers[0] ('alice')"
        ),
        "{error}"
    );
    // Written inline, the file still names them (without a line where none is found).
    let inline = format!(
        "approvers = [{{name = \"a\", key = \"{0}\"}}, {{name = \"b\", key = \"{0}\"}}]\n",
        KEYS[0]
    );
    let error = PolicyFile::parse(&inline).unwrap_err();
    assert!(
        error.starts_with(
            "approvers[1].key is given twice, to 'b' (line 1) and to approvers[0] ('a')"
        ),
        "{error}"
    );
}

/// Names that read alike would let one approver pass for another wherever a person reads one.
#[test]
fn approvers_named_alike_are_refused() {
    // The policy's second approver, and its place in the rule, named `name` (TOML text).
    let bob_named = |name: &str| {
        approvers("", KEYS, USERS)
            .replacen("name = \"bob\"", &format!("name = \"{name}\""), 1)
            .replace("\"bob\", \"carol\"]", &format!("\"{name}\", \"carol\"]"))
    };
    for alike in ["Alice", "ALICE", "\u{430}lice", "ａlice"] {
        let error = PolicyFile::parse(&bob_named(alike)).unwrap_err();
        assert!(
            error.starts_with("approvers[1].name: '")
                && error.contains("reads like approvers[0] ('alice')"),
            "{alike:?}: {error}"
        );
    }
    // Characters that act unseen are refused outright, and not repeated raw.
    for hidden in [
        "a\u{200b}lice",
        "alice\u{202e}",
        "al\\u001b]0;x\\u0007ice",
        "bob\u{9b}2J",
    ] {
        let error = PolicyFile::parse(&bob_named(hidden)).unwrap_err();
        assert!(
            error.starts_with("approvers[1].name '") && error.contains("holds a control"),
            "{hidden:?}: {error}"
        );
        assert!(
            !error.chars().any(mcp_recovery_base::text::is_unsafe_char),
            "{error}"
        );
    }
    let error = PolicyFile::parse(&bob_named("alice")).unwrap_err();
    assert!(
        error.starts_with("approvers[1].name: 'alice' is named twice"),
        "{error}"
    );
}

/// A weak key (a point of small order, in any encoding and with either sign bit) is refused:
/// no one holds its secret, and some verifiers take forged signatures for it.
#[test]
fn weak_keys_are_refused() {
    let small = [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    ];
    for key in small {
        let top = u8::from_str_radix(&key[62..], 16).unwrap();
        let signed = format!("{}{:02x}", &key[..62], top | 0x80);
        for key in [key.to_owned(), signed] {
            let policy = approvers("", [KEYS[0], &key, KEYS[2]], USERS);
            let error = PolicyFile::parse(&policy).unwrap_err();
            assert!(
                error.starts_with("approvers[1].key (of 'bob'): ") && error.contains("small order"),
                "{key}: {error}"
            );
        }
    }
}

/// Every wait is between one second and 7 days; the member past it is named.
#[test]
fn waits_are_bounded() {
    for member in ["approval-timeout-secs", "call-timeout-secs"] {
        for secs in ["1000000000000", "9223372036854775807", "604801"] {
            let error = PolicyFile::parse(&format!("{member} = {secs}\n")).unwrap_err();
            assert_eq!(
                error,
                format!(
                    "{member} = {secs} is more than 604800 (7 days), the longest wait a policy may set"
                )
            );
        }
        let file = PolicyFile::parse(&format!("{member} = 604800\n")).unwrap();
        let policy = Policy {
            file,
            ..Policy::default()
        };
        let longest = std::time::Duration::from_secs(MAX_WAIT_SECS);
        assert!(policy.approval_timeout() <= longest && policy.call_timeout() <= longest);
    }
    let error = PolicyFile::parse("approval-timeout-secs = 18446744073709551615\n").unwrap_err();
    assert!(error.contains("approval-timeout-secs"), "{error}");
    let fetch = "[approvals-fetch]\nurl = \"https://d.example\"\ninterval-secs = 99999999999\n";
    let error = PolicyFile::parse(fetch).unwrap_err();
    assert!(
        error.starts_with("approvals-fetch.interval-secs = 99999999999 is more than 604800"),
        "{error}"
    );
    let notify = "[approvals-notify]\nurl = \"https://h.example\"\ntimeout-secs = 604801\n";
    let error = PolicyFile::parse(notify).unwrap_err();
    assert!(
        error.starts_with("approvals-notify.timeout-secs = 604801 is more than 604800"),
        "{error}"
    );
}
