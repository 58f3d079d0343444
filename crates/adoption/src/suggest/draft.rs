//! Drafting: every tool that declares nothing and does not only read, paired with its inverse
//! when one is listed, binds and undoes the call exactly, else given what a tool alone can be
//! given.

use mcp_recovery_model::{Hint, Tool};

use super::before::before_image;
use super::bind::{Bound, bind};
use super::candidate::{ByWords, Candidate};
use super::lexicon::{relation, words};
use super::prior::{Prior, said};
use super::recorded::{Recorded, confirm, learn, pairings};
use super::types::{Confidence, Proposal, Skipped, Suggestion, Suggestions};
use super::unpaired::{irreversible, self_inverse};

/// Drafts suggestions for every tool that declares no recovery and is not read-only, checked
/// against and taught by recorded calls (none: the names and schemas alone): a drafted binding a journal
/// contradicts is left out, one it confirms says so in its reason, and a pair the schemas
/// could not bind is drafted from what the journal shows, when it shows one binding for every
/// parameter and never another. A pair whose inverse would not undo the call exactly is left
/// out: the forward tool says it may replace what is there or leave what is already there as it
/// is, or the inverse undoes more than the call did; a tool that says it replaces what is there
/// may still be undone from a before-image.
pub fn suggest_with(tools: &[Tool], calls: &[Recorded]) -> Suggestions {
    let candidates: Vec<Candidate<'_>> = tools
        .iter()
        .map(|tool| Candidate {
            tool,
            words: words(&tool.name),
        })
        .collect();
    let by_words = ByWords::index(&candidates);
    let mut out = Suggestions::default();
    for (index, forward) in candidates.iter().enumerate() {
        if forward.read_only() || forward.declared() {
            continue;
        }
        let mut best: Option<Suggestion> = None;
        // How `best` ranks (its confidence, and whether its name is spelled as the forward
        // tool's), and a rival of the same rank whose name differs from its compensator's only in
        // separators: then nothing says which of the two is meant.
        let mut rank = None;
        let mut rival: Option<String> = None;
        let mut skipped = Vec::new();
        let said = said(forward);
        let inexact = |compensator: &str, reason: String| Skipped {
            tool: forward.tool.name.clone(),
            compensator: compensator.to_owned(),
            reason,
        };
        for inverse in by_words.alike(index, forward) {
            if inverse.tool.hint(Hint::ReadOnly) == Some(true) {
                continue;
            }
            let Some(relation) = relation(&forward.words, &inverse.words) else {
                continue;
            };
            if let Some(said) = &said {
                let reason = said.reason(&forward.tool.name, &inverse.tool.name);
                skipped.push(inexact(&inverse.tool.name, reason));
                continue;
            }
            if relation.broad {
                skipped.push(inexact(&inverse.tool.name, relation.why));
                continue;
            }
            let (confidence, why) = (relation.confidence, relation.why);
            let noun = forward.noun(relation.at);
            let pairs = pairings(calls, &forward.tool.name, &inverse.tool.name);
            let drafted = match bind(forward.tool, inverse.tool, &noun, relation.copy) {
                Ok(bound) => confirm(bound, &pairs, confidence, why),
                // What a journal shows after a copy may be a delete of the original: a copy is
                // drafted from its schemas only.
                Err(reason) if relation.copy => Err(reason),
                Err(reason) => match learn(&pairs, inverse.tool) {
                    Some((mapping, reader, learned)) => Ok((
                        Bound {
                            mapping,
                            reader,
                            equivalences: Vec::new(),
                            narrower: Vec::new(),
                            described: Vec::new(),
                        },
                        Confidence::Medium,
                        format!("{why}; {learned}"),
                    )),
                    None => Err(reason),
                },
            };
            match drafted {
                Ok((bound, confidence, reason)) => {
                    let suggestion = Suggestion {
                        tool: forward.tool.name.clone(),
                        proposal: Proposal::Compensable {
                            compensator: inverse.tool.name.clone(),
                            mapping: bound.mapping,
                            reader: bound.reader,
                        },
                        confidence,
                        reason,
                    };
                    let this = (
                        confidence,
                        spelled_alike(&forward.tool.name, &inverse.tool.name),
                    );
                    if rank.is_none_or(|r| r < this) {
                        (best, rank, rival) = (Some(suggestion), Some(this), None);
                    } else if rank == Some(this)
                        && best
                            .as_ref()
                            .and_then(Suggestion::compensator)
                            .is_some_and(|chosen| words_alike(chosen, &inverse.tool.name))
                    {
                        rival = Some(inverse.tool.name.clone());
                    }
                }
                Err(reason) => skipped.push(Skipped {
                    tool: forward.tool.name.clone(),
                    compensator: inverse.tool.name.clone(),
                    reason,
                }),
            }
        }
        // A move or rename back is no exact undo either when the call may replace what is there.
        let itself = match (self_inverse(forward), &said) {
            (Some(_), Some(said)) => {
                let name = &forward.tool.name;
                skipped.push(inexact(name, said.reason(name, name)));
                None
            }
            (itself, _) => itself,
        };
        let replaces = said.as_ref().is_some_and(|s| s.prior == Prior::Replaced);
        if let Some(rival) = rival
            && let Some(chosen) = best.take()
        {
            let compensator = chosen.compensator().unwrap_or_default().to_owned();
            let reason = format!(
                "'{compensator}' and '{rival}' both fit, as well as each other: nothing says which undoes it"
            );
            skipped.push(inexact(&compensator, reason.clone()));
            skipped.push(inexact(&rival, reason));
        }
        let best = best
            .or(itself)
            .or_else(|| before_image(forward, &by_words, replaces))
            .or_else(|| irreversible(forward, &by_words));
        match best {
            // A pair found for the tool makes the skipped candidates for it moot.
            Some(suggestion) => out.suggestions.push(suggestion),
            None => out.skipped.extend(skipped),
        }
    }
    out
}

/// Whether two names put the same separators (`_`, `-`, `.`, …) between their words: of two
/// inverses that differ only there, the one spelled as the forward tool is meant.
fn spelled_alike(forward: &str, inverse: &str) -> bool {
    separators(forward) == separators(inverse)
}

/// Whether two names differ only in their separators.
fn words_alike(a: &str, b: &str) -> bool {
    let words = |name: &str| -> String { name.chars().filter(|c| c.is_alphanumeric()).collect() };
    words(a) == words(b)
}

fn separators(name: &str) -> String {
    name.chars().filter(|c| !c.is_alphanumeric()).collect()
}
