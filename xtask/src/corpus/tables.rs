//! The weights and words the generator draws from.

use std::collections::BTreeSet;

/// Tool-level signature weights (ppm), labels `readOnly destructive idempotent openWorld`.
/// Chosen so the corpus reproduces the paper's marginals: ≥1 hint 74.0 %, all four 61.7 %,
/// `TFTT` 39.9 %, none 26.0 %, `TFTF` third, destructiveHint set 65.7 %, set where applicable
/// 12.9 %, true where applicable 3.1 %.
const SIGNATURE_WEIGHTS: &[(&str, u32)] = &[
    ("TFTT", 399_000),
    ("----", 260_000),
    ("TFTF", 99_000),
    ("TFFT", 13_000),
    ("TFFF", 5_000),
    ("TTTT", 500),
    ("TTFT", 300),
    ("TTTF", 200),
    ("FFFT", 40_000),
    ("FFTT", 20_000),
    ("FTFT", 15_000),
    ("FFFF", 10_000),
    ("FTTT", 6_000),
    ("FFTF", 5_000),
    ("FTFF", 3_000),
    ("FTTF", 1_000),
    ("TF-T", 4_000),
    ("TFT-", 3_000),
    ("TF--", 2_000),
    ("TF-F", 1_000),
    ("TT--", 500),
    ("TFF-", 500),
    ("-F--", 5_000),
    ("-T--", 2_500),
    ("FF--", 4_000),
    ("FT--", 1_500),
    ("-FTT", 3_000),
    ("-F-T", 3_000),
    ("FF-T", 4_000),
    ("-TFT", 1_000),
    ("-FF-", 2_000),
    ("FFT-", 2_000),
    ("FT-T", 1_000),
    ("T---", 25_000),
    ("T-T-", 8_000),
    ("T--T", 10_000),
    ("T-TT", 7_000),
    ("---T", 6_000),
    ("F---", 6_000),
    ("--T-", 4_000),
    ("F-FT", 4_000),
    ("T-TF", 3_000),
    ("T--F", 2_000),
    ("F-F-", 1_500),
    ("--TT", 1_500),
    ("F--T", 1_500),
    ("---F", 1_000),
    ("F-TT", 1_000),
    ("--FT", 500),
    ("F-TF", 500),
    ("--F-", 300),
    ("T-F-", 200),
];

/// Rare signatures added to the table (100 ppm each, taken from `TFTT`), so about 66 of the 81
/// occur at registry scale.
const TAIL_SIGNATURES: usize = 14;
const TAIL_PPM: u32 = 100;

pub(super) fn signature_table() -> Vec<(String, u32)> {
    let mut table: Vec<(String, u32)> = SIGNATURE_WEIGHTS
        .iter()
        .map(|&(l, w)| (l.to_owned(), w))
        .collect();
    let known: BTreeSet<String> = table.iter().map(|(l, _)| l.clone()).collect();
    let states = ['-', 'F', 'T'];
    let mut added = 0;
    'outer: for a in states {
        for b in states {
            for c in states {
                for d in states {
                    let label: String = [a, b, c, d].iter().collect();
                    if !known.contains(&label) {
                        table.push((label, TAIL_PPM));
                        added += 1;
                        if added == TAIL_SIGNATURES {
                            break 'outer;
                        }
                    }
                }
            }
        }
    }
    table[0].1 -= TAIL_PPM * added as u32;
    table
}

/// Tool counts per server: median about 11, mean about 20 (paper: median 11).
pub(super) const TOOL_COUNT_BUCKETS: &[(usize, usize, u32)] = &[
    (1, 1, 70_000),
    (2, 3, 90_000),
    (4, 6, 120_000),
    (7, 10, 200_000),
    (11, 15, 170_000),
    (16, 25, 150_000),
    (26, 40, 100_000),
    (41, 70, 60_000),
    (71, 150, 32_000),
    (151, 500, 8_000),
];

pub(super) const VERBS_READ: &[&str] = &[
    "get", "list", "search", "read", "find", "describe", "fetch", "query", "count", "show",
];
pub(super) const VERBS_WRITE: &[&str] = &[
    "create", "update", "add", "set", "send", "upload", "assign", "publish", "schedule", "start",
];
pub(super) const NOUNS: &[&str] = &[
    "issue",
    "ticket",
    "file",
    "document",
    "page",
    "user",
    "team",
    "project",
    "invoice",
    "payment",
    "order",
    "customer",
    "event",
    "calendar_entry",
    "message",
    "channel",
    "repository",
    "branch",
    "pull_request",
    "comment",
    "label",
    "dataset",
    "table",
    "record",
    "report",
    "dashboard",
    "alert",
    "incident",
    "deployment",
    "secret",
    "bucket",
    "object",
    "note",
    "task",
    "contact",
    "lead",
    "campaign",
    "subscription",
    "product",
    "shipment",
];
pub(super) const FIELDS: &[&str] = &[
    "title",
    "body",
    "owner",
    "status",
    "priority",
    "due_date",
    "tags",
    "email",
    "url",
    "path",
    "query",
    "limit",
    "cursor",
    "region",
    "currency",
    "amount",
    "language",
    "timezone",
    "format",
    "visibility",
    "parent_id",
    "workspace",
    "notes",
    "color",
    "count",
];
pub(super) const DESCRIPTIONS: &[&str] = &[
    "Returns the matching items, newest first.",
    "Use this tool when the user asks about the current state of their account.",
    "Creates the item and returns its identifier.",
    "Updates only the fields that are given; other fields keep their values.",
    "Results are paginated; pass the cursor from the previous response to continue.",
    "Requires the caller to have write access to the workspace.",
    "The operation is applied immediately and notifies subscribers.",
    "Searches by full text over titles and bodies.",
];
