//! `audit verify --policy` on journals written record by record, as a writer with access to
//! the file could: arguments changed under a `redacted: true` that replaced nothing, a valid
//! deny the call ran against, quorums resting on Slack decisions, member values of the wrong
//! type, keys of small order and records nested past the reader's limit. The verifier of
//! spec/journal.md must agree with `audit verify` on every one, and never fail itself.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{code, run_in};
use mcp_recovery_journal::keys::SecretKey;
use mcp_recovery_journal::{GENESIS, canonical};
use mcp_recovery_proxy::call_digest;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SESSION: &str = "f92e6bc3c5561b4032206fb92e1783a5";
const REQUEST: &str = "a57333ba95790770ace917bf6843ec3e";

/// Approvers alice, bob and carol (keys in `dir`, Slack users `U` + their name in capitals) and
/// a policy: charges need 2 of the three.
fn setup(dir: &Path) {
    let mut approvers = String::new();
    for name in ["alice", "bob", "carol"] {
        assert_eq!(code(&run_in(dir, &["audit", "keygen", name])), 0);
        let key = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
        approvers.push_str(&format!(
            "[[approvers]]\nname = \"{name}\"\nkey = \"{}\"\nslack-user = \"U{}\"\n",
            key.trim(),
            name.to_uppercase()
        ));
    }
    let policy = format!(
        "{approvers}\n[[approvals]]\nmatch = \"charge_*\"\nquorum = 2\n\
         of = [\"alice\", \"bob\", \"carol\"]\n"
    );
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
}

fn arguments() -> Value {
    json!({"customerId": "c-1", "amount": 12.50, "currency": "EUR"})
}

fn digest() -> String {
    call_digest(SESSION, "charge_payment", arguments().as_object().unwrap())
}

/// `approver`'s decision on the charge, signed with their key.
fn signed(dir: &Path, approver: &str, verdict: &str) -> Value {
    let statement = json!({"type": "mcp-recovery/decision", "request": REQUEST,
        "call": digest(), "decision": verdict, "expires": "2026-12-04T21:15:52Z",
        "approver": approver});
    let secret = SecretKey::read(&dir.join(approver)).unwrap();
    json!({"approver": approver, "via": "cli", "key": secret.public().id(),
        "statement": statement, "signature": secret.sign(&canonical(&statement)),
        "at": "2026-12-04T21:15:12Z"})
}

/// `approver`'s decision on the charge as the proxy journals a Slack press (its signature
/// cannot be checked without the signing secret).
fn slack(approver: &str, verdict: &str) -> Value {
    json!({"approver": approver, "via": "slack", "slackUser": format!("U{}", approver.to_uppercase()),
        "decision": verdict, "request": REQUEST, "slackTimestamp": "1796418912",
        "slackSignature": format!("v0={}", "0".repeat(64)),
        "bodySha256": format!("sha256:{}", "0".repeat(64)), "at": "2026-12-04T21:15:12Z"})
}

/// A session whose charge an approval with `decisions` let through, then ran with
/// `intent_arguments`; `edit` changes the records before they are chained.
fn charge(
    decisions: Vec<Value>,
    intent_arguments: Value,
    edit: impl FnOnce(&mut [Value]),
) -> Vec<Value> {
    let mut records = vec![
        json!({"kind": "session.start", "session": SESSION, "upstream": "demo",
            "onFailure": "ask", "version": "0"}),
        json!({"kind": "approval", "session": SESSION, "name": "charge_payment", "request": 2,
            "arguments": arguments(), "decision": "allow", "by": "quorum",
            "rule": "tools[0] 'charge_*'", "approvalRequest": REQUEST, "callDigest": digest(),
            "quorum": {"need": 2, "of": ["alice", "bob", "carol"]}, "decisions": decisions}),
        json!({"kind": "call.intent", "session": SESSION, "name": "charge_payment", "request": 2,
            "call": 1, "arguments": intent_arguments, "class": "compensable",
            "classSource": "metadata", "rule": "class compensable"}),
        json!({"kind": "session.end", "session": SESSION, "reason": "stdin closed"}),
    ];
    edit(&mut records);
    records
}

/// Writes `records` to `dir/name` as a chained journal: `seq`, `time`, `prev` and `hash` set.
fn chain(dir: &Path, name: &str, records: Vec<Value>) {
    let mut prev = GENESIS.to_owned();
    let mut text = Vec::new();
    for (index, mut record) in records.into_iter().enumerate() {
        record["seq"] = json!(index + 1);
        record["time"] = json!("2026-12-04T21:15:12.575Z");
        record["prev"] = json!(prev);
        let hash = Sha256::digest(canonical(&record))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        record["hash"] = json!(hash);
        text.extend(canonical(&record));
        text.push(b'\n');
        prev = hash;
    }
    std::fs::write(dir.join(name), text).unwrap();
}

