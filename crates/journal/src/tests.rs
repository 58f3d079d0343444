use std::io::Read;

use serde_json::{Map, Value, json};

use sha2::{Digest, Sha256};

use super::*;
use crate::hash::hex;

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A journal of `n` records and its text.
fn journal(n: u64) -> (tempfile::TempDir, PathBuf, String) {
    let (dir, path, mut journal) = empty(1 << 20);
    for i in 0..n {
        let record = fields(json!({"call": i, "name": "t", "arguments": {"x": i, "f": 1.5e-7}}));
        journal.append("s", Kind::CallIntent, record).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    (dir, path, text)
}

/// An empty journal in a new directory, at most `cap` bytes with its side files, not syncing.
fn empty(cap: u64) -> (tempfile::TempDir, PathBuf, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut journal = Journal::open(&path, cap).unwrap();
    journal.set_sync(false);
    (dir, path, journal)
}

fn broken_line(text: &str) -> (usize, String) {
    let broken = verify(text).broken.expect("a fault");
    (broken.line, broken.reason)
}

#[test]
fn a_fresh_chain_verifies_and_reopens() {
    let (_dir, path, text) = journal(5);
    let report = verify(&text);
    assert_eq!(report.broken, None);
    assert_eq!(report.records, 5);
    let mut reopened = Journal::open(&path, 1 << 20).unwrap();
    assert_eq!(Some(reopened.head().to_owned()), report.head);
    reopened.append("s2", Kind::SessionEnd, Map::new()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let report = verify(&text);
    assert_eq!(report.broken, None);
    assert_eq!(report.records, 6);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["seq"], 6);
    assert_eq!(last["session"], "s2");
    assert_eq!(last["kind"], "session.end");
}

#[test]
fn lines_are_canonical_and_hash_what_the_spec_says() {
    let (_dir, _path, text) = journal(2);
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json_canonicalizer::to_string(&value).unwrap(), line);
        let mut without = value.as_object().unwrap().clone();
        let hash = without.remove("hash").unwrap();
        let digest = Sha256::digest(serde_json_canonicalizer::to_vec(&without).unwrap());
        assert_eq!(hash, hex(&digest));
    }
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["prev"], GENESIS);
    assert_eq!(first["arguments"]["f"], 1.5e-7);
}

#[test]
fn an_edited_line_is_found() {
    let (_dir, _path, text) = journal(4);
    let edited = text.replacen("\"x\":2", "\"x\":3", 1);
    assert_ne!(edited, text);
    let (line, reason) = broken_line(&edited);
    assert_eq!(line, 3);
    assert!(reason.contains("edited"), "{reason}");
}

#[test]
fn removed_reordered_and_inserted_lines_are_found() {
    let (_dir, _path, text) = journal(4);
    let lines: Vec<&str> = text.lines().collect();
    let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();

    let (line, reason) = broken_line(&join(&[lines[0], lines[2], lines[3]]));
    assert_eq!(line, 2);
    assert!(reason.contains("removed"), "{reason}");

    let (line, reason) = broken_line(&join(&[lines[1], lines[2], lines[3]]));
    assert_eq!(line, 1);
    assert!(reason.contains("removed"), "{reason}");

    let (line, reason) = broken_line(&join(&[lines[0], lines[2], lines[1], lines[3]]));
    assert_eq!(line, 2);
    assert!(reason.contains("seq is 3, expected 2"), "{reason}");

    let (line, reason) = broken_line(&join(&[lines[0], lines[1], lines[1], lines[2]]));
    assert_eq!(line, 3);
    assert!(reason.contains("reordered or repeated"), "{reason}");

    let (line, reason) = broken_line(&join(&[lines[0], "", lines[1]]));
    assert_eq!(line, 2);
    assert!(reason.contains("blank"), "{reason}");
}

