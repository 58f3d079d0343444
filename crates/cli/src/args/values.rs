//! Value types and parsers shared by the option groups: sizes, written paths, `--color`.

use std::path::PathBuf;

use clap::ValueEnum;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, unless the environment says otherwise.
    #[default]
    Auto,
    /// Always colour, whatever the environment says.
    Always,
    /// Never colour.
    Never,
}

/// Parses a size: digits, then optionally `K`, `M` or `G` (powers of 1024, `KiB`… and `KB`…
/// read the same).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("unknown unit `{unit}` (use K, M or G)")),
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| "expected a number of bytes such as 1048576, 512K or 100M".to_owned())?;
    if number == 0 {
        return Err("the size must be at least 1 byte".to_owned());
    }
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| "the size is too large".to_owned())
}

/// A path the command writes or appends to: `-` would name standard input or output, which
/// cannot be, and an empty path names nothing, so both are refused.
pub fn written_path(text: &str) -> Result<PathBuf, String> {
    match text {
        "-" => {
            Err("`-` names standard input or output, which this path cannot be: name a file".into())
        }
        "" => Err("the path is empty".into()),
        _ => Ok(PathBuf::from(text)),
    }
}
