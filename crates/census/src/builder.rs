//! Accumulating files into a census, and computing its metrics once every file is in.

use std::path::Path;

use mcp_recovery_adoption::profile::Profile;
use mcp_recovery_model::Hint;
use mcp_recovery_validator::{LintOptions, Linter, Severity};

use crate::examine::{
    self, FileCensus, LintCounts, NotToolsReason, ServerSummary, Tally, read_and_examine,
};
use crate::metrics::{
    Census, Destructive, FORMAT_VERSION, FileCounts, FileSeen, HintCounts, HintUsage, LintSummary,
    NotToolsFile, ProfileShare, RecoveryUsage, ReversibilityCounts, RuleFindings, ServerSpread,
    Share, SignatureShare, Signatures,
};
use crate::options::{CensusError, CensusOptions};
use crate::signature::{HintState, Signature};

/// Accumulates files into a census; [`census_paths`] drives it over directories.
#[derive(Debug)]
pub struct CensusBuilder {
    options: CensusOptions,
    pub(crate) linter: Option<Linter>,
    tally: Tally,
    files: FileCounts,
    servers: Vec<ServerSummary>,
    not_tools: Vec<NotToolsFile>,
    lint_files: u64,
    lint_files_with_errors: u64,
    lint: LintCounts,
    /// Every file with its place in the input.
    seen: Vec<(usize, FileSeen)>,
}

impl CensusBuilder {
    /// An empty census; builds the linter once when linting is on.
    pub fn new(options: &CensusOptions) -> Result<Self, CensusError> {
        let linter = if options.lint {
            Some(Linter::new(LintOptions::default())?)
        } else {
            None
        };
        Ok(Self {
            options: options.clone(),
            linter,
            tally: Tally::default(),
            files: FileCounts {
                total: 0,
                tools_lists: 0,
                not_tools_lists: 0,
                bytes: 0,
            },
            servers: Vec::new(),
            not_tools: Vec::new(),
            lint_files: 0,
            lint_files_with_errors: 0,
            lint: LintCounts::new(),
            seen: Vec::new(),
        })
    }

    /// Adds one file's bytes (one server).
    pub fn add_bytes(&mut self, path: impl Into<String>, bytes: &[u8]) {
        let file = examine::examine_bytes(path.into(), bytes, self.linter.as_ref());
        self.add_file(file);
    }

    /// [`Self::add_bytes`], returning what became of the file (its tools and findings).
    pub fn add_bytes_seen(&mut self, path: impl Into<String>, bytes: &[u8]) -> FileSeen {
        let file = examine::examine_bytes(path.into(), bytes, self.linter.as_ref());
        let seen = seen(&file);
        self.add_file(file);
        seen
    }

    pub(crate) fn add_file(&mut self, file: FileCensus) {
        self.add_file_at(self.seen.len(), file);
    }

    /// [`Self::add_file`] for the file at `index` of the input (files arrive out of order).
    pub(crate) fn add_file_at(&mut self, index: usize, file: FileCensus) {
        self.seen.push((index, seen(&file)));
        self.files.total += 1;
        self.files.bytes += file.bytes;
        match file.outcome {
            Ok((tally, summary)) => {
                self.files.tools_lists += 1;
                self.tally.add(&tally);
                self.servers.push(summary);
            }
            Err(reason) => {
                self.files.not_tools_lists += 1;
                self.not_tools.push(NotToolsFile {
                    path: file.path,
                    reason,
                });
            }
        }
        if let Some(counts) = file.lint {
            self.lint_files += 1;
            if counts
                .keys()
                .any(|(_, severity)| *severity == Severity::Error)
            {
                self.lint_files_with_errors += 1;
            }
            for ((code, severity), (name, n)) in counts {
                self.lint.entry((code, severity)).or_insert((name, 0)).1 += n;
            }
        }
    }

    /// Reads and adds one file from disk; unreadable or oversized files are listed, not fatal.
    pub fn add_path(&mut self, path: &Path) {
        let file = read_and_examine(path, self.linter.as_ref(), self.options.read);
        self.add_file(file);
    }