#[test]
fn a_renumbered_forgery_still_breaks_the_chain() {
    // Removing line 2 and renumbering the rest keeps seq right but not prev.
    let (_dir, _path, text) = journal(3);
    let lines: Vec<&str> = text.lines().collect();
    let third = lines[2].replace("\"seq\":3", "\"seq\":2");
    let (line, reason) = broken_line(&format!("{}\n{third}\n", lines[0]));
    assert_eq!(line, 2);
    assert!(reason.contains("prev"), "{reason}");
}

#[test]
fn truncation_is_found_mid_line_and_against_a_saved_head() {
    let (_dir, _path, text) = journal(3);
    let cut = &text[..text.len() - 10];
    let (line, reason) = broken_line(cut);
    assert_eq!(line, 3);
    assert!(reason.contains("truncated"), "{reason}");
    let (line, reason) = broken_line(text.trim_end());
    assert_eq!(line, 3);
    assert!(reason.contains("truncated"), "{reason}");

    let head = verify(&text).head.unwrap();
    let against = |text: &str, saved: &str| {
        verify_reader(text.as_bytes(), 1 << 20, Verifier::expecting_head(saved))
            .unwrap()
            .broken
    };
    assert_eq!(against(&text, &head), None);
    assert_eq!(against(&text, &head.to_ascii_uppercase()), None);
    let shorter: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let short = verify(&shorter);
    assert_eq!(short.broken, None);
    let error = against(&shorter, &head).unwrap();
    assert_eq!(error.line, 0);
    assert!(error.reason.contains("truncated"), "{}", error.reason);
    // A journal that grew past the saved head still matches it.
    assert_eq!(against(&text, &short.head.unwrap()), None);
    // A saved head is shown inert when it matches nothing.
    let error = against(&text, "\u{1b}]52;c;x\u{7}").unwrap();
    assert!(!error.reason.contains('\u{1b}'), "{}", error.reason);
}

#[test]
fn streaming_gives_what_the_whole_text_gives() {
    let (_dir, _path, text) = journal(4);
    let edited = text.replacen("\"x\":2", "\"x\":7", 1);
    let cases = [
        text.clone(),
        text[..text.len() - 3].to_owned(),
        text.trim_end().to_owned(),
        format!("{text}\n"),
        edited,
        format!("\u{fffd}{text}"),
        String::new(),
    ];
    for case in &cases {
        // A one-byte buffer splits every line across reads.
        let reader = std::io::BufReader::with_capacity(1, case.as_bytes());
        let streamed = verify_reader(reader, 1 << 20, Verifier::new()).unwrap();
        assert_eq!(streamed, verify(case), "{case:?}");
    }
    // Invalid UTF-8 is refused where it is, never decoded lossily into a line that verifies.
    let mut bytes = text.clone().into_bytes();
    let second = text.find('\n').unwrap() + 1;
    bytes.insert(second + 20, 0xff);
    let streamed = verify_reader(&bytes[..], 1 << 20, Verifier::new()).unwrap();
    let broken = streamed.broken.unwrap();
    assert_eq!((broken.line, streamed.records), (2, 1), "{}", broken.reason);
    assert!(broken.reason.contains("not UTF-8"), "{}", broken.reason);
}

/// The same record spelled otherwise is not the line that was written: each respelling keeps
/// the hash (the record is the same) and is refused at its line.
#[test]
fn only_the_canonical_spelling_of_a_line_verifies() {
    let (_dir, _path, text) = journal(3);
    let lines: Vec<&str> = text.lines().collect();
    let second = lines[1];
    let respelled = [
        second.replacen("\"kind\":", "\"kind\": ", 1),
        second.replacen("\"name\":\"t\"", "\"name\":\"\\u0074\"", 1),
        second.replacen('{', "{\"seq\":2,", 1),
        format!(" {second}"),
        second.replacen(
            "\"arguments\":{\"f\":1.5e-7,\"x\":1}",
            "\"arguments\":{\"x\":1,\"f\":1.5e-7}",
            1,
        ),
    ];
    for line in &respelled {
        assert_ne!(line, second);
        let case = format!("{}\n{line}\n{}\n", lines[0], lines[2]);
        let (at, reason) = broken_line(&case);
        assert_eq!(at, 2, "{line}: {reason}");
        assert!(reason.contains("canonical"), "{line}: {reason}");
    }
}

