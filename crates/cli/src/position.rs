//! Byte offsets to 1-based line/column positions, columns in Unicode code points (what SARIF's
//! `columnKind: unicodeCodePoints` and DESIGN §5 promise).

/// Line starts of one text, for many lookups in the same file.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `text` (any bytes; invalid UTF-8 counts one column per non-continuation byte).
    pub fn new(text: &[u8]) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { starts }
    }

    /// 1-based line and column of the byte `offset` (clamped to the text).
    pub fn position(&self, text: &[u8], offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&start| start <= offset);
        let start = self
            .starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let column = code_points(&text[start..offset]) + 1;
        (line.max(1), column)
    }
}

/// Number of code points in `bytes` (UTF-8 continuation bytes do not start one).
fn code_points(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// 1-based line and column of one offset (for a single lookup).
pub fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    LineIndex::new(text).position(text, offset)
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
