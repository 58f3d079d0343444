//! The verb lexicon: verbs and the verbs that undo them, verbs that cannot be undone, verbs
//! that only read; tool names split into words, and how two names relate.

use super::types::Confidence;

/// A verb and the verb that undoes it. `symmetric` pairs toggle a state, so each undoes the
/// other; the others undo only forward (a delete is not undone by an empty create). A `broad`
/// inverse undoes more than the call did (`git_reset` unstages everything `git_add` staged and
/// what was staged before), so it is no exact undo: its pairs are found, to be left out with
/// the reason. A `copy` is undone by deleting the copy, never the original it was made from.
pub(crate) struct Pair {
    forward: &'static str,
    inverse: &'static str,
    symmetric: bool,
    broad: bool,
    copy: bool,
}

pub(crate) const fn pair(forward: &'static str, inverse: &'static str, symmetric: bool) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric,
        broad: false,
        copy: false,
    }
}

pub(crate) const fn broad(forward: &'static str, inverse: &'static str) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric: false,
        broad: true,
        copy: false,
    }
}

pub(crate) const fn copy(forward: &'static str, inverse: &'static str) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric: false,
        broad: false,
        copy: true,
    }
}

pub(crate) const PAIRS: &[Pair] = &[
    pair("create", "delete", false),
    pair("create", "remove", false),
    pair("create", "drop", false),
    pair("create", "close", false),
    pair("create", "destroy", false),
    pair("new", "close", false),
    pair("add", "remove", false),
    pair("add", "delete", false),
    pair("insert", "delete", false),
    pair("reserve", "release", false),
    pair("hold", "release", false),
    pair("charge", "refund", false),
    pair("book", "cancel", false),
    pair("schedule", "cancel", false),
    pair("place", "cancel", false),
    pair("deploy", "undeploy", false),
    pair("provision", "deprovision", false),
    pair("allocate", "deallocate", false),
    pair("allocate", "release", false),
    pair("upload", "delete", false),
    pair("install", "uninstall", false),
    pair("register", "unregister", false),
    pair("register", "deregister", false),
    pair("grant", "revoke", false),
    pair("open", "close", false),
    pair("close", "reopen", false),
    pair("set", "unset", false),
    pair("set", "clear", false),
    pair("lock", "unlock", true),
    pair("start", "stop", false),
    pair("start", "end", false),
    pair("start", "kill", false),
    pair("connect", "disconnect", false),
    broad("add", "reset"),
    pair("enable", "disable", true),
    pair("attach", "detach", true),
    pair("follow", "unfollow", true),
    pair("star", "unstar", true),
    pair("subscribe", "unsubscribe", true),
    pair("archive", "unarchive", true),
    pair("pin", "unpin", true),
    pair("mute", "unmute", true),
    pair("block", "unblock", true),
    pair("assign", "unassign", true),
    pair("link", "unlink", true),
    pair("mount", "unmount", true),
    pair("pause", "resume", true),
    pair("suspend", "resume", true),
    pair("hide", "unhide", true),
    pair("watch", "unwatch", true),
    pair("like", "unlike", true),
    pair("tag", "untag", true),
    pair("label", "unlabel", true),
    pair("publish", "unpublish", true),
    pair("freeze", "unfreeze", true),
    pair("share", "unshare", true),
    pair("favorite", "unfavorite", true),
    pair("bookmark", "unbookmark", true),
    copy("copy", "delete"),
    copy("copy", "remove"),
    copy("duplicate", "delete"),
    copy("duplicate", "remove"),
    copy("clone", "delete"),
    copy("clone", "remove"),
];

/// Verbs whose effect leaves the system (a message read, money paid out) or is destroyed for
/// good: no call can take it back.
pub(crate) const IRREVERSIBLE: &[&str] = &[
    "send",
    "post",
    "publish",
    "email",
    "mail",
    "notify",
    "pay",
    "payout",
    "broadcast",
    "tweet",
    "reply",
    "sms",
    "dispatch",
    "transfer",
    "invite",
    "announce",
    "purge",
    "wipe",
    "erase",
    "destroy",
];

/// The verbs of [`IRREVERSIBLE`] that destroy for good, rather than send out.
pub(crate) const DESTROYS: &[&str] = &["purge", "wipe", "erase", "destroy"];