/// One writer at a time: a second open fails naming the first, or waits for it.
#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let (_dir, path, _text) = journal(1);
    let holder = Holder {
        command: "first writer".into(),
        wait: std::time::Duration::ZERO,
    };
    let first = Journal::open_as(&path, 1 << 20, &holder).unwrap();
    let error = Journal::open(&path, 1 << 20).unwrap_err().to_string();
    let pid = std::process::id().to_string();
    assert!(
        error.contains(&format!("pid {pid} (first writer) since 20")),
        "{error}"
    );
    let waiting = Holder {
        command: "second".into(),
        wait: std::time::Duration::from_secs(20),
    };
    let released = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(first);
    });
    let mut second = Journal::open_as(&path, 1 << 20, &waiting).unwrap();
    released.join().unwrap();
    second.append("s", Kind::SessionEnd, Map::new()).unwrap();
    assert_eq!(verify(&std::fs::read_to_string(&path).unwrap()).records, 2);
}

/// A big member goes to a side file: the line stays small, the cap holds, and the side file is
/// checked and read back.
#[test]
fn big_members_are_kept_out_of_line_and_the_cap_holds() {
    let (_dir, path, mut journal) = empty(1 << 20);
    let big = "x".repeat(2 * INLINE_MAX_BYTES);
    let result = json!({"content": [{"type": "text", "text": big}]});
    let mut record = fields(json!({"call": 1, "name": "t", "arguments": {}}));
    record.insert("result".into(), result.clone());
    journal
        .append("s", Kind::CallOutcome, record.clone())
        .unwrap();
    // The same body again: one side file.
    journal.append("s", Kind::CallOutcome, record).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.len() < 4096, "{}", text.len());
    let files: Vec<_> = std::fs::read_dir(side_dir(&path)).unwrap().collect();
    assert_eq!(files.len(), 1);
    let checked = |text: &str| {
        verify_reader(
            text.as_bytes(),
            1 << 20,
            Verifier::new().with_side_files(&path),
        )
        .unwrap()
    };
    assert_eq!(checked(&text).broken, None);
    let all = &mut |_: &Map<String, Value>| true;
    let inlined = inline_out_of_line(&text, &path, Some("s"), 1 << 20, all).unwrap();
    let first: Value = serde_json::from_str(inlined.lines().next().unwrap()).unwrap();
    assert_eq!(first["result"], result);
    // The side file both records name is read back, and counted, once.
    let size = files[0].as_ref().unwrap().metadata().unwrap().len();
    let inlined = inline_out_of_line(&text, &path, None, size, all).unwrap();
    assert_eq!(inlined.lines().filter(|l| l.contains(&big)).count(), 2);
    assert!(inline_out_of_line(&text, &path, None, size - 1, all).is_err());
    // A record not read back names its member present and empty.
    let skipped = inline_out_of_line(&text, &path, None, 0, &mut |_| false).unwrap();
    let first: Value = serde_json::from_str(skipped.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&first["result"], first.get("outOfLine")),
        (&json!({}), None)
    );
    // An edited side file breaks the line naming it.
    let side = files[0].as_ref().unwrap().path();
    let edited = std::fs::read_to_string(&side)
        .unwrap()
        .replacen('x', "y", 1);
    std::fs::write(&side, edited).unwrap();
    let broken = checked(&text).broken.unwrap();
    assert_eq!(broken.line, 1);
    assert!(broken.reason.contains("sha256"), "{}", broken.reason);
    // No record takes the file past its cap, so the next open (same cap) still reads it.
    drop(journal);
    let mut journal = Journal::open(&path, text.len() as u64 + 200).unwrap();
    let error = loop {
        match journal.append("s", Kind::SessionEnd, fields(json!({"reason": "r"}))) {
            Ok(_) => continue,
            Err(e) => break e,
        }
    };
    assert!(matches!(error, JournalError::Full { .. }), "{error}");
    drop(journal);
    Journal::open(&path, text.len() as u64 + 200).unwrap();
}