    /// Computes the metrics.
    pub fn finish(mut self) -> Census {
        let t = &self.tally;
        let tools = t.tools;
        let servers = self.servers.len() as u64;
        let sig_count = |pred: &dyn Fn(Signature) -> bool| -> u64 {
            (0..Signature::COUNT)
                .filter_map(Signature::from_index)
                .filter(|&s| pred(s))
                .map(|s| t.signatures[s.index()])
                .sum()
        };

        let per_hint = Hint::ALL
            .iter()
            .map(|&hint| HintCounts {
                hint: hint.key(),
                true_: sig_count(&|s| s.state(hint) == HintState::True),
                false_: sig_count(&|s| s.state(hint) == HintState::False),
                omitted: sig_count(&|s| s.state(hint) == HintState::Omitted),
            })
            .collect();

        let mut all: Vec<SignatureShare> = (0..Signature::COUNT)
            .filter_map(Signature::from_index)
            .filter(|s| t.signatures[s.index()] > 0)
            .map(|s| SignatureShare {
                signature: s,
                tools: Share::of(t.signatures[s.index()], tools, "tools"),
            })
            .collect();
        all.sort_by(|a, b| {
            b.tools
                .count
                .cmp(&a.tools.count)
                .then_with(|| a.signature.label().cmp(&b.signature.label()))
        });
        let top: Vec<SignatureShare> = all
            .iter()
            .take(self.options.top_signatures)
            .cloned()
            .collect();
        let top_cover = Share::of(top.iter().map(|s| s.tools.count).sum(), tools, "tools");

        let mut tool_counts: Vec<u64> = self
            .servers
            .iter()
            .map(|s| s.tools)
            .filter(|&n| n > 0)
            .collect();
        let dominant_share = |s: &&ServerSummary| s.dominant as f64 / s.tools as f64;
        let emitting: Vec<&ServerSummary> = self
            .servers
            .iter()
            .filter(|s| s.tools >= 1 && s.emits_hint)
            .collect();
        let mut dominant_emitting: Vec<f64> = emitting.iter().map(dominant_share).collect();
        let spread: Vec<&ServerSummary> = self
            .servers
            .iter()
            .filter(|s| s.tools >= 2 && s.emits_hint)
            .collect();
        let multi = spread.len() as u64;
        let more_than_one = spread.iter().filter(|s| s.distinct_signatures > 1).count() as u64;
        let mut dominant: Vec<f64> = spread.iter().map(dominant_share).collect();

        let applicable = |s: Signature| s.state(Hint::ReadOnly) != HintState::True;
        let destructive = Destructive {
            set: Share::of(
                sig_count(&|s| s.state(Hint::Destructive).is_set()),
                tools,
                "tools",
            ),
            set_where_applicable: Share::of(
                sig_count(&|s| applicable(s) && s.state(Hint::Destructive).is_set()),
                tools,
                "tools",
            ),
            true_where_applicable: Share::of(
                sig_count(&|s| applicable(s) && s.state(Hint::Destructive) == HintState::True),
                tools,
                "tools",
            ),
            set_on_read_only: Share::of(t.read_only_destructive_set, tools, "tools"),
        };

        let mutating = t.mutating;
        let recovery = RecoveryUsage {
            sep3172_only: Share::of(t.recovery_sep3172, tools, "tools"),
            compensate_only: Share::of(t.recovery_compensate, tools, "tools"),
            both: Share::of(t.recovery_both, tools, "tools"),
            any: Share::of(
                t.recovery_sep3172 + t.recovery_compensate + t.recovery_both,
                tools,
                "tools",
            ),
            unknown_strategy: t.recovery_unknown_strategy,
            mutating: Share::of(mutating, tools, "tools"),
            mutating_declared: Share::of(t.mutating_declared, mutating, "mutating tools"),
            mutating_by_class: ReversibilityCounts {
                compensable: Share::of(t.mutating_compensable, mutating, "mutating tools"),
                irreversible: Share::of(t.mutating_irreversible, mutating, "mutating tools"),
                readonly: Share::of(t.mutating_readonly, mutating, "mutating tools"),
                conflicting: Share::of(t.mutating_conflicting, mutating, "mutating tools"),
            },
        };

        let lint = self.linter.is_some().then(|| {
            let mut summary = LintSummary {
                files: self.lint_files,
                files_with_errors: self.lint_files_with_errors,
                errors: 0,
                warnings: 0,
                infos: 0,
                by_rule: Vec::new(),
            };
            for (&(code, severity), &(name, count)) in &self.lint {
                match severity {
                    Severity::Error => summary.errors += count,
                    Severity::Warning => summary.warnings += count,
                    Severity::Info => summary.infos += count,
                }
                summary.by_rule.push(RuleFindings {
                    code,
                    name,
                    severity: severity.as_str(),
                    count,
                });
            }
            summary
        });

        let listing: Vec<&ServerSummary> = self.servers.iter().filter(|s| s.tools > 0).collect();
        let profiles = Profile::ALL
            .iter()
            .enumerate()
            .map(|(i, &p)| ProfileShare {
                profile: p,
                anomalies: p.anomalies(),
                servers: Share::of(
                    listing.iter().filter(|s| s.profiles[i].0).count() as u64,
                    listing.len() as u64,
                    "servers listing a tool",
                ),
                tools: Share::of(
                    self.servers.iter().map(|s| s.profiles[i].1).sum(),
                    tools,
                    "tools",
                ),
            })
            .collect();
        self.not_tools.sort_by(|a, b| a.path.cmp(&b.path));
        Census {
            profiles,
            version: FORMAT_VERSION,
            files: self.files.clone(),
            servers,
            tools,
            non_object_entries: t.non_object_entries,
            empty_servers: self.servers.iter().filter(|s| s.tools == 0).count() as u64,
            median_tools_per_server: median_u64(&mut tool_counts),
            hints: HintUsage {
                any: Share::of(t.wire_any, tools, "tools"),
                all_four: Share::of(t.wire_all, tools, "tools"),
                any_boolean: Share::of(sig_count(&|s| s.any_set()), tools, "tools"),
                all_four_boolean: Share::of(sig_count(&|s| s.all_set()), tools, "tools"),
                non_boolean_values: t.non_boolean_hints,
                per_hint,
            },
            signatures: Signatures {
                possible: Signature::COUNT,
                occurring: all.len(),
                top,
                top_cover,
                no_hint: Share::of(t.signatures[Signature::NONE.index()], tools, "tools"),
                all,
            },
            servers_spread: ServerSpread {
                multi_tool_emitting: multi,
                more_than_one_signature: Share::of(
                    more_than_one,
                    multi,
                    "multi-tool emitting servers",
                ),
                emitting: emitting.len() as u64,
                median_dominant_share: median_f64(&mut dominant_emitting),
                median_dominant_share_multi_tool: median_f64(&mut dominant),
            },
            destructive,
            recovery,
            lint,
            not_tools_lists: self.not_tools,
            sources: {
                self.seen.sort_by_key(|(index, _)| *index);
                self.seen.into_iter().map(|(_, seen)| seen).collect()
            },
        }
    }
}

/// What [`FileSeen`] says of one file examined.
fn seen(file: &FileCensus) -> FileSeen {
    let not_read = match &file.outcome {
        Err(reason @ (NotToolsReason::Unreadable { .. } | NotToolsReason::TooLarge { .. })) => {
            Some(reason.describe())
        }
        _ => None,
    };
    FileSeen {
        path: file.path.clone(),
        tools: file.outcome.as_ref().map_or(0, |(tally, _)| tally.tools),
        findings: match not_read {
            Some(_) => None,
            None => file
                .lint
                .as_ref()
                .map(|counts| counts.values().map(|(_, n)| n).sum()),
        },
        not_read,
    }
}

/// The median: the middle value, or the mean of the two middle values for an even count.
pub fn median_u64(values: &mut [u64]) -> Option<f64> {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2] as f64),
        _ => Some((values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0),
    }
}

/// The median of finite floats (same rule as [`median_u64`]).
pub fn median_f64(values: &mut [f64]) -> Option<f64> {
    values.sort_unstable_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}
