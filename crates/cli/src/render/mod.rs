//! Output formats of `lint`, one file each. Every renderer sees the files in input order, then
//! the summary; only the human renderer needs the source text, the others keep findings.

mod github;
mod gitlab;
mod human;
mod json;
mod junit;
pub mod markdown;
mod sarif;
pub mod types;

use mcp_recovery_base::text::json_inert;

use crate::args::lint::Format;

pub use human::Style;
pub use types::{Finding, Region, Renderer, Source, Summary, document};

/// `value` as pretty JSON; `what` names it should that fail. Characters that are valid in a
/// JSON string but unsafe on a terminal (C1 controls, DEL, bidi overrides, line separators) are
/// written as `\uXXXX` escapes: the same JSON value, inert text.
pub fn pretty<T: serde::Serialize>(value: &T, what: &str) -> Result<String, crate::Failure> {
    serde_json::to_string_pretty(value)
        .map(|text| json_inert(&text).into_owned())
        .map_err(|e| crate::Failure::Usage(format!("cannot serialize {what}: {e}")))
}

/// The renderer of `format`.
pub fn renderer(format: Format, style: Style) -> Box<dyn Renderer> {
    match format {
        Format::Human => Box::new(human::Human::new(style)),
        Format::Json => Box::new(json::Json::default()),
        Format::Sarif => Box::new(sarif::Sarif::default()),
        Format::Github => Box::new(github::Github),
        Format::Markdown => Box::new(markdown::Markdown::default()),
        Format::Gitlab => Box::new(gitlab::Gitlab::default()),
        Format::Junit => Box::new(junit::Junit::default()),
    }
}