/// Side files share the journal's cap: those already in `JOURNAL.d` are counted when it is
/// opened, a new one counts when written, and one already there costs nothing more.
#[test]
fn side_files_count_against_the_cap() {
    let big = |n: u8| {
        let text = char::from(b'a' + n).to_string().repeat(INLINE_MAX_BYTES);
        fields(json!({"call": 1, "name": "t", "result": {"text": text}}))
    };
    let (_dir, path, mut journal) = empty(3 * INLINE_MAX_BYTES as u64);
    journal.append("s", Kind::CallOutcome, big(0)).unwrap();
    journal.append("s", Kind::CallOutcome, big(1)).unwrap();
    // A third side file would pass the cap, and nothing of the record is written.
    let error = journal.append("s", Kind::CallOutcome, big(2)).unwrap_err();
    assert!(matches!(error, JournalError::Full { .. }), "{error}");
    assert_eq!(std::fs::read_dir(side_dir(&path)).unwrap().count(), 2);
    // One already there is no new cost.
    journal.append("s", Kind::CallOutcome, big(1)).unwrap();
    drop(journal);
    // Reopened, the side files there count at once: a record that fits the file alone is
    // refused.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut journal = Journal::open(&path, text.len() as u64 + 2 * 4096).unwrap();
    let error = journal
        .append("s", Kind::SessionEnd, Map::new())
        .unwrap_err();
    assert!(matches!(error, JournalError::Full { .. }), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

/// A refused call's approval keeps its arguments' digest and size only, however small, and
/// verifies with them; a member left unkept anywhere else within the limit is a fault.
#[test]
fn a_refused_calls_arguments_are_never_kept() {
    let (_dir, path, mut journal) = empty(1 << 20);
    let arguments = json!({"note": "x".repeat(2 * INLINE_MAX_BYTES)});
    for decision in ["deny", "allow"] {
        let record = fields(json!({"name": "t", "decision": decision, "arguments": {"a": 1}}));
        journal.append("s", Kind::Approval, record).unwrap();
    }
    let refused = fields(json!({"name": "t", "decision": "deny", "arguments": arguments}));
    journal.append("s", Kind::Approval, refused).unwrap();
    assert!(!side_dir(&path).exists());
    let text = std::fs::read_to_string(&path).unwrap();
    let records = read_records(&text).unwrap();
    let digest = |value: &Value| {
        let bytes = canonical(value);
        json!({"sha256": hex(&Sha256::digest(&bytes)), "bytes": bytes.len(), "kept": false})
    };
    assert_eq!(records[0]["arguments"], Value::Null);
    assert_eq!(
        records[0]["outOfLine"]["arguments"],
        digest(&json!({"a": 1}))
    );
    assert_eq!(records[1]["arguments"], json!({"a": 1}));
    assert_eq!(records[2]["outOfLine"]["arguments"], digest(&arguments));
    let checked = |text: &str| {
        let verifier = Verifier::new().with_side_files(&path);
        verify_reader(text.as_bytes(), 1 << 20, verifier).unwrap()
    };
    assert_eq!(checked(&text).broken, None);
    // The same entry on an allowed call is a fault (its line rewritten and rehashed).
    let mut allowed = records[0].clone();
    allowed.insert("decision".into(), Value::from("allow"));
    allowed.remove("hash");
    let hash = hex(&Sha256::digest(canonical(&Value::Object(allowed.clone()))));
    allowed.insert("hash".into(), Value::from(hash));
    let line = String::from_utf8(canonical(&Value::Object(allowed))).unwrap();
    let broken = checked(&format!("{line}\n")).broken.unwrap();
    assert!(broken.reason.contains("not kept"), "{}", broken.reason);
}

#[test]
fn reading_stops_at_the_first_fault_and_at_the_cap() {
    // Garbage followed by an endless stream: the fault ends the read.
    let endless = b"{oops\n".chain(std::io::repeat(b'a'));
    let report = verify_reader(std::io::BufReader::new(endless), u64::MAX, Verifier::new());
    assert_eq!(report.unwrap().broken.unwrap().line, 1);
    // One endless line: the cap ends it, with an error rather than a larger buffer.
    let endless = std::io::BufReader::new(std::io::repeat(b'a'));
    let error = verify_reader(endless, 1 << 16, Verifier::new()).unwrap_err();
    assert!(
        matches!(error, ReadError::TooLarge { limit: 65536 }),
        "{error}"
    );
    // Valid records past the cap are refused the same way.
    let (_dir, _path, text) = journal(3);
    let cap = text.len() as u64 - 1;
    let error = verify_reader(text.as_bytes(), cap, Verifier::new()).unwrap_err();
    assert!(matches!(error, ReadError::TooLarge { .. }), "{error}");
    let report = verify_reader(text.as_bytes(), cap + 1, Verifier::new()).unwrap();
    assert_eq!(report.records, 3);
}

#[test]
fn open_refuses_a_journal_over_the_cap_or_not_a_file() {
    let (dir, path, text) = journal(3);
    let cap = text.len() as u64 - 1;
    let error = Journal::open(&path, cap).unwrap_err();
    assert!(
        matches!(error, JournalError::TooLarge { limit, .. } if limit == cap),
        "{error}"
    );
    assert!(
        error.to_string().contains("larger than the limit"),
        "{error}"
    );
    let journal = Journal::open(&path, cap + 1).unwrap();
    assert_eq!(journal.seq, 3);
    let error = Journal::open(dir.path(), 1 << 20).unwrap_err();
    assert!(matches!(error, JournalError::NotRegular { .. }), "{error}");
    // The refused file is left as it was.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn garbage_lines_are_named() {
    let (line, reason) = broken_line("{oops\n");
    assert_eq!(line, 1);
    assert!(reason.contains("not JSON"), "{reason}");
    let (line, reason) = broken_line("[1]\n");
    assert_eq!(line, 1);
    assert!(reason.contains("not a JSON object"), "{reason}");
    let (line, reason) = broken_line("{\"seq\":1}\n");
    assert_eq!(line, 1);
    assert!(reason.contains("hash"), "{reason}");
    assert_eq!(verify("").broken, None);
}

#[test]
fn a_broken_journal_is_not_appended_to() {
    let (_dir, path, text) = journal(2);
    std::fs::write(&path, text.replacen("\"x\":1", "\"x\":9", 1)).unwrap();
    let error = Journal::open(&path, 1 << 20).unwrap_err().to_string();
    assert!(error.contains("line 2"), "{error}");
    assert!(error.contains("refusing"), "{error}");
}

#[test]
fn reserved_members_are_set_by_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut journal = Journal::open(&path, 1 << 20).unwrap();
    let record = journal
        .append(
            "s",
            Kind::Approval,
            fields(json!({"seq": 99, "hash": "x", "prev": "y", "kind": "z"})),
        )
        .unwrap();
    assert_eq!(record["seq"], 1);
    assert_eq!(record["kind"], "approval");
    assert_eq!(record["prev"], GENESIS);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(verify(&text).broken, None);
    assert_eq!(Kind::parse("call.outcome"), Some(Kind::CallOutcome));
    assert_eq!(Kind::parse("nope"), None);
}

#[test]
fn the_canonical_form_is_rfc_8785_for_numbers_in_ecmascript_form_and_exact_otherwise() {
    let ecmascript = mcp_recovery_model::json::from_str(
        r#"{"b":[1,0.5,1e+21,1e-7,-3,null,true],"a":"\u0001\u001f\"\\/\u007f\u2028é","€":{"z":{},"y":[]},"\ud83d\ude00":2,"ｱ":3}"#,
    )
    .unwrap();
    let mut ours = Vec::new();
    crate::canonical::write(&ecmascript, &mut ours);
    assert_eq!(ours, serde_json_canonicalizer::to_vec(&ecmascript).unwrap());
    let exact =
        mcp_recovery_model::json::from_str(r#"{"n":[1E2,1.50,-0,1e400,123456789012345678901234]}"#)
            .unwrap();
    let mut ours = Vec::new();
    crate::canonical::write(&exact, &mut ours);
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        r#"{"n":[1E2,1.50,-0,1e400,123456789012345678901234]}"#
    );
}

/// With a key, each record is followed by a checkpoint signing it; the journal verifies with
/// the public key, fails with another, and fails as unsigned once its last checkpoint is cut.
#[test]
fn a_keyed_writer_signs_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    crate::keys::generate(&dir.path().join("k")).unwrap();
    crate::keys::generate(&dir.path().join("other")).unwrap();
    let secret = crate::keys::SecretKey::read(&dir.path().join("k")).unwrap();
    let public = secret.public();
    let other = crate::keys::PublicKey::read(&dir.path().join("other.pub")).unwrap();
    let mut journal = Journal::open(&path, 1 << 20).unwrap();
    journal.set_key(secret);
    let shipped = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = shipped.clone();
    journal.set_checkpoint_sink(Box::new(move |line| {
        into.lock().unwrap().push(line.to_owned())
    }));
    for call in 1..=3 {
        let fields = serde_json::json!({"call": call});
        let record = journal
            .append("s", Kind::CallIntent, fields.as_object().unwrap().clone())
            .unwrap();
        assert_eq!(record["seq"], 2 * call - 1);
    }
    drop(journal);
    let text = std::fs::read_to_string(&path).unwrap();
    let check = |text: &str, key: &crate::keys::PublicKey| {
        let mut verifier = Verifier::new().with_keys(vec![key.clone()]);
        for line in text.split_inclusive('\n') {
            verifier.push(line.as_bytes());
        }
        verifier.finish()
    };
    let report = check(&text, &public);
    assert_eq!((report.records, report.broken), (6, None));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(*shipped.lock().unwrap(), [lines[1], lines[3], lines[5]]);
    let wrong = check(&text, &other).broken.unwrap();
    assert_eq!(wrong.line, 2, "{wrong}");
    let cut = text[..text.len() - lines[5].len() - 1].to_owned();
    let unsigned = check(&cut, &public).broken.unwrap();
    assert!(
        unsigned.reason.contains("unsigned") && unsigned.line == 5,
        "{unsigned}"
    );
}