fn python(dir: &Path, args: &[&str]) -> Output {
    Command::new("python3")
        .current_dir(dir)
        .arg(common::python_verifier(dir))
        .args(args)
        .output()
        .unwrap()
}

/// `audit verify ARGS` and the verifier of spec/journal.md given the same: both must exit the
/// same and name the same calls (`seq N`) and lines, notes included, and the Python one must not
/// fail itself. Our exit code and output.
fn both(dir: &Path, args: &[&str]) -> (i32, String) {
    let ours = run_in(dir, &[&["audit", "verify"], args].concat());
    let theirs = python(dir, args);
    let (out, their_out) = (
        String::from_utf8_lossy(&ours.stdout).into_owned(),
        String::from_utf8_lossy(&theirs.stdout).into_owned(),
    );
    let their_err = String::from_utf8_lossy(&theirs.stderr);
    assert!(!their_err.contains("Traceback"), "{their_err}");
    let named = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                let at = l.find("seq ").or_else(|| l.find("line "))?;
                Some(format!(
                    "{}{}",
                    if l.contains("note: ") { "note " } else { "" },
                    l[at..]
                        .split([' ', ':'])
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
            })
            .collect()
    };
    assert_eq!(
        (theirs.status.code(), named(&their_out)),
        (ours.status.code(), named(&out)),
        "the verifier of spec/journal.md disagrees on {args:?}:\n{their_out}{their_err}\n\
         audit verify:\n{out}{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    (
        code(&ours),
        format!("{out}{}", String::from_utf8_lossy(&ours.stderr)),
    )
}

fn policy_check(dir: &Path, journal: &str) -> (i32, String) {
    both(dir, &[journal, "--policy", "policy.toml"])
}

#[test]
fn an_honest_charge_verifies_and_a_valid_deny_it_ran_against_fails() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let approvals = vec![
        signed(dir, "alice", "approve"),
        signed(dir, "bob", "approve"),
    ];
    chain(
        dir,
        "honest.jsonl",
        charge(approvals.clone(), arguments(), |_| {}),
    );
    let (status, out) = policy_check(dir, "honest.jsonl");
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("note:"), "{out}");

    // Carol's valid deny, counted beside two approvals, and the charge ran anyway.
    let mut decisions = approvals.clone();
    decisions.insert(0, signed(dir, "carol", "deny"));
    chain(dir, "denied.jsonl", charge(decisions, arguments(), |_| {}));
    let (status, out) = policy_check(dir, "denied.jsonl");
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("seq 3 'charge_payment'") && out.contains("ran although 'carol' denied it"),
        "{out}"
    );

    // The same by Slack.
    let mut decisions = approvals;
    decisions.push(slack("carol", "deny"));
    chain(
        dir,
        "slack_denied.jsonl",
        charge(decisions, arguments(), |_| {}),
    );
    let (status, out) = policy_check(dir, "slack_denied.jsonl");
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("ran although 'carol' denied it (on Slack)"),
        "{out}"
    );
}

#[test]
fn redacted_excuses_a_digest_only_when_the_arguments_lost_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let approvals = vec![
        signed(dir, "alice", "approve"),
        signed(dir, "bob", "approve"),
    ];
    let redacted = |records: &mut [Value]| {
        records[2]["redacted"] = json!(true);
    };

    // The amount swapped and the record marked redacted, with no `***` anywhere in it.
    let mut swapped = arguments();
    swapped["amount"] = json!(99999);
    chain(
        dir,
        "swapped.jsonl",
        charge(approvals.clone(), swapped, redacted),
    );
    let (status, out) = policy_check(dir, "swapped.jsonl");
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("seq 3") && out.contains("is not this call's"),
        "{out}"
    );

    // `***` elsewhere in the record (a before-image) excuses nothing in the arguments.
    let mut elsewhere = arguments();
    elsewhere["amount"] = json!(99999);
    chain(
        dir,
        "elsewhere.jsonl",
        charge(approvals.clone(), elsewhere, |records| {
            redacted(records);
            records[2]["before"] = json!({"name": "read", "result": {"token": "***"}});
        }),
    );
    let (status, out) = policy_check(dir, "elsewhere.jsonl");
    assert_eq!(status, 1, "{out}");

    // A secret replaced in the arguments: the digest cannot be recomputed, which is said.
    let mut starred = arguments();
    starred["customerId"] = json!("c-***");
    chain(
        dir,
        "starred.jsonl",
        charge(approvals.clone(), starred, redacted),
    );
    let (status, out) = policy_check(dir, "starred.jsonl");
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("note: seq 3") && out.contains("cannot be recomputed"),
        "{out}"
    );

    // ... in a member name too.
    let mut named = arguments();
    named["***"] = json!("x");
    chain(
        dir,
        "named.jsonl",
        charge(approvals.clone(), named, redacted),
    );
    assert_eq!(policy_check(dir, "named.jsonl").0, 0);

    // Without `redacted: true` the marker excuses nothing.
    let mut unmarked = arguments();
    unmarked["customerId"] = json!("***");
    chain(dir, "unmarked.jsonl", charge(approvals, unmarked, |_| {}));
    assert_eq!(policy_check(dir, "unmarked.jsonl").0, 1);
}

