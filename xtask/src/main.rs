//! Project automation: `cargo xtask <task>`.
//!
//! Each task lives in its own module; this file only dispatches.

#[cfg(test)]
mod architecture;
mod bench;
mod catalog;
mod codegen;
mod conformance_check;
mod corpus;
mod examples_check;
mod house;
mod live;
mod packages;
mod proxy_bench;
mod proxy_check;
mod server_json_check;
mod shared;
mod spec_repo;
mod suggest_recall;
mod targets;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  codegen [--check]   write every generated file (--check: fail when one is stale)
  check-house         no production file over 600 lines and no import circle between the
                      files of a crate
  check-shared        cross-check schemas and model against ../shared/data (real captures,
                      official MCP schema and examples)
  gen-corpus [--servers N] [--seed S] [--verify] OUT
                      write a deterministic registry-like corpus and OUT/manifest.json
                      (--verify: then check census and lint against the manifest)
  bench [--corpus DIR] [--runs N]
                      lint and census over the corpus and two large files against a plain
                      serde_json parse (xtask/floor), then the plan, then the latency,
                      throughput and memory of calls through the proxy
  bench small [--corpus DIR]
                      one 20-tool file linted by a fresh process against the floor's
  bench plan          the plan figures alone
  bench proxy [--cli PATH]
                      the proxy figures alone (of a CLI built before, with --cli)
  census-shared       census of ../shared/data/real-servers (fails when it is missing)
  check-live-servers  install pinned real MCP servers in a temporary directory, lint each live
                      and compare its tools with ../shared/data/real-servers
  check-catalog [OVERLAY]
                      install the servers overlays/ names (pinned, in a temporary directory),
                      run a failing workflow through `mcp-recovery proxy` with each overlay and
                      check from outside that the rollback left the state as it was (with
                      OVERLAY, only the workflows of overlays/OVERLAY.toml)
  check-packages      build the wheel (maturin) and the npm packages, install and run them,
                      try the pre-commit hooks, check the JUnit report, the workflows and
                      action.yml, and `cargo publish --dry-run` every crate
  check-proxy         install the TypeScript and Python MCP SDKs in a temporary directory and
                      drive a failing workflow through `mcp-recovery proxy`; verify its journals;
                      compare server-everything directly and through the proxy
  check-conformance   install the official MCP conformance suite (pinned, in a temporary
                      directory) and run its server scenarios against xtask/conformance's server
                      directly and through `mcp-recovery proxy --listen`: the same must pass
  check-spec-repo     install the MCP specification repository's schema generator (pinned, in a
                      temporary directory), run it on spec/typescript/ and compare the result with
                      spec/schema/; needs ../shared/data for the official schema
  check-server-json   lint three published credential-free servers live from their MCP Registry
                      server.json (npm with npx, PyPI with uvx; uv pinned, installed into a
                      temporary directory)
  suggest-recall [--binary PATH]
                      install the servers of xtask/suggest-pairs.json (pinned, in a temporary
                      directory), run `mcp-recovery suggest` on each live tools/list and print how
                      many listed undo pairs it drafts; fails on a wrong draft
  check-examples      build examples/ (TypeScript, Python, Rust servers) with their real SDKs,
                      pinned, in a temporary directory; each must lint clean at strict and roll
                      a failed workflow back through the proxy";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = workspace::repo_root();
    let result = match args.as_slice() {
        ["codegen"] => codegen::generate(&root, false),
        ["codegen", "--check"] => codegen::generate(&root, true),
        ["check-shared"] => shared::check(&root),
        ["check-house"] => house::check(&root),
        ["gen-corpus", rest @ ..] => corpus::gen_corpus_command(rest),
        ["bench", rest @ ..] => bench::run(&root, rest),
        ["bench-measure", rest @ ..] => bench::measure_command(rest),
        ["census-shared"] => shared::census_shared(&root),
        ["check-live-servers"] => live::check(&root),
        ["check-packages"] => packages::check(&root),
        ["check-catalog"] => catalog::check(&root, None),
        ["check-catalog", overlay] => catalog::check(&root, Some(overlay)),
        ["check-proxy"] => proxy_check::check(&root),
        ["check-conformance"] => conformance_check::check(&root),
        ["check-spec-repo"] => spec_repo::check(&root),
        ["check-server-json"] => server_json_check::check(&root),
        ["check-examples"] => examples_check::check(&root),
        ["suggest-recall", rest @ ..] => suggest_recall::check(&root, rest),
        [] | ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => Err(format!("unknown arguments: {}\n\n{USAGE}", args.join(" "))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
