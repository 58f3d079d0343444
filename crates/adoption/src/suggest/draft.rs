//! Drafting: every tool that declares nothing and does not only read, paired with its inverse
//! when one is listed and binds, else given what a tool alone can be given.

use mcp_recovery_model::{Hint, Tool};

use super::before::before_image;
use super::bind::{Bound, bind};
use super::candidate::Candidate;
use super::lexicon::{relation, words};
use super::recorded::{Recorded, confirm, learn, pairings};
use super::types::{Confidence, Proposal, Skipped, Suggestion, Suggestions};
use super::unpaired::{irreversible, self_inverse};

/// Drafts suggestions for every tool that declares no recovery and is not read-only, checked
/// against and taught by recorded calls (none: the names and schemas alone): a drafted binding a journal
/// contradicts is left out, one it confirms says so in its reason, and a pair the schemas
/// could not bind is drafted from what the journal shows, when it shows one binding for every
/// parameter and never another.
pub fn suggest_with(tools: &[Tool], calls: &[Recorded]) -> Suggestions {
    let candidates: Vec<Candidate<'_>> = tools
        .iter()
        .map(|tool| Candidate {
            tool,
            words: words(&tool.name),
        })
        .collect();
    let mut out = Suggestions::default();
    for forward in &candidates {
        if forward.read_only() || forward.declared() {
            continue;
        }
        let mut best: Option<Suggestion> = None;
        let mut skipped = Vec::new();
        for inverse in &candidates {
            if std::ptr::eq(forward, inverse) || inverse.tool.hint(Hint::ReadOnly) == Some(true) {
                continue;
            }
            let Some(relation) = relation(&forward.words, &inverse.words) else {
                continue;
            };
            let (confidence, why) = (relation.confidence, relation.why);
            let noun = forward.noun(relation.at);
            let pairs = pairings(calls, &forward.tool.name, &inverse.tool.name);
            let drafted = match bind(forward.tool, inverse.tool, &noun, relation.copy) {
                Ok(bound) => confirm(bound, &pairs, confidence, why),
                // What a journal shows after a copy may be a delete of the original: a copy is
                // drafted from its schemas only.
                Err(reason) if relation.copy => Err(reason),
                Err(reason) => match learn(&pairs, inverse.tool) {
                    Some((mapping, learned)) => Ok((
                        Bound {
                            mapping,
                            reader: None,
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
                    if best.as_ref().is_none_or(|b| b.confidence < confidence) {
                        best = Some(suggestion);
                    }
                }
                Err(reason) => skipped.push(Skipped {
                    tool: forward.tool.name.clone(),
                    compensator: inverse.tool.name.clone(),
                    reason,
                }),
            }
        }
        let best = best
            .or_else(|| self_inverse(forward))
            .or_else(|| before_image(forward, &candidates))
            .or_else(|| irreversible(forward));
        match best {
            // A pair found for the tool makes the skipped candidates for it moot.
            Some(suggestion) => out.suggestions.push(suggestion),
            None => out.skipped.extend(skipped),
        }
    }
    out
}
