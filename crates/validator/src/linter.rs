//! The configured linter: which rules run, the stages over one document, and the diagnostics
//! it reports with their positions.

use std::collections::{BTreeMap, HashMap, HashSet};

use mcp_recovery_model::ToolList;
use serde_json::Value;

use mcp_recovery_base::text::escape_controls;

use crate::codes::Rule;
use crate::context::{Context, List, ToolRef, element_pointer};
use crate::diagnostic::{Diagnostic, Report, Severity, Span};
use crate::finding::{Finding, Focus};
use crate::level::{DefaultLevel, Preset};
use crate::load;
use crate::rules;
use crate::schema_stage::SchemaStage;
use crate::span::{self, LineIndex, Place};

/// Documents from this size (in bytes) on are linted a part of their tools at a time, which
/// bounds the memory a lint holds to a small multiple of the text; below it the whole document
/// is read at once, which is faster.
pub const READ_IN_PARTS_FROM: usize = 4 << 20;

/// Tools read at once when a document is read in parts.
const PART: usize = 512;

/// Which rules run and at what severity. Entries are codes or names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintOptions {
    /// The rule set that runs when `select` is empty.
    pub preset: Preset,
    /// When non-empty, only these rules run (advisory rules run only when listed here).
    pub select: Vec<String>,
    /// Rules that never run.
    pub ignore: Vec<String>,
    /// Severity overrides by code or name.
    pub severity: BTreeMap<String, Severity>,
}

/// A code or name in [`LintOptions`] that names no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule '{0}' (run `mcp-recovery rules` for the catalog)")]
pub struct UnknownRule(pub String);

/// A configured linter; build it once and lint many documents.
#[derive(Debug)]
pub struct Linter {
    options: LintOptions,
    /// Whether each rule runs, by [`Rule::index`].
    enabled: Vec<bool>,
    /// Configured severities, by [`Rule::index`].
    overrides: Vec<Option<Severity>>,
    schema: SchemaStage,
}

fn rules_named(entries: &[String]) -> Result<HashSet<Rule>, UnknownRule> {
    entries
        .iter()
        .map(|entry| Rule::find(entry).ok_or_else(|| UnknownRule(entry.clone())))
        .collect()
}

impl Linter {
    /// Checks the options and compiles the schema stage.
    pub fn new(options: LintOptions) -> Result<Self, UnknownRule> {
        let select = rules_named(&options.select)?;
        let ignore = rules_named(&options.ignore)?;
        let mut overrides = vec![None; Rule::ALL.len()];
        for (entry, severity) in &options.severity {
            let rule = Rule::find(entry).ok_or_else(|| UnknownRule(entry.clone()))?;
            overrides[rule.index()] = Some(*severity);
        }
        let enabled = Rule::ALL
            .iter()
            .map(|rule| {
                let selected = if select.is_empty() {
                    rule.def().presets.contains(&options.preset)
                } else {
                    select.contains(rule)
                };
                selected && !ignore.contains(rule)
            })
            .collect();
        Ok(Self {
            options,
            enabled,
            overrides,
            schema: SchemaStage::new(),
        })
    }

    /// The options this linter was built with.
    pub fn options(&self) -> &LintOptions {
        &self.options
    }

    /// Lints the bytes of a document (a `tools/list` JSON-RPC response, `{"tools": [...]}` or a
    /// bare array of tools). Diagnostics carry spans into `source`.
    ///
    /// A large document is read a part of its tools at a time (see [`Self::lint_tool_list`]);
    /// the report is the same.
    pub fn lint_source(&self, source: &[u8]) -> Report {
        if source.len() >= READ_IN_PARTS_FROM
            && let Some(report) = self.lint_source_in_parts(source)
        {
            return report;
        }
        self.lint_source_whole(source)
    }

    /// [`Self::lint_source`] reading the tools a part at a time, whatever the document's size;
    /// `None` when the document is one that only the whole read judges (invalid JSON, not a
    /// tools list, a member name written twice).
    pub fn lint_source_in_parts(&self, source: &[u8]) -> Option<Report> {
        let list = ToolList::skim(std::str::from_utf8(source).ok()?)?;
        let (tools, findings) = self.check_list(&list, |_| {})?;
        Some(self.finish(tools, findings, Some(source), true))
    }

