//! The musts of `cargo xtask bench`: each figure against its limit, printed as one table.

/// One must of the bench: what, the figure measured, its limit, and whether the limit is a
/// floor (at least) rather than a ceiling (at most).
struct Must {
    what: String,
    measured: f64,
    limit: f64,
    at_least: bool,
}

impl Must {
    fn met(&self) -> bool {
        if self.at_least {
            self.measured >= self.limit
        } else {
            self.measured <= self.limit
        }
    }
}

/// The bench's musts, as they are measured.
#[derive(Default)]
pub(crate) struct Targets(Vec<Must>);

impl Targets {
    /// `measured` must be at most `limit`.
    pub(crate) fn check(&mut self, what: String, measured: f64, limit: f64) {
        self.0.push(Must {
            what,
            measured,
            limit,
            at_least: false,
        });
    }

    /// `measured` must be at least `limit`.
    pub(crate) fn check_at_least(&mut self, what: String, measured: f64, limit: f64) {
        self.0.push(Must {
            what,
            measured,
            limit,
            at_least: true,
        });
    }

    /// Prints every must; fails when one is not met.
    pub(crate) fn report(&self) -> Result<(), String> {
        println!("\n| must | measured | limit | met |\n|---|---:|---:|---|");
        for must in &self.0 {
            let met = if must.met() { "yes" } else { "**no**" };
            let bound = if must.at_least { "≥" } else { "≤" };
            println!(
                "| {} | {:.2} | {bound} {:.2} | {met} |",
                must.what, must.measured, must.limit
            );
        }
        let failed: Vec<&str> = self
            .0
            .iter()
            .filter(|must| !must.met())
            .map(|must| must.what.as_str())
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("not met: {}", failed.join("; ")))
        }
    }
}
