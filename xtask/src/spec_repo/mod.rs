//! `cargo xtask check-spec-repo`: the generated TypeScript goes through the MCP specification
//! repository's own pipeline and comes out as the schema we publish.
//!
//! The specification repository generates `schema.json` from `schema.ts` with
//! `typescript-json-schema` and validates `examples/<TypeName>/*.json` with Ajv. This check
//! installs the versions its lock file pins (into a temporary directory) and:
//!
//! 1. runs the generator, with the repository's flags, on `spec/typescript/sep-3172.ts`, and
//!    requires every description to equal ours;
//! 2. validates every recovery object and `annotations` object of every fixture, conformance case
//!    and example (and mutations of each) against both the generated schema and
//!    `spec/schema/recovery.schema.json` / `sep-3172.defs.json`: the verdicts must agree, except
//!    for the cases [`EXCLUDED`] names;
//! 3. runs `mcp-recovery schema --spec-repo` on a checkout-shaped directory, twice, then the
//!    repository's formatting, type and generation steps on the result, and Ajv on the examples;
//! 4. validates the examples against the official 2026-07-28 `schema.json` (from `../shared`)
//!    with our definitions merged in, both as JSON (`sep-3172.defs.json`) and as generated from
//!    the TypeScript, with this crate's validator and with Ajv.
//!
//! Every step that cannot run fails the check with its name: it never passes by skipping work.
//!
//! The check runs here; the npm tools are driven by `tools`, the compared instances come from
//! `cases`, the differential comparison is `compare`, step 3 is `checkout` and step 4 `official`.

mod cases;
mod checkout;
mod compare;
mod official;
#[cfg(test)]
mod tests;
mod tools;

use std::path::Path;
use std::time::Instant;

use crate::codegen::TYPESCRIPT_MODULE;
use crate::live::{npm_install, probe, timed};
use crate::workspace::read_json;
use crate::workspace::temp_dir;

use cases::cases;
use checkout::spec_repo_flow;
use compare::{Comparison, description_differences};
use official::official_examples;
use tools::Tools;

/// The generator and its neighbours, at the versions the specification repository's
/// `package-lock.json` pins (the generator brings its own TypeScript, 5.9).
const NPM_PACKAGES: &[(&str, &str)] = &[
    ("typescript-json-schema", "0.68.0"),
    ("prettier", "3.9.6"),
    ("ajv", "8.20.0"),
    ("ajv-formats", "3.0.1"),
];

/// The constraint TypeScript cannot state: `compensatingOperation` is required exactly when
/// `strategy` is `compensation` (an `if`/`then` in our schema; an optional member in TypeScript).
const CONDITIONAL: &str = "compensatingOperation is required exactly when strategy is compensation";

/// Cases whose verdicts may differ because the TypeScript cannot express a constraint, by case
/// name, with the constraint. Every other constraint reaches the generated schema (the string
/// grammars through `@pattern`, the JSON types through `@TJS-type`). An entry whose verdicts
/// agree fails the check, so this list can only shrink.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "fixtures/adversarial/cyclic-ref.json#/tools/0/annotations/recovery with no compensatingOperation",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R003/malformed-recovery.json#/tools/0/annotations/recovery with /strategy = \"rollback\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with /compensatingOperation = null",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with /compensatingOperation/operationId = 7",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with /compensatingOperation/parameters = []",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"$\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"$bogus\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"$response.body#/a~2\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"$response.body/id\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"{$nope}\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R103/undo-strategy.json#/tools/0/annotations/recovery with parameters/probe = \"{$url\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R104/bad-template-and-escape.json#/tools/0/annotations/recovery with /strategy = \"rollback\"",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R201/unknown-strategy-counts-as-absent.json#/tools/0/annotations/recovery with /compensatingOperation = null",
        CONDITIONAL,
    ),
    (
        "fixtures/invalid/R104/missing-slash.json#/tools/0/annotations/recovery with /strategy = \"rollback\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with /compensatingOperation = null",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with /compensatingOperation/operationId = 7",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with /compensatingOperation/parameters = []",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$bogus\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$response.body#/a~2\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$response.body/id\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"{$nope}\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R103-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"{$url\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R104-bad-template/tools.json#/0/annotations/recovery with /strategy = \"rollback\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/lint/R104-invalid-expression/tools.json#/0/annotations/recovery with /strategy = \"rollback\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with /compensatingOperation/operationId = 7",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with /compensatingOperation/parameters = []",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$bogus\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$response.body#/a~2\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"$response.body/id\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"{$nope}\"",
        CONDITIONAL,
    ),
    (
        "spec/conformance/plan/035-unknown-strategy/tools.json#/0/annotations/recovery with parameters/probe = \"{$url\"",
        CONDITIONAL,
    ),
];

/// Runs the whole check; the error names what failed.
pub fn check(root: &Path) -> Result<(), String> {
    let started = Instant::now();
    let data = crate::workspace::data_dir(root, "", "step 4 (the official MCP schema)")?;
    let tmp_dir = temp_dir("mcp-recovery-spec-repo")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let npm = tmp.join("npm");
    timed("npm install", || {
        probe("node", "step `npm install`")?;
        npm_install(&npm, NPM_PACKAGES)
    })?;
    let tools = Tools { npm };
    let typescript = read_json(&tools.npm.join("node_modules/typescript/package.json"))?;
    println!(
        "    typescript-json-schema {} with TypeScript {}",
        NPM_PACKAGES[0].1, typescript["version"]
    );

    let mut failures = Vec::new();
    let module = root.join(TYPESCRIPT_MODULE);
    let generated = timed(&format!("generator on {TYPESCRIPT_MODULE}"), || {
        tools.generate(&module)
    })?;
    let defs = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    failures.extend(description_differences(&defs, &generated));

    let outcome = timed("differential comparison", || {
        let cases = cases(root)?;
        let comparison = Comparison::new(&defs, root, &generated)?;
        Ok(comparison.run(&cases, EXCLUDED))
    })?;
    println!("    {}", outcome.summary);
    failures.extend(outcome.failures);

    let checkout = tmp.join("checkout");
    let patched = timed("`mcp-recovery schema --spec-repo` on a checkout", || {
        spec_repo_flow(root, &tools, &checkout, &generated)
    });
    match patched {
        Ok(more) => failures.extend(more),
        Err(message) => failures.push(message),
    }

    let official = timed("examples against the official 2026-07-28 schema", || {
        official_examples(root, &data, &tools, tmp, &generated)
    });
    match official {
        Ok(more) => failures.extend(more),
        Err(message) => failures.push(message),
    }

    println!("check-spec-repo: {:.1} s", started.elapsed().as_secs_f64());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} spec-repository checks failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}
