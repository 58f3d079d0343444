//! Renderings of a [`Census`]: aligned text, Markdown, and an SVG bar chart of signatures.

use std::fmt::Write as _;

use mcp_recovery_base::text::{escape_controls, markdown_cell};
use mcp_recovery_validator::escape_xml;

use crate::{Census, Share};

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

fn optional(value: Option<f64>, percent_of: bool) -> String {
    match value {
        None => "n/a".to_owned(),
        Some(v) if percent_of => percent(v),
        Some(v) => format!("{v:.1}"),
    }
}

/// The rows every text format shows: section, label, count, share.
struct Row {
    section: &'static str,
    label: String,
    count: String,
    share: String,
}

impl Census {
    fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut push = |section: &'static str, label: &str, count: String, share: String| {
            rows.push(Row {
                section,
                label: escape_controls(label).into_owned(),
                count,
                share,
            });
        };
        // Every share names its denominator, so no reader has to look the definition up.
        let share = |s: &Share| {
            (
                thousands(s.count),
                format!(
                    "{} of {} {}",
                    percent(s.share),
                    thousands(s.denominator),
                    s.of
                ),
            )
        };

        push(
            "corpus",
            "files",
            thousands(self.files.total),
            String::new(),
        );
        push(
            "corpus",
            "bytes",
            thousands(self.files.bytes),
            String::new(),
        );
        push(
            "corpus",
            "not tools lists",
            thousands(self.files.not_tools_lists),
            String::new(),
        );
        push("corpus", "servers", thousands(self.servers), String::new());
        push(
            "corpus",
            "servers without tools",
            thousands(self.empty_servers),
            String::new(),
        );
        push("corpus", "tools", thousands(self.tools), String::new());
        push(
            "corpus",
            "non-object tool entries",
            thousands(self.non_object_entries),
            String::new(),
        );
        push(
            "corpus",
            "median tools per server (servers with tools)",
            optional(self.median_tools_per_server, false),
            String::new(),
        );

        let (c, s) = share(&self.hints.any);
        push("hints", "at least one hint (any value)", c, s);
        let (c, s) = share(&self.hints.all_four);
        push("hints", "all four hints (any value)", c, s);
        let (c, s) = share(&self.hints.any_boolean);
        push("hints", "at least one boolean hint", c, s);
        let (c, s) = share(&self.hints.all_four_boolean);
        push("hints", "all four hints boolean", c, s);
        push(
            "hints",
            "non-boolean hint values",
            thousands(self.hints.non_boolean_values),
            String::new(),
        );
        for h in &self.hints.per_hint {
            push(
                "hints",
                &format!("{} true / false / omitted", h.hint),
                format!(
                    "{} / {} / {}",
                    thousands(h.true_),
                    thousands(h.false_),
                    thousands(h.omitted)
                ),
                String::new(),
            );
        }

        push(
            "signatures",
            "occurring (of 81)",
            self.signatures.occurring.to_string(),
            String::new(),
        );
        for (rank, s) in self.signatures.top.iter().enumerate() {
            let (c, sh) = share(&s.tools);
            push(
                "signatures",
                &format!("#{} {}", rank + 1, s.signature),
                c,
                sh,
            );
        }
        let (c, s) = share(&self.signatures.top_cover);
        push(
            "signatures",
            &format!("top {} together", self.signatures.top.len()),
            c,
            s,
        );
        let (c, s) = share(&self.signatures.no_hint);
        push("signatures", "no hint at all (----)", c, s);

        push(
            "servers",
            "multi-tool servers emitting a hint",
            thousands(self.servers_spread.multi_tool_emitting),
            String::new(),
        );
        let (c, s) = share(&self.servers_spread.more_than_one_signature);
        push("servers", "using more than one signature", c, s);
        push(
            "servers",
            "emitting a hint",
            thousands(self.servers_spread.emitting),
            String::new(),
        );
        push(
            "servers",
            "median dominant-signature share (emitting servers)",
            String::new(),
            optional(self.servers_spread.median_dominant_share, true),
        );
        push(
            "servers",
            "median dominant-signature share (multi-tool emitting servers)",
            String::new(),
            optional(self.servers_spread.median_dominant_share_multi_tool, true),
        );

        let d = &self.destructive;
        let (c, s) = share(&d.set);
        push("destructiveHint", "set", c, s);
        let (c, s) = share(&d.set_where_applicable);
        push(
            "destructiveHint",
            "set where applicable (not read-only)",
            c,
            s,
        );
        let (c, s) = share(&d.true_where_applicable);
        push("destructiveHint", "true where applicable", c, s);
        let (c, s) = share(&d.set_on_read_only);
        push("destructiveHint", "set on read-only tools", c, s);

        let r = &self.recovery;
        for (label, value) in [
            ("SEP-3172 only", &r.sep3172_only),
            ("compensate only", &r.compensate_only),
            ("both carriers", &r.both),
            ("either carrier", &r.any),
            ("mutating tools (readOnlyHint not true)", &r.mutating),
            ("mutating, reversibility declared", &r.mutating_declared),
            ("mutating, compensable", &r.mutating_by_class.compensable),
            ("mutating, irreversible", &r.mutating_by_class.irreversible),
            ("mutating, readonly", &r.mutating_by_class.readonly),
            (
                "mutating, conflicting classes",
                &r.mutating_by_class.conflicting,
            ),
        ] {
            let (c, s) = share(value);
            push("recovery", label, c, s);
        }
        push(
            "recovery",
            "unknown SEP-3172 strategy",
            thousands(r.unknown_strategy),
            String::new(),
        );

        for p in &self.profiles {
            let (c, s) = share(&p.servers);
            let label = format!("{} ({}), servers", p.profile.as_str(), p.anomalies);
            push("guarantee profiles", &label, c, s);
            let (c, s) = share(&p.tools);
            let label = format!("{} ({}), tools", p.profile.as_str(), p.anomalies);
            push("guarantee profiles", &label, c, s);
        }

        if let Some(lint) = &self.lint {
            push("lint", "files linted", thousands(lint.files), String::new());
            push(
                "lint",
                "files with errors",
                thousands(lint.files_with_errors),
                String::new(),
            );
            push(
                "lint",
                "errors / warnings / infos",
                format!(
                    "{} / {} / {}",
                    thousands(lint.errors),
                    thousands(lint.warnings),
                    thousands(lint.infos)
                ),
                String::new(),
            );
            for r in &lint.by_rule {
                push(
                    "lint",
                    &format!("{} {} ({})", r.code, r.name, r.severity),
                    thousands(r.count),
                    String::new(),
                );
            }
        }
        rows
    }

    /// Aligned plain text, one section per block, then the files that are not tools lists.
    pub fn render_table(&self) -> String {
        let rows = self.rows();
        let label_width = rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(0);
        let count_width = rows
            .iter()
            .map(|r| r.count.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        let mut section = "";
        for r in &rows {
            if r.section != section {
                section = r.section;
                let _ = writeln!(out, "{section}");
            }
            let line = format!(
                "  {:<label_width$}  {:>count_width$}  {:>6}",
                r.label, r.count, r.share
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        if !self.not_tools_lists.is_empty() {
            let _ = writeln!(out, "not tools lists");
            for f in &self.not_tools_lists {
                let _ = writeln!(
                    out,
                    "  {}: {}",
                    escape_controls(&f.path),
                    escape_controls(&f.reason.describe())
                );
            }
        }
        out
    }

    /// GitHub-flavored Markdown: one table per section, then the files that are not tools lists.
    pub fn render_markdown(&self) -> String {
        let mut out = String::from("# MCP tools census\n");
        let mut section = "";
        for r in self.rows() {
            if r.section != section {
                section = r.section;
                let _ = write!(
                    out,
                    "\n## {section}\n\n| metric | count | share |\n|---|---:|---:|\n"
                );
            }
            // Labels, counts and shares are this crate's own text, never input.
            let _ = writeln!(out, "| {} | {} | {} |", r.label, r.count, r.share);
        }
        if !self.not_tools_lists.is_empty() {
            out.push_str("\n## not tools lists\n\n| file | reason |\n|---|---|\n");
            for f in &self.not_tools_lists {
                let _ = writeln!(
                    out,
                    "| {} | {} |",
                    markdown_cell(&f.path),
                    markdown_cell(&f.reason.describe())
                );
            }
        }
        out.push_str(
            "\nSignatures list readOnlyHint, destructiveHint, idempotentHint, openWorldHint: \
             `T` true, `F` false, `-` omitted.\n",
        );
        out
    }

    /// A horizontal bar chart of the signature distribution: the top signatures, then the rest
    /// summed as "other". Hand-written SVG 1.1, no scripts, no external references.
    pub fn render_svg(&self) -> String {
        const WIDTH: usize = 760;
        const LEFT: usize = 150;
        const BAR_MAX: usize = 480;
        const ROW: usize = 26;
        const TOP: usize = 58;

        let mut bars: Vec<(String, u64, f64)> = self
            .signatures
            .top
            .iter()
            .map(|s| (s.signature.label(), s.tools.count, s.tools.share))
            .collect();
        let rest_count = self.tools.saturating_sub(self.signatures.top_cover.count);
        let rest_kinds = self
            .signatures
            .occurring
            .saturating_sub(self.signatures.top.len());
        if rest_kinds > 0 {
            let share = if self.tools == 0 {
                0.0
            } else {
                rest_count as f64 / self.tools as f64
            };
            bars.push((format!("other ({rest_kinds})"), rest_count, share));
        }
        let max_share = bars.iter().map(|b| b.2).fold(0.0_f64, f64::max);
        let height = TOP + ROW * bars.len() + 40;

        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="13">"#
        );
        let _ = writeln!(
            svg,
            r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
        );
        let _ = writeln!(
            svg,
            r#"<text x="16" y="24" font-size="16" font-weight="bold">Hint signatures of {} tools ({} of 81 occur)</text>"#,
            thousands(self.tools),
            self.signatures.occurring
        );
        let _ = writeln!(
            svg,
            r##"<text x="16" y="44" fill="#555555">readOnly, destructive, idempotent, openWorld: T true, F false, - omitted</text>"##
        );
        for (i, (label, count, share)) in bars.iter().enumerate() {
            let y = TOP + i * ROW;
            let len = if max_share > 0.0 {
                (share / max_share * BAR_MAX as f64).round() as usize
            } else {
                0
            };
            let fill = if label.starts_with("other") {
                "#9e9e9e"
            } else {
                "#3b6ea8"
            };
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="end" font-family="monospace">{}</text>"#,
                LEFT - 10,
                y + 15,
                escape_xml(label, false)
            );
            let _ = writeln!(
                svg,
                r#"<rect x="{LEFT}" y="{}" width="{}" height="{}" fill="{fill}"><title>{}: {} of {} tools</title></rect>"#,
                y + 3,
                len.max(1),
                ROW - 8,
                escape_xml(label, false),
                thousands(*count),
                thousands(self.tools)
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}">{} ({})</text>"#,
                LEFT + len.max(1) + 6,
                y + 15,
                percent(*share),
                thousands(*count)
            );
        }
        let _ = writeln!(svg, "</svg>");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(98291), "98,291");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn markdown_cells_hold_no_unescaped_markup() {
        for text in [
            "a|b",
            "<script>",
            "![i](u)",
            "x\n| y |",
            "\\|",
            "md/x`|y<img src=x>.json",
        ] {
            let escaped = markdown_cell(text);
            let mut chars = escaped.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    assert!(chars.next().is_some_and(|n| n.is_ascii_punctuation()));
                } else {
                    assert!(!c.is_ascii_punctuation() && c != '\n', "{escaped}");
                }
            }
        }
    }

    /// File names and reasons quoting input reach no terminal raw, in text or Markdown.
    #[test]
    fn input_prints_inert() {
        use mcp_recovery_base::text::is_unsafe_char;

        use crate::{CensusBuilder, CensusOptions};

        let hostile = "\u{1b}]0;t\u{7}\u{1b}[2J\u{9b}1m\u{85}\u{202e}\u{2066}\u{2028}\u{200b}\r\n";
        let mut b = CensusBuilder::new(&CensusOptions::default()).unwrap();
        let message = serde_json::to_string(&format!("down{hostile}")).unwrap();
        b.add_bytes(
            format!("error{hostile}.json"),
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":1,"message":{message}}}}}"#)
                .as_bytes(),
        );
        b.add_bytes(format!("{hostile}`|.json"), br#"{"tools": ["#);
        let census = b.finish();
        let table = census.render_table();
        let markdown = census.render_markdown();
        for text in [&table, &markdown] {
            for line in text.split('\n') {
                assert!(!line.chars().any(is_unsafe_char), "{line:?}");
            }
        }
        assert!(table.contains("error\\u{1b}]0;t\\u{7}"), "{table}");
        assert!(table.contains("\\u{202e}\\u{2066}\\u{2028}\\u{200b}\\r\\n"));
        // Markdown writes the same inert text, escaped for a table cell.
        for shown in ["error\u{1b}]0;t\u{7}", "\u{202e}\u{2066}\u{2028}\u{200b}"] {
            assert!(markdown.contains(&markdown_cell(shown)), "{markdown}");
        }
        assert!(markdown.contains("\\`\\|\\.json"), "{markdown}");
        let svg = census.render_svg();
        assert!(
            !svg.chars().any(|c| is_unsafe_char(c) && c != '\n'),
            "{svg}"
        );
    }
}
