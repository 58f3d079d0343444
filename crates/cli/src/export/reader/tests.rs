//! Tests of `reader`.

#![allow(clippy::unwrap_used)]

use super::{read, unix_nanos};
use crate::export::model::Outcome;

/// Approvals go to what they decided: two denials of one call (two approvers) make one
/// refused call; an allow goes to the intent of the same request and tool, not another.
#[test]
fn approvals_join_what_they_decided() {
    let line = |seq: u32, rest: &str| {
        format!(r#"{{"seq":{seq},"session":"s","time":"2026-12-01T08:00:00.00{seq}Z",{rest}}}"#)
    };
    let text = [
        line(
            1,
            r#""kind":"approval","decision":"deny","by":"alice","request":7,"name":"pay""#,
        ),
        line(
            2,
            r#""kind":"approval","decision":"deny","by":"bob","request":7,"name":"pay""#,
        ),
        line(
            3,
            r#""kind":"approval","decision":"allow","by":"carol","request":8,"name":"pay""#,
        ),
        line(
            4,
            r#""kind":"call.intent","call":1,"request":9,"name":"pay","arguments":{}"#,
        ),
        line(
            5,
            r#""kind":"call.intent","call":2,"request":8,"name":"pay","arguments":{}"#,
        ),
        line(
            6,
            r#""kind":"call.outcome","call":2,"request":8,"name":"pay","result":{}"#,
        ),
    ]
    .join("\n");
    let (sessions, _, _) = read(&text, false).unwrap();
    let ops = &sessions[0].ops;
    assert_eq!(ops.len(), 3);
    assert_eq!(ops[0].outcome, Outcome::Refused);
    assert_eq!(ops[0].approvals.len(), 2);
    assert!(ops[1].approvals.is_empty());
    assert_eq!(ops[1].outcome, Outcome::Missing);
    assert_eq!(ops[2].approvals[0].label(), "allow by carol");
    assert_eq!(ops[2].outcome, Outcome::Ok);
    assert_eq!(ops[2].duration_ms(), Some(1));
}

/// An answer that came after the call's outcome was written unknown finishes the same call.
#[test]
fn a_late_answer_finishes_its_call() {
    let line = |seq: u32, rest: &str| {
        format!(r#"{{"seq":{seq},"session":"s","time":"2026-12-01T08:00:00.00{seq}Z",{rest}}}"#)
    };
    let text = [
        line(1, r#""kind":"call.intent","call":1,"request":3,"name":"pay","arguments":{}"#),
        line(
            2,
            r#""kind":"call.outcome","call":1,"request":3,"name":"pay","result":null,"reason":"timed out""#,
        ),
        line(
            3,
            r#""kind":"call.outcome","call":1,"request":3,"name":"pay","result":{},"late":"timed out""#,
        ),
    ]
    .join("\n");
    let (sessions, _, _) = read(&text, false).unwrap();
    let ops = &sessions[0].ops;
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].outcome, Outcome::Ok);
}

#[test]
fn reads_rfc3339_utc() {
    assert_eq!(unix_nanos("1970-01-01T00:00:00.000Z"), Some(0));
    assert_eq!(
        unix_nanos("2000-02-29T00:00:00.123Z"),
        Some(951_782_400_123_000_000)
    );
    assert_eq!(
        unix_nanos("2026-11-30T23:59:59.999Z"),
        Some(1_796_083_199_999_000_000)
    );
    assert_eq!(
        unix_nanos("2026-11-30T23:59:59Z"),
        Some(1_796_083_199_000_000_000)
    );
    for bad in [
        "",
        "2026-11-30 23:59:59Z",
        "2026-13-01T00:00:00Z",
        "2026-11-30T23:59:59.Z",
    ] {
        assert_eq!(unix_nanos(bad), None, "{bad}");
    }
}

/// The calls of an undo that makes several share `call` and `attempt`; `part` tells their
/// records apart, so each outcome finishes its own intent.
#[test]
fn the_calls_of_one_undo_are_told_apart_by_part() {
    let line = |seq: u32, rest: &str| {
        format!(r#"{{"seq":{seq},"session":"s","time":"2026-12-01T08:00:00.00{seq}Z",{rest}}}"#)
    };
    let compensation = |kind: &str, name: &str, part: &str, result: &str| {
        format!(
            r#""kind":"compensation.{kind}","call":1,"name":"{name}","undoes":"drop","attempt":1,"arguments":{{}}{part}{result}"#
        )
    };
    let text = [
        line(1, &compensation("intent", "put", "", "")),
        line(2, &compensation("intent", "tag", r#","part":1"#, "")),
        line(
            3,
            &compensation(
                "outcome",
                "tag",
                r#","part":1"#,
                r#","result":{"isError":true}"#,
            ),
        ),
        line(4, &compensation("outcome", "put", "", r#","result":{}"#)),
    ]
    .join("\n");
    let (sessions, _, _) = read(&text, false).unwrap();
    let ops = &sessions[0].ops;
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0].outcome, Outcome::Ok);
    assert_eq!(ops[0].part, None);
    assert_ne!(ops[1].outcome, Outcome::Ok);
    assert_eq!(ops[1].part.as_deref(), Some("1"));
    assert_eq!(ops[1].duration_ms(), Some(1));
}

/// A member kept out of line, or not kept (the arguments of a refused call), is exported with
/// the size and digest its `outOfLine` entry gives, never those of the `null` in its place.
#[test]
fn members_out_of_line_keep_their_size_and_digest() {
    let digest = "ab".repeat(32);
    let moved = |kept: &str| {
        format!(
            r#""arguments":null,"outOfLine":{{"arguments":{{"sha256":"{digest}","bytes":70000{kept}}}}}"#
        )
    };
    let text = [
        format!(
            r#"{{"seq":1,"session":"s","time":"2026-12-01T08:00:00.001Z","kind":"approval","decision":"deny","by":"policy","request":7,"name":"pay",{}}}"#,
            moved(r#","kept":false"#)
        ),
        format!(
            r#"{{"seq":2,"session":"s","time":"2026-12-01T08:00:00.002Z","kind":"call.intent","call":1,"request":8,"name":"pay",{}}}"#,
            moved("")
        ),
    ]
    .join("\n");
    let (sessions, _, _) = read(&text, false).unwrap();
    let ops = &sessions[0].ops;
    assert_eq!(ops[0].outcome, Outcome::Refused);
    for op in ops {
        let arguments = op.arguments.as_ref().unwrap();
        assert_eq!(
            (arguments.size, arguments.sha256.as_str()),
            (70000, digest.as_str())
        );
    }
}