/// Verbs of a tool that would read as taking back a call of the same thing, beside `un` and
/// the call's verb (`delete_message` beside `send_message`, `restore_file` beside
/// `purge_file`): they act on what is left, not on what the call sent out or destroyed.
pub(crate) const TAKE_BACK: &[&str] = &[
    "delete", "remove", "recall", "retract", "cancel", "withdraw", "undo", "revoke", "restore",
    "recover", "undelete",
];

/// Optional compensator parameters that narrow what it acts on: left unbound, the compensating
/// call could act on more than the original call touched (`delete_many` without its filter).
pub(crate) const SELECTORS: &[&str] = &[
    "filter", "query", "where", "selector", "match", "ids", "id", "key", "name", "names",
];

/// Verbs that only read: tools named with them get nothing.
pub(crate) const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "read",
    "search",
    "fetch",
    "find",
    "query",
    "describe",
    "show",
    "view",
    "lookup",
    "check",
    "count",
    "inspect",
    "browse",
    "retrieve",
    "download",
    "explain",
    "preview",
    "validate",
    "analyze",
    "summarize",
    "export",
    "scan",
    "estimate",
    "quote",
    "diff",
    "status",
];

/// Words a tool name is made of: split at `_`, `-`, `.`, `/`, spaces and camel-case humps,
/// lowercased.
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        let hump = c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_numeric());
        if hump && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
        previous = Some(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The first word that is a known verb, with its position.
pub(crate) fn verb_of(words: &[String]) -> Option<(usize, &str)> {
    words.iter().enumerate().find_map(|(i, w)| {
        let known = READ_VERBS.contains(&w.as_str())
            || IRREVERSIBLE.contains(&w.as_str())
            || PAIRS
                .iter()
                .any(|p| p.forward == w.as_str() || p.inverse == w.as_str())
            || w.starts_with("un");
        known.then_some((i, w.as_str()))
    })
}

/// How two tool names relate when one undoes the other.
pub(crate) struct Relation {
    pub(crate) confidence: Confidence,
    /// Why, in words.
    pub(crate) why: String,
    /// Where the verbs stand in the names.
    pub(crate) at: usize,
    /// The forward verb copies: the inverse must act on the copy.
    pub(crate) copy: bool,
    /// The inverse undoes more than the call did: no exact undo.
    pub(crate) broad: bool,
}

/// How `forward` and `inverse` names relate, when one undoes the other.
/// The words that may stand where `word` stands in the name of a tool [`relation`] pairs with
/// it: its inverses in the lexicon, and the word with `un` added or taken away.
pub(crate) fn partners(word: &str) -> Vec<String> {
    let mut found: Vec<String> = PAIRS
        .iter()
        .filter_map(|p| {
            if p.forward == word {
                Some(p.inverse)
            } else if p.symmetric && p.inverse == word {
                Some(p.forward)
            } else {
                None
            }
        })
        .map(str::to_owned)
        .collect();
    found.push(format!("un{word}"));
    found.extend(word.strip_prefix("un").map(str::to_owned));
    found
}

pub(crate) fn relation(forward: &[String], inverse: &[String]) -> Option<Relation> {
    if forward.len() != inverse.len() {
        return None;
    }
    let differing: Vec<usize> = (0..forward.len())
        .filter(|&i| forward[i] != inverse[i])
        .collect();
    let [at] = differing.as_slice() else {
        return None;
    };
    let (f, i) = (forward[*at].as_str(), inverse[*at].as_str());
    let listed = PAIRS.iter().find(|p| {
        (p.forward == f && p.inverse == i) || (p.symmetric && p.forward == i && p.inverse == f)
    });
    let (confidence, why) = match listed {
        Some(p) if p.broad => (
            Confidence::Medium,
            format!(
                "'{i}' undoes '{f}' (verb lexicon), and more than the call did: it would also undo what held before the call, so it does not undo the call exactly"
            ),
        ),
        Some(p) if p.copy => (
            Confidence::High,
            format!("'{i}' of the copy undoes '{f}' (verb lexicon)"),
        ),
        Some(_) => (
            Confidence::High,
            format!("'{i}' undoes '{f}' (verb lexicon)"),
        ),
        None if i.strip_prefix("un") == Some(f) || f.strip_prefix("un") == Some(i) => (
            Confidence::Medium,
            format!("'{i}' and '{f}' differ by 'un'"),
        ),
        None => return None,
    };
    Some(Relation {
        confidence,
        why,
        at: *at,
        copy: listed.is_some_and(|p| p.copy),
        broad: listed.is_some_and(|p| p.broad),
    })
}
