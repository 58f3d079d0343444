//! `cargo xtask gen-corpus`: a deterministic, registry-like corpus of `tools/list` files with
//! hint signatures drawn to match the census paper's marginals, recovery declared by about a tenth
//! of the servers, and defects planted at known rates. `OUT/manifest.json` records what was
//! planted and the census numbers the corpus must yield.
//!
//! All randomness comes from one splitmix64 stream and integer arithmetic (probabilities in parts
//! per million), so the same seed gives the same bytes on every machine.

mod config;
mod expected;
mod generate;
mod recovery;
mod rng;
mod shapes;
mod tables;
#[cfg(test)]
mod tests;
mod tools;
mod verify;

use std::path::PathBuf;

pub use config::CorpusConfig;
pub use generate::generate;
pub use shapes::{SHAPES, large_file_text};
pub use verify::verify;

/// `cargo xtask gen-corpus [--servers N] [--seed S] [--verify] OUT`.
pub fn gen_corpus_command(args: &[&str]) -> Result<(), String> {
    let mut config = CorpusConfig::default();
    let mut out = None;
    let mut check = false;
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        match arg {
            "--servers" => config.servers = parse_number(it.next(), "--servers")?,
            "--seed" => config.seed = parse_number(it.next(), "--seed")?,
            "--verify" => check = true,
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ if out.is_none() => out = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument {arg}")),
        }
    }
    let out = out.ok_or("usage: cargo xtask gen-corpus [--servers N] [--seed S] [--verify] OUT")?;
    let generated = generate(&out, &config)?;
    let m = &generated.manifest;
    println!(
        "wrote {} files ({} servers, {} tools) to {}; planted errors {}",
        m["files"]["total"],
        m["expected"]["servers"],
        m["expected"]["tools"],
        out.display(),
        m["planted_errors"]
    );
    if check {
        let census = verify(&out, m)?;
        println!(
            "verified: census and lint of {} agree with the manifest ({} lint errors)",
            out.display(),
            census.lint.map_or(0, |l| l.errors)
        );
    }
    Ok(())
}

fn parse_number<T: std::str::FromStr>(value: Option<&&str>, option: &str) -> Result<T, String> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{option} needs a number"))
}