#[test]
fn a_quorum_resting_on_slack_decisions_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);

    // Two Slack decisions the journal cannot prove: counted, and named.
    let decisions = vec![slack("alice", "approve"), slack("carol", "approve")];
    chain(dir, "slack.jsonl", charge(decisions, arguments(), |_| {}));
    let (status, out) = policy_check(dir, "slack.jsonl");
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("note: seq 3 'charge_payment'")
            && out.contains("rests on the Slack decision(s) of 'alice', 'carol'")
            && out.contains("cannot prove"),
        "{out}"
    );

    // One signed and one Slack decision: the quorum still rests on Slack.
    let decisions = vec![signed(dir, "alice", "approve"), slack("bob", "approve")];
    chain(dir, "mixed.jsonl", charge(decisions, arguments(), |_| {}));
    let (status, out) = policy_check(dir, "mixed.jsonl");
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("Slack decision(s) of 'bob',"), "{out}");

    // Two signed ones and a Slack one: the quorum does not rest on it.
    let decisions = vec![
        signed(dir, "alice", "approve"),
        slack("carol", "approve"),
        signed(dir, "bob", "approve"),
    ];
    chain(dir, "signed.jsonl", charge(decisions, arguments(), |_| {}));
    let (status, out) = policy_check(dir, "signed.jsonl");
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("note:"), "{out}");

    // A Slack decision without the headers the proxy records is not counted.
    let mut bare = slack("carol", "approve");
    bare["slackSignature"] = json!("v0=forged");
    let decisions = vec![signed(dir, "alice", "approve"), bare];
    chain(dir, "bare.jsonl", charge(decisions, arguments(), |_| {}));
    let (status, out) = policy_check(dir, "bare.jsonl");
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("in the form the proxy records them"), "{out}");
}

/// A change made to a journal's records before they are chained.
type Edit = fn(&mut [Value]);

#[test]
fn members_of_the_wrong_type_are_reported_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let approvals = vec![
        signed(dir, "alice", "approve"),
        signed(dir, "bob", "approve"),
    ];
    let edits: [(&str, Edit); 8] = [
        ("session_list", |r| r[1]["session"] = json!(["a"])),
        ("session_number", |r| {
            r[1]["session"] = json!(7);
            r[2]["session"] = json!(7);
        }),
        ("name_number", |r| r[2]["name"] = json!(5)),
        ("kind_list", |r| r[2]["kind"] = json!(["call.intent"])),
        ("class_list", |r| r[2]["class"] = json!(["compensable"])),
        ("statement_list", |r| {
            r[1]["decisions"][0]["statement"]["approver"] = json!(["alice"]);
        }),
        ("key_number", |r| r[1]["decisions"][0]["key"] = json!(1234)),
        ("request_list", |r| {
            r[1]["approvalRequest"] = json!([REQUEST])
        }),
    ];
    for (name, edit) in edits {
        let file = format!("{name}.jsonl");
        chain(dir, &file, charge(approvals.clone(), arguments(), edit));
        policy_check(dir, &file);
    }
}

#[test]
fn keys_of_or_with_small_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    chain(dir, "j.jsonl", charge(Vec::new(), arguments(), |_| {}));
    // The identity, canonical and not, a point of order 8 with its sign bit set, and the key
    // of RFC 8032's first test plus the point of order 2 (a small-order component).
    for weak in [
        "0100000000000000000000000000000000000000000000000000000000000000",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "16a567fe7d4ef5482ab4012c369bf8c5f11e8d0c2559dcda50fde59708f8aee5",
    ] {
        std::fs::write(dir.join("weak.pub"), format!("{weak}\n")).unwrap();
        let (status, out) = both(dir, &["j.jsonl", "--key", "weak.pub"]);
        assert_eq!(status, 2, "{out}");
        assert!(
            out.contains("small-order") || out.contains("small order"),
            "{out}"
        );
        let theirs =
            String::from_utf8_lossy(&python(dir, &["j.jsonl", "--key", "weak.pub"]).stderr)
                .into_owned();
        assert!(
            theirs.contains("small-order") || theirs.contains("small order"),
            "{theirs}"
        );

        let policy = std::fs::read_to_string(dir.join("policy.toml")).unwrap();
        let bob = std::fs::read_to_string(dir.join("bob.pub")).unwrap();
        std::fs::write(dir.join("weak.toml"), policy.replace(bob.trim(), weak)).unwrap();
        let (status, out) = both(dir, &["j.jsonl", "--policy", "weak.toml"]);
        assert_eq!(status, 2, "{out}");
        assert!(
            out.contains("small-order") || out.contains("small order"),
            "{out}"
        );
    }
}