#[test]
fn canonical_form_sorts_by_utf16_and_keeps_number_text() {
    let value: Value =
        serde_json::from_str(r#"{"b":1.50,"a":{"\ud83d\ude00":1,"\uffff":2},"c":"\u001f/"}"#)
            .unwrap();
    assert_eq!(
        String::from_utf8(crate::canonical(&value)).unwrap(),
        "{\"a\":{\"\u{1f600}\":1,\"\u{ffff}\":2},\"b\":1.50,\"c\":\"\\u001f/\"}"
    );
}

/// A journal cut inside its last line (a crash inside a write): the next writer moves the line
/// to `JOURNAL.torn-…`, cuts the journal back to its whole lines and appends after them; a
/// reader before that names the line. An incomplete line followed by more lines stays a fault.
#[test]
fn an_incomplete_last_line_is_set_aside_by_the_next_writer() {
    let (dir, path, text) = journal(3);
    let cut = &text[..text.len() - 10];
    let whole = text[..text.len() - 1].rfind('\n').unwrap() + 1;
    std::fs::write(&path, cut).unwrap();
    let report = verify(cut);
    assert_eq!(report.records, 2);
    assert_eq!(
        report.torn,
        Some(Torn {
            line: 3,
            offset: whole as u64,
            bytes: (cut.len() - whole) as u64,
            unsigned: None
        })
    );
    assert!(report.broken.unwrap().reason.contains("incomplete"));

    let mut reopened = Journal::open(&path, 1 << 20).unwrap();
    let aside = reopened.set_aside().unwrap().clone();
    assert_eq!((aside.line, aside.bytes), (3, (cut.len() - whole) as u64));
    assert_eq!(aside.path.parent(), Some(dir.path()));
    assert_eq!(
        std::fs::read(&aside.path).unwrap(),
        &cut.as_bytes()[whole..]
    );
    reopened.append("s", Kind::SessionEnd, Map::new()).unwrap();
    drop(reopened);
    let text = std::fs::read_to_string(&path).unwrap();
    let report = verify(&text);
    assert_eq!((report.broken, report.records), (None, 3));
    assert!(Journal::open(&path, 1 << 20).unwrap().set_aside().is_none());

    let middle = format!("{cut}\n{}", &text[whole..]);
    let report = verify(&middle);
    assert_eq!(report.torn, None);
    assert_eq!(report.broken.unwrap().line, 3);
}

/// A writer whose incomplete bytes could not be cut back stops: the wait for a record written
/// before fails, and nothing more is written.
#[test]
fn a_stopped_writer_writes_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut journal = Journal::open(&path, 1 << 20).unwrap();
    let (_, pending) = journal
        .append_pending("s", Kind::SessionStart, Map::new())
        .unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    journal.group.stop(&io::Error::other("cannot cut back"));
    assert!(
        pending
            .wait()
            .unwrap_err()
            .to_string()
            .contains("cannot cut back")
    );
    let refused = journal.append("s", Kind::SessionEnd, Map::new());
    assert!(refused.unwrap_err().to_string().contains("cannot cut back"));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
}