    /// Lints a tools list a part of its tools at a time, so that a large document is never
    /// held as one tree: each tool is read when its part is checked (and shown to `visit`), and
    /// the tools a part names that are written elsewhere are read beside it. The diagnostics are
    /// those of [`Self::lint_value_unordered`] on the whole document. `None` when some tool
    /// writes a member name twice (R007 needs the whole document to place it); `visit` may
    /// have seen some tools by then.
    pub fn lint_tool_list(&self, list: &ToolList<'_>, visit: impl FnMut(&Value)) -> Option<Report> {
        let (tools, findings) = self.check_list(list, visit)?;
        Some(self.finish(tools, findings, None, false))
    }

    /// [`Self::lint_source`] on the whole document at once.
    pub(crate) fn lint_source_whole(&self, source: &[u8]) -> Report {
        let (tools, findings) = match load::parse(source) {
            Ok(parsed) => {
                let document = parsed.document;
                let (tools, mut findings) = self.check(&document);
                if parsed.repeats_a_name && self.enabled(Rule::DuplicateKey) {
                    duplicate_keys(source, &document, &mut findings);
                }
                (tools, findings)
            }
            Err(finding) => (0, vec![*finding]),
        };
        self.finish(tools, findings, Some(source), true)
    }

    /// Lints an already-parsed document (from a live server); diagnostics have no spans.
    pub fn lint_value(&self, document: &Value) -> Report {
        let (tools, findings) = self.check(document);
        // The compact text orders diagnostics as the document is written; its positions mean
        // nothing to the caller, so they are not reported.
        let text = if findings.is_empty() {
            None
        } else {
            serde_json::to_vec(document).ok()
        };
        self.finish(tools, findings, text.as_deref(), false)
    }

    /// [`Self::lint_value`] for a caller that only counts: the same diagnostics, without the
    /// text rebuilt to order them, so in the order of code, pointer and message.
    pub fn lint_value_unordered(&self, document: &Value) -> Report {
        let (tools, findings) = self.check(document);
        self.finish(tools, findings, None, false)
    }

    pub(crate) fn enabled(&self, rule: Rule) -> bool {
        self.enabled[rule.index()]
    }

