//! Byte offsets to 1-based line/column positions, columns in Unicode code points (what SARIF's
//! `columnKind: unicodeCodePoints` promises): the validator's index, used for every lookup.

pub use mcp_recovery_validator::LineIndex;

/// 1-based line and column of one offset (for a single lookup).
pub fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    LineIndex::new(text).position(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let text = "ab\néz\n".as_bytes();
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        // After the two-byte é: one code point.
        assert_eq!(line_column(text, 5), (2, 2));
        assert_eq!(line_column(text, 7), (3, 1));
        assert_eq!(line_column(text, 99), (3, 1));
    }
}