/// A record the file-size limit stops half-way through its write (as a full disk does) is cut
/// back to the last whole record, and the writer goes on: the journal verifies, and a record
/// that fits is appended after it. The writing runs in a child process of this test binary,
/// under the limit, with SIGXFSZ ignored so the write fails instead of killing it.
#[cfg(unix)]
#[test]
fn a_failed_write_is_cut_back_to_the_last_whole_record() {
    const CHILD: &str = "MCP_RECOVERY_JOURNAL_CUT_BACK";
    let padded = || fields(json!({"name": "t", "arguments": {"pad": "x".repeat(7000)}}));
    if let Some(path) = std::env::var_os(CHILD) {
        let path = PathBuf::from(path);
        let mut journal = Journal::open(&path, 1 << 20).unwrap();
        let mut written = 0;
        let error = loop {
            match journal.append("s", Kind::CallIntent, padded()) {
                Ok(_) => written += 1,
                Err(error) => break error,
            }
        };
        assert!(matches!(error, JournalError::Io { .. }), "{error}");
        let text = std::fs::read_to_string(&path).unwrap();
        let report = verify(&text);
        assert_eq!((report.broken, report.records), (None, written));
        journal.append("s", Kind::SessionEnd, Map::new()).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 32; exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::a_failed_write_is_cut_back_to_the_last_whole_record",
        ])
        .env(CHILD, &path)
        // The limit holds for every file the child writes: its output goes to pipes, which it
        // does not bound, and never to a file the test's own output may be going to.
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        child.status.success(),
        "{}{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let report = verify(&text);
    assert_eq!(report.broken, None);
    assert!(report.records >= 3, "{}", report.records);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "session.end");
}