    /// Stages 2 to 4 on a parsed document: the tools count and the raw findings.
    pub(crate) fn check(&self, document: &Value) -> (usize, Vec<Finding>) {
        let array = match load::tools_of(document) {
            Ok(array) => array,
            Err(finding) => return (0, vec![*finding]),
        };
        let mut findings = Vec::new();
        let mut unavailable_said = false;
        let tools: Vec<ToolRef<'_>> = array
            .tools
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                self.read_tool(
                    array.pointer(),
                    i,
                    raw,
                    &mut unavailable_said,
                    &mut findings,
                )
            })
            .collect();
        let list = List::new(array.pointer(), tools.iter().map(|t| t.name).collect());
        self.run_rules(&Context::new(tools, HashMap::new(), &list), &mut findings);
        rules::unusable_input_schema::finish(&list, &mut findings);
        (list.len(), findings)
    }

    /// [`Self::check`] on a list read a part at a time (see [`Self::lint_tool_list`]); `None`
    /// when some tool writes a member name twice, which only the whole document can place.
    fn check_list(
        &self,
        tools: &ToolList<'_>,
        mut visit: impl FnMut(&Value),
    ) -> Option<(usize, Vec<Finding>)> {
        let pointer = tools.shape().tools_pointer();
        let list = List::new(pointer, (0..tools.len()).map(|i| tools.name(i)).collect());
        let mut findings = Vec::new();
        let mut unavailable_said = false;
        for start in (0..tools.len()).step_by(PART) {
            let end = tools.len().min(start + PART);
            let values = (start..end)
                .map(|i| {
                    tools
                        .read(i)
                        .filter(|(_, repeats)| !repeats)
                        .map(|(v, _)| v)
                })
                .collect::<Option<Vec<Value>>>()?;
            values.iter().for_each(&mut visit);
            let part: Vec<ToolRef<'_>> = values
                .iter()
                .zip(start..)
                .map(|(raw, i)| {
                    self.read_tool(pointer, i, raw, &mut unavailable_said, &mut findings)
                })
                .collect();
            // The tools this part names that are written elsewhere in the list.
            let mut outside: Vec<usize> = part
                .iter()
                .flat_map(ToolRef::names_used)
                .filter_map(|name| list.first(&name))
                .filter(|i| !(start..end).contains(i))
                .collect();
            outside.sort_unstable();
            outside.dedup();
            let named = outside
                .into_iter()
                .map(|i| Some((i, tools.read(i)?.0)))
                .collect::<Option<Vec<(usize, Value)>>>()?;
            let others = named
                .iter()
                .map(|(i, raw)| (*i, ToolRef::read(*i, list.tool_pointer(*i), raw).0))
                .collect();
            self.run_rules(&Context::new(part, others, &list), &mut findings);
        }
        rules::unusable_input_schema::finish(&list, &mut findings);
        Some((list.len(), findings))
    }

    /// Stage 2 for one tool: its typed read and the schema stage's findings.
    fn read_tool<'a>(
        &self,
        array: &str,
        index: usize,
        raw: &'a Value,
        unavailable_said: &mut bool,
        findings: &mut Vec<Finding>,
    ) -> ToolRef<'a> {
        let (tool, typed_error) = ToolRef::read(index, element_pointer(array, index), raw);
        if !self.enabled(Rule::SchemaViolation) {
            return tool;
        }
        let mut reported = false;
        let violations = self.schema.check(raw).unwrap_or_else(|reason| {
            // Said once per document, by the first tool that needs the compiled schema.
            if !*unavailable_said {
                *unavailable_said = true;
                findings.push(rules::schema_violation::schema_unavailable(
                    array.to_owned(),
                    reason,
                ));
            }
            Vec::new()
        });
        for violation in violations {
            // A malformed binding is R104's, which points at the faulty character.
            if tool.typed.is_some() && is_binding_path(&violation.path) {
                continue;
            }
            reported = true;
            findings.push(rules::schema_violation::violation(
                tool.at(&violation.path),
                tool.name,
                violation.message,
            ));
        }
        if let (false, Some(error)) = (reported, &typed_error) {
            findings.push(rules::schema_violation::not_a_tool(
                tool.pointer.clone(),
                tool.name,
                error,
            ));
        }
        tool
    }

    /// Stages 3 and 4: every enabled semantic rule over the tools at hand.
    fn run_rules(&self, context: &Context<'_>, findings: &mut Vec<Finding>) {
        for rule in Rule::ALL {
            if let (true, Some(check)) = (self.enabled(*rule), rule.check()) {
                check(context, findings);
            }
        }
    }

    /// Applies configuration and positions, and orders the diagnostics.
    pub(crate) fn finish(
        &self,
        tools: usize,
        findings: Vec<Finding>,
        text: Option<&[u8]>,
        with_spans: bool,
    ) -> Report {
        self.finish_with(tools, findings, text, with_spans, locate_all)
    }

    /// [`Self::finish`] with the places of pointers found by `locate` (JSON text by default).
    pub(crate) fn finish_with(
        &self,
        tools: usize,
        mut findings: Vec<Finding>,
        text: Option<&[u8]>,
        with_spans: bool,
        locate: impl Fn(&[u8], &[Finding]) -> HashMap<String, Place>,
    ) -> Report {
        findings.retain(|f| self.enabled(f.rule));
        if findings.is_empty() {
            return Report {
                tools,
                diagnostics: Vec::new(),
            };
        }
        // Faults found while parsing carry their bytes; only findings with pointers need a scan.
        let needs_scan = findings
            .iter()
            .any(|f| !matches!(f.focus, Focus::Bytes { .. }));
        let places = text.map(|text| {
            let places = if needs_scan {
                locate(text, &findings)
            } else {
                HashMap::new()
            };
            (places, LineIndex::new(text))
        });
        let mut located: Vec<(usize, Diagnostic)> = findings
            .into_iter()
            .map(|finding| {
                let range = match (&places, text) {
                    (Some((places, _)), Some(text)) => range_of(text, places, &finding),
                    _ => None,
                };
                let span = match (&places, &range) {
                    (Some((_, lines)), Some(range)) if with_spans => {
                        Some(lines.span(range.clone()))
                    }
                    _ => None,
                };
                let order = range.map_or(usize::MAX, |r| r.start);
                (order, self.diagnostic(finding, span))
            })
            .collect();
        located.sort_by(|(a, x), (b, y)| {
            (a, x.code, &x.pointer, &x.message).cmp(&(b, y.code, &y.pointer, &y.message))
        });
        let mut diagnostics: Vec<Diagnostic> = located.into_iter().map(|(_, d)| d).collect();
        diagnostics.dedup();
        Report { tools, diagnostics }
    }

    fn diagnostic(&self, finding: Finding, span: Option<Span>) -> Diagnostic {
        let def = finding.rule.def();
        let default = match def.default {
            DefaultLevel::On(severity) => severity,
            DefaultLevel::Off => Severity::Warning,
        };
        Diagnostic {
            code: def.code,
            name: def.name,
            severity: self.overrides[finding.rule.index()]
                .or(finding.severity)
                .unwrap_or(default),
            // Messages quote names and values from the document: every text a renderer prints
            // is made inert here, once, whatever the output format.
            message: inert(finding.message),
            help: finding.help.map(inert),
            tool: finding.tool.map(inert),
            pointer: inert(finding.pointer),
            span,
            url: finding.rule.url(),
        }
    }
}