/// A session start holding `depth` arrays inside each other.
fn nested(depth: usize) -> Vec<Value> {
    let mut deep = json!([]);
    for _ in 1..depth {
        deep = json!([deep]);
    }
    vec![json!({"kind": "session.start", "session": SESSION, "deep": deep})]
}

#[test]
fn both_verifiers_read_records_nested_as_deep_as_the_reader_accepts_and_no_deeper() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // The record's own object and 126 arrays: 127, the most the reader accepts.
    chain(dir, "deepest.jsonl", nested(126));
    assert_eq!(both(dir, &["deepest.jsonl"]).0, 0);
    for depth in [127, 3000] {
        let name = format!("deep{depth}.jsonl");
        chain(dir, &name, nested(depth));
        let (status, out) = both(dir, &[&name]);
        assert_eq!(status, 1, "{out}");
        assert!(out.contains("line 1:"), "{out}");
    }
}

/// A rule of a class alone gates compensations too: a refund journaled with its class and no
/// approval is reported under `class = "irreversible"`, and not under a rule whose class it
/// does not have.
#[test]
fn a_compensation_is_judged_by_the_class_it_was_journaled_with() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let policy = std::fs::read_to_string(dir.path().join("policy.toml")).unwrap();
    let refund = |records: &mut Vec<Value>| {
        records.insert(
            3,
            json!({"kind": "compensation.intent", "session": SESSION, "call": 1,
                "undoes": "charge_payment", "name": "refund_payment",
                "arguments": {"transactionId": "t-1"}, "attempt": 1, "class": "irreversible"}),
        );
    };
    let mut records = charge(
        vec![
            signed(dir.path(), "alice", "approve"),
            signed(dir.path(), "bob", "approve"),
        ],
        arguments(),
        |_| {},
    );
    refund(&mut records);
    chain(dir.path(), "journal.jsonl", records);
    for (rule, reported) in [
        ("class = \"irreversible\"", true),
        ("match = \"refund_*\"\nclass = \"compensable\"", false),
    ] {
        let extra = format!("\n[[approvals]]\n{rule}\nquorum = 1\nof = [\"carol\"]\n");
        std::fs::write(dir.path().join("policy.toml"), format!("{policy}{extra}")).unwrap();
        let (status, out) = policy_check(dir.path(), "journal.jsonl");
        assert_eq!(
            out.contains("'refund_payment' (session"),
            reported,
            "{rule}: {out}"
        );
        assert_eq!(status, i32::from(reported), "{rule}: {out}");
    }
}

/// A decision counted once its `expires` had passed is no approval, and one approval never
/// covers a call journaled again under the same call number: both verifiers report each.
#[test]
fn expired_decisions_and_calls_run_twice_under_one_approval_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let late = |approver: &str, at: &str| {
        let mut decision = signed(dir, approver, "approve");
        decision["at"] = json!(at);
        decision
    };
    // Counted at its expiry, and after it; a second before it counts, a fraction not read.
    for (at, counts) in [
        ("2026-12-04T21:15:52Z", false),
        ("2027-01-01T00:00:00.000Z", false),
        ("2026-12-04T21:15:51.999Z", true),
        ("not a time", false),
    ] {
        let decisions = vec![signed(dir, "alice", "approve"), late("bob", at)];
        chain(dir, "late.jsonl", charge(decisions, arguments(), |_| {}));
        let (status, out) = policy_check(dir, "late.jsonl");
        if counts {
            assert_eq!(status, 0, "{at}: {out}");
        } else {
            assert_eq!(status, 1, "{at}: {out}");
            assert!(
                out.contains("the decision of 'bob' was counted when it had expired"),
                "{at}: {out}"
            );
        }
    }
    // The approved charge journaled twice under one call number: it ran twice.
    let approvals = vec![
        signed(dir, "alice", "approve"),
        signed(dir, "bob", "approve"),
    ];
    chain(
        dir,
        "twice.jsonl",
        charge(approvals, arguments(), |records| {
            let intent = records[2].clone();
            records[3] = intent;
        }),
    );
    let (status, out) = policy_check(dir, "twice.jsonl");
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("seq 4 'charge_payment'") && out.contains("decided seq 3 already"),
        "{out}"
    );
}
