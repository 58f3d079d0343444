//! The generator settings, shared by the command, the generator and the recovery declarations.

/// Generator settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusConfig {
    /// Tools-list files (servers).
    pub servers: usize,
    /// PRNG seed.
    pub seed: u64,
    /// Probability (ppm) that a SEP-3172-only declaration carries a planted defect (kinds rotate).
    pub defect_ppm: u32,
    /// Probability (ppm) that a multi-tool server without recovery lists a tool twice.
    pub duplicate_ppm: u32,
    /// Probability (ppm) per server of each kind of file that is not a tools list.
    pub junk_ppm: u32,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        Self {
            servers: 5_000,
            seed: 20_260_727,
            defect_ppm: 200_000,
            duplicate_ppm: 10_000,
            junk_ppm: 4_000,
        }
    }
}