/// R007 for the member names written twice in `source` (`document` is its parsed value, which
/// kept the last of each): errors inside a tool, warnings elsewhere.
pub(crate) fn duplicate_keys(source: &[u8], document: &Value, findings: &mut Vec<Finding>) {
    let duplicates = span::duplicate_keys(source);
    if duplicates.is_empty() {
        return;
    }
    let tools_pointer = load::tools_of(document).map(|array| array.pointer()).ok();
    for duplicate in duplicates {
        // `<tools>/<index>/...`: the tool is the array element the pointer passes through.
        let tool = tools_pointer.and_then(|base| {
            let rest = duplicate.pointer.strip_prefix(base)?.strip_prefix('/')?;
            let index = rest.split('/').next()?;
            let has_member = rest.len() > index.len();
            has_member.then(|| format!("{base}/{index}"))
        });
        let name = tool
            .as_deref()
            .and_then(|tool| document.pointer(tool))
            .and_then(|tool| tool.get("name"))
            .and_then(Value::as_str);
        findings.push(rules::duplicate_key::duplicate(
            duplicate.pointer.clone(),
            &duplicate.key,
            duplicate.count,
            document.pointer(&duplicate.pointer),
            tool.is_some(),
            name,
        ));
    }
}

/// `text` with its unsafe characters escaped, reusing the allocation when there are none.
fn inert(text: String) -> String {
    match escape_controls(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// True for the pointer of one binding value inside either carrier, relative to its tool.
fn is_binding_path(path: &str) -> bool {
    use mcp_recovery_model::Carrier;
    [Carrier::Sep3172, Carrier::Compensate]
        .iter()
        .any(|carrier| {
            let prefix = format!("{}{}/", carrier.pointer(), carrier.bindings_pointer());
            path.strip_prefix(&prefix)
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
        })
}

/// The places of every finding's pointer and of its ancestors (the fallback for a pointer at
/// something absent, such as a missing property).
fn locate_all(text: &[u8], findings: &[Finding]) -> HashMap<String, Place> {
    let mut wanted: HashSet<&str> = HashSet::new();
    for finding in findings {
        let mut pointer = finding.pointer.as_str();
        loop {
            wanted.insert(pointer);
            match pointer.rfind('/') {
                Some(cut) => pointer = &pointer[..cut],
                None => break,
            }
        }
    }
    span::locate(text, &wanted)
}

fn range_of(
    text: &[u8],
    places: &HashMap<String, Place>,
    finding: &Finding,
) -> Option<std::ops::Range<usize>> {
    if let Focus::Bytes { start, end } = finding.focus {
        return Some(start..end);
    }
    if let Some(place) = places.get(&finding.pointer) {
        return Some(match finding.focus {
            Focus::Key => place.key.clone().unwrap_or_else(|| place.value.clone()),
            Focus::InString(offset) if text.get(place.value.start) == Some(&b'"') => {
                span::char_in_string(text, place.value.clone(), offset)
                    .unwrap_or_else(|| place.value.clone())
            }
            _ => place.value.clone(),
        });
    }
    let mut pointer = finding.pointer.as_str();
    while let Some(cut) = pointer.rfind('/') {
        pointer = &pointer[..cut];
        if let Some(place) = places.get(pointer) {
            return Some(place.value.clone());
        }
    }
    None
}

#[cfg(test)]
mod tests;
