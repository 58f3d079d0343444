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

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jsonschema::Validator;
use serde_json::{Map, Value, json};

use crate::codegen::{TYPESCRIPT_DIR, TYPESCRIPT_MODULE};
use crate::live::{Output, npm_install, probe, run, timed};
use crate::shared::{
    compile, definition_validator, examples_validate, merge_in_force, official_schema_with,
};
use crate::workspace::read_json;
use crate::workspace::temp_dir;

/// The generator and its neighbours, at the versions the specification repository's
/// `package-lock.json` pins (the generator brings its own TypeScript, 5.9).
const NPM_PACKAGES: &[(&str, &str)] = &[
    ("typescript-json-schema", "0.68.0"),
    ("prettier", "3.9.6"),
    ("ajv", "8.20.0"),
    ("ajv-formats", "3.0.1"),
];

/// The flags the specification repository's `scripts/generate-schemas.ts` passes.
const GENERATOR_FLAGS: &[&str] = &[
    "--defaultNumberType",
    "integer",
    "--required",
    "--skipLibCheck",
];

/// Time limit of one generator, formatter, compiler or validator run.
const TOOL_TIMEOUT: Duration = Duration::from_secs(180);

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

/// Values put into `parameters` of every recovery object: each binding kind, each malformed
/// kind, and the JSON types the generator is known to mistranslate (`null`, non-integers).
const BINDING_PROBES: &[&str] = &[
    r#""$response.body#/id""#,
    r#""$request.body""#,
    r#""$response.body#/a~1b/~0c""#,
    r#""$request.query.name""#,
    r#""$response.header.X-Trace""#,
    r#""$statusCode""#,
    r#""$bogus""#,
    r#""$response.body#/a~2""#,
    r#""$response.body/id""#,
    r#""$""#,
    r#""order {$request.body#/id} of {$response.body#/n}""#,
    r#""{{$url}}""#,
    r#""{$url""#,
    r#""{$nope}""#,
    r#""prefix {not an expression}""#,
    r#""plain text""#,
    r#""""#,
    r#""`@/ */""#,
    "0",
    "-3",
    "1.5",
    "1e300",
    "true",
    "null",
    r##"{"nested": {"$ref": "#/x"}}"##,
    r#"[1, "$bogus"]"#,
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

/// The installed npm tools.
struct Tools {
    npm: PathBuf,
}

impl Tools {
    fn bin(&self, name: &str) -> PathBuf {
        self.npm.join("node_modules/.bin").join(name)
    }

    fn run(&self, program: &Path, args: &[&str], cwd: &Path, what: &str) -> Result<Output, String> {
        let mut command = Command::new(program);
        command.args(args).current_dir(cwd);
        run(command, TOOL_TIMEOUT, what)
    }

    /// `schema.json` as the specification repository generates it from `file`: the generator's
    /// draft-07 output rewritten to 2020-12 the way its script does.
    fn generate(&self, file: &Path) -> Result<Value, String> {
        let what = format!("typescript-json-schema {}", file.display());
        let (dir, name) = split(file)?;
        let mut args: Vec<&str> = GENERATOR_FLAGS.to_vec();
        args.extend([name.as_str(), "*"]);
        let output = self.run(&self.bin("typescript-json-schema"), &args, &dir, &what)?;
        if !output.status.success() {
            return Err(output.failure(&what));
        }
        let text = output
            .stdout
            .replace(
                "http://json-schema.org/draft-07/schema#",
                "https://json-schema.org/draft/2020-12/schema",
            )
            .replace("\"definitions\":", "\"$defs\":")
            .replace("#/definitions/", "#/$defs/");
        serde_json::from_str(&text).map_err(|e| format!("{what} printed no JSON: {e}"))
    }

    /// Runs a step that must succeed, naming it in the failure.
    fn expect(&self, program: &Path, args: &[&str], cwd: &Path, what: &str) -> Result<(), String> {
        let output = self.run(program, args, cwd, what)?;
        if output.status.success() {
            Ok(())
        } else {
            Err(output.failure(what))
        }
    }

    /// Prettier with its defaults (the specification repository configures nothing for `.ts`).
    fn prettier_check(&self, files: &[&Path]) -> Result<(), String> {
        let mut args = vec!["--check".to_owned(), "--no-config".to_owned()];
        args.extend(files.iter().map(|f| f.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.expect(&self.bin("prettier"), &args, &self.npm, "prettier --check")
    }

    /// `tsc --noEmit` under the repository's compiler options.
    fn tsc(&self, file: &Path) -> Result<(), String> {
        let (dir, name) = split(file)?;
        let args = [
            "--noEmit",
            "--strict",
            "--skipLibCheck",
            "--target",
            "es2016",
            name.as_str(),
        ];
        self.expect(
            &self.bin("tsc"),
            &args,
            &dir,
            &format!("tsc --noEmit {}", file.display()),
        )
    }

    /// Ajv 2020-12 over `examples/<TypeName>/*.json` against `schema`'s `$defs/<TypeName>`, the
    /// way the repository's example check does.
    fn ajv_examples(&self, schema: &Path, examples: &Path) -> Result<String, String> {
        let script = self.npm.join("validate-examples.cjs");
        std::fs::write(&script, AJV_SCRIPT)
            .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        let what = format!("Ajv on {} against {}", examples.display(), schema.display());
        let node = PathBuf::from("node");
        let args = [
            script.display().to_string(),
            schema.display().to_string(),
            examples.display().to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = self.run(&node, &args, &self.npm, &what)?;
        if output.status.success() {
            Ok(output.stdout.trim().to_owned())
        } else {
            Err(output.failure(&what))
        }
    }
}

/// Validates examples the way the specification repository's `validate-examples.ts` does.
const AJV_SCRIPT: &str = r#"// Usage: node validate-examples.cjs SCHEMA.json EXAMPLES_DIR
const fs = require("fs");
const path = require("path");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;
const [schemaPath, examplesDir] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
let passed = 0;
let failed = 0;
for (const type of fs.readdirSync(examplesDir).sort()) {
  const dir = path.join(examplesDir, type);
  if (!fs.statSync(dir).isDirectory()) continue;
  const definition = schema.$defs && schema.$defs[type];
  const validate = definition
    ? ajv.compile({ $schema: schema.$schema, $defs: schema.$defs, ...definition })
    : null;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    const where = path.join(type, file);
    if (!validate) {
      console.log(`FAIL ${where}: the schema has no $defs/${type}`);
      failed += 1;
      continue;
    }
    if (validate(JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")))) {
      passed += 1;
    } else {
      console.log(`FAIL ${where}: ${ajv.errorsText(validate.errors)}`);
      failed += 1;
    }
  }
}
console.log(`Ajv: ${passed} examples passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
"#;

fn split(file: &Path) -> Result<(PathBuf, String), String> {
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} has no directory", file.display()))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{} has no file name", file.display()))?;
    Ok((dir, name))
}

/// Every definition and property whose description differs between our `$defs` and the
/// generated schema (the generator also must not lose a definition or a property).
fn description_differences(ours: &Value, generated: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let Some(defs) = ours.get("$defs").and_then(Value::as_object) else {
        return vec!["sep-3172.defs.json has no $defs".to_owned()];
    };
    for (name, definition) in defs {
        let Some(theirs) = generated.pointer(&format!("/$defs/{name}")) else {
            found.push(format!("the generated schema has no $defs/{name}"));
            continue;
        };
        let mut compare = |at: &str, ours: &Value, theirs: &Value| {
            if ours.get("description") != theirs.get("description") {
                found.push(format!(
                    "$defs/{name}{at}: description {} in ours, {} generated",
                    shown(ours.get("description")),
                    shown(theirs.get("description"))
                ));
            }
        };
        compare("", definition, theirs);
        let properties = definition.get("properties").and_then(Value::as_object);
        for (property, schema) in properties.into_iter().flatten() {
            let at = format!("/properties/{}", mcp_recovery_model::escape_token(property));
            let missing = json!({"description": format!("(no property {property})")});
            compare(&at, schema, theirs.pointer(&at).unwrap_or(&missing));
        }
    }
    found
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(none)".to_owned(), Value::to_string)
}

/// What a compared instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An `annotations.recovery` value.
    Recovery,
    /// A whole `annotations` value.
    Annotations,
}

/// One instance both schemas judge.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    kind: Kind,
    value: Value,
}

/// The directories whose JSON files feed the comparison.
const CASE_DIRS: &[&str] = &[
    "fixtures",
    "spec/conformance",
    "spec/examples",
    TYPESCRIPT_DIR,
];

/// Every recovery and annotations object in the fixtures, conformance cases and examples, and
/// the mutations of each.
fn cases(root: &Path) -> Result<Vec<Case>, String> {
    let mut files = Vec::new();
    for dir in CASE_DIRS {
        walk_json(&root.join(dir), &mut files)?;
    }
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let Ok(bytes) = std::fs::read(path) else {
            return Err(format!("cannot read {relative}"));
        };
        // Fixtures that are not JSON at all (R001) have no object to compare.
        let Ok(document) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        found.extend(document_cases(&relative, &document));
    }
    let mut seen = HashSet::new();
    let mut all = Vec::new();
    for case in found {
        let mutations = mutations(&case);
        for case in std::iter::once(case).chain(mutations) {
            if seen.insert((case.kind == Kind::Recovery, case.value.to_string())) {
                all.push(case);
            }
        }
    }
    Ok(all)
}

fn walk_json(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk_json(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// The recovery and annotations objects of one document: a lone recovery object
/// (`*.recovery.json`), a tool, or a `tools/list` in any accepted shape.
fn document_cases(file: &str, document: &Value) -> Vec<Case> {
    if file.ends_with(".recovery.json") {
        return vec![Case {
            name: format!("{file}#"),
            kind: Kind::Recovery,
            value: document.clone(),
        }];
    }
    let (base, tools): (String, Vec<&Value>) = match mcp_recovery_model::locate_tools(document) {
        Ok(location) => (
            location.pointer().to_owned(),
            location.tools.iter().collect(),
        ),
        Err(_) if document.get("name").is_some() => (String::new(), vec![document]),
        Err(_) => return Vec::new(),
    };
    let single = tools.len() == 1 && std::ptr::eq(tools[0], document);
    let mut cases = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let at = if single {
            String::new()
        } else {
            format!("{base}/{index}")
        };
        let Some(annotations) = tool.get("annotations") else {
            continue;
        };
        cases.push(Case {
            name: format!("{file}#{at}/annotations"),
            kind: Kind::Annotations,
            value: annotations.clone(),
        });
        if let Some(recovery) = annotations.get("recovery") {
            cases.push(Case {
                name: format!("{file}#{at}/annotations/recovery"),
                kind: Kind::Recovery,
                value: recovery.clone(),
            });
        }
    }
    cases
}

/// Variants of a case that each break (or keep) one constraint.
fn mutations(case: &Case) -> Vec<Case> {
    let Some(object) = case.value.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut variant = |label: String, value: Value| {
        out.push(Case {
            name: format!("{} with {label}", case.name),
            kind: case.kind,
            value,
        });
    };
    let with = |pointer: &str, value: Value| -> Option<Value> {
        let mut copy = Value::Object(object.clone());
        let (parent, key) = pointer.rsplit_once('/')?;
        copy.pointer_mut(parent)?
            .as_object_mut()?
            .insert(key.to_owned(), value);
        Some(copy)
    };
    match case.kind {
        Kind::Recovery => {
            if object
                .get("compensatingOperation")
                .and_then(|c| c.get("parameters"))
                .is_some_and(Value::is_object)
            {
                for probe in BINDING_PROBES {
                    let Ok(value) = serde_json::from_str::<Value>(probe) else {
                        continue;
                    };
                    if let Some(mutated) = with("/compensatingOperation/parameters/probe", value) {
                        variant(format!("parameters/probe = {probe}"), mutated);
                    }
                }
            }
            for (pointer, value) in [
                ("/strategy", json!(1)),
                ("/strategy", json!("rollback")),
                ("/compensatingOperation/operationId", json!(7)),
                ("/compensatingOperation/parameters", json!([])),
                ("/compensatingOperation", Value::Null),
                ("/x-note", json!("kept")),
            ] {
                if let Some(mutated) = with(pointer, value.clone()) {
                    variant(format!("{pointer} = {value}"), mutated);
                }
            }
            let mut without = object.clone();
            if without.remove("compensatingOperation").is_some() {
                variant(
                    "no compensatingOperation".to_owned(),
                    Value::Object(without),
                );
            }
        }
        Kind::Annotations => {
            for (pointer, value) in [
                ("/readOnlyHint", json!("yes")),
                ("/title", json!(5)),
                ("/recovery", json!(1)),
                ("/recovery", json!({})),
                ("/x-vendor", json!({"a": 1})),
            ] {
                if let Some(mutated) = with(pointer, value.clone()) {
                    variant(format!("{pointer} = {value}"), mutated);
                }
            }
        }
    }
    out
}

/// Our two validators and the generated schema's two.
struct Comparison {
    ours_recovery: Validator,
    ours_annotations: Validator,
    generated_recovery: Validator,
    generated_annotations: Validator,
}

/// What a comparison found.
struct Outcome {
    summary: String,
    failures: Vec<String>,
}

impl Comparison {
    fn new(defs: &Value, root: &Path, generated: &Value) -> Result<Self, String> {
        let recovery = read_json(&root.join("spec/schema/recovery.schema.json"))?;
        Ok(Self {
            ours_recovery: compile(&recovery, "recovery.schema.json")?,
            ours_annotations: definition_validator(defs, "ToolAnnotations")?,
            generated_recovery: definition_validator(generated, "Recovery")?,
            generated_annotations: definition_validator(generated, "ToolAnnotations")?,
        })
    }

    fn verdicts(&self, case: &Case) -> (bool, bool) {
        match case.kind {
            Kind::Recovery => (
                self.ours_recovery.is_valid(&case.value),
                self.generated_recovery.is_valid(&case.value),
            ),
            Kind::Annotations => (
                self.ours_annotations.is_valid(&case.value),
                self.generated_annotations.is_valid(&case.value),
            ),
        }
    }

    /// Compares every case; a difference outside `excluded`, an excluded case that agrees, an
    /// excluded name that matches no case, or a kind never both accepted and rejected fails.
    fn run(&self, cases: &[Case], excluded: &[(&str, &str)]) -> Outcome {
        let mut failures = Vec::new();
        let mut seen = [[0usize; 2]; 2];
        let mut used = HashSet::new();
        let verdict = |accepted: bool| if accepted { "accepts" } else { "rejects" };
        for case in cases {
            let (ours, theirs) = self.verdicts(case);
            seen[usize::from(case.kind == Kind::Annotations)][usize::from(ours)] += 1;
            match excluded.iter().find(|(name, _)| *name == case.name) {
                Some((name, constraint)) => {
                    used.insert(*name);
                    if ours == theirs {
                        failures.push(format!(
                            "{name}: excluded for \"{constraint}\", yet both schemas {} it: drop the exclusion",
                            verdict(ours)
                        ));
                    }
                }
                None if ours != theirs => failures.push(format!(
                    "{}: our schema {} {}, the schema generated from the TypeScript {} it",
                    case.name,
                    verdict(ours),
                    case.value,
                    verdict(theirs)
                )),
                None => {}
            }
        }
        for (name, _) in excluded {
            if !used.contains(name) {
                failures.push(format!("excluded case {name} does not exist"));
            }
        }
        for (index, kind) in ["recovery", "annotations"].iter().enumerate() {
            if seen[index][0] == 0 || seen[index][1] == 0 {
                failures.push(format!(
                    "no {kind} object was both accepted and rejected: the comparison proves nothing"
                ));
            }
        }
        Outcome {
            summary: format!(
                "{} cases agree ({} recovery objects: {} valid, {} invalid; {} annotations objects: {} valid, {} invalid), {} excluded",
                cases.len() - failures.len().min(cases.len()),
                seen[0][0] + seen[0][1],
                seen[0][1],
                seen[0][0],
                seen[1][0] + seen[1][1],
                seen[1][1],
                seen[1][0],
                excluded.len()
            ),
            failures,
        }
    }
}

/// The rest of a `schema.ts` shaped like the specification's: the `Tool` that refers to the
/// extended interface.
const CHECKOUT_TOOL_TS: &str = r#"
/**
 * A tool the client can call.
 */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { $schema?: string; type: "object"; [key: string]: unknown };
  outputSchema?: { $schema?: string; [key: string]: unknown };
  annotations?: ToolAnnotations;
  _meta?: { [key: string]: unknown };
}
"#;

/// A `schema.ts` before the SEP: the module's `ToolAnnotations` without the added member, and a
/// `Tool`.
fn checkout_schema_ts(module: &str) -> Result<String, String> {
    let member = mcp_recovery_schema::typescript::added_member().map_err(|e| e.to_string())?;
    let start = module.find("/**").ok_or("the module has no doc comment")?;
    let end = module
        .find("\n}\n")
        .map(|i| i + 3)
        .ok_or("the module declares no interface")?;
    let interface = module[start..end].replace(&format!("\n{member}"), "");
    if interface.contains("recovery?:") {
        return Err("the added member is still in the base interface".to_owned());
    }
    Ok(format!("{interface}{CHECKOUT_TOOL_TS}"))
}

/// What a SEP author does: run `schema --spec-repo` in a checkout (twice: the second run must
/// change nothing), then the repository's own checks on the result.
fn spec_repo_flow(
    root: &Path,
    tools: &Tools,
    checkout: &Path,
    generated: &Value,
) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    let version_dir = checkout.join("schema/draft");
    std::fs::create_dir_all(&version_dir)
        .map_err(|e| format!("cannot create {}: {e}", version_dir.display()))?;
    let schema_ts = version_dir.join("schema.ts");
    let module_text = std::fs::read_to_string(root.join(TYPESCRIPT_MODULE))
        .map_err(|e| format!("cannot read {TYPESCRIPT_MODULE}: {e}"))?;
    std::fs::write(&schema_ts, checkout_schema_ts(&module_text)?)
        .map_err(|e| format!("cannot write {}: {e}", schema_ts.display()))?;
    tools
        .prettier_check(&[&schema_ts])
        .map_err(|e| format!("the checkout's own schema.ts is not prettier-clean: {e}"))?;

    let examples = mcp_recovery_schema::spec_repo::example_files().map_err(|e| e.to_string())?;
    for (run, expected) in [("first", "wrote"), ("second", "unchanged")] {
        let printed = spec_repo_command(root, checkout)?;
        let schema_status = if run == "first" {
            "updated"
        } else {
            "unchanged"
        };
        let mut wanted = vec![format!("{schema_status} schema/draft/schema.ts")];
        wanted.extend(
            examples
                .iter()
                .map(|(path, _)| format!("{expected} schema/draft/{path}")),
        );
        for line in wanted {
            if !printed.lines().any(|l| l.starts_with(&line)) {
                failures.push(format!(
                    "{run} run of `schema --spec-repo` did not print `{line}`:\n{printed}"
                ));
            }
        }
    }

    let module = root.join(TYPESCRIPT_MODULE);
    tools.prettier_check(&[&schema_ts, &module])?;
    tools.tsc(&schema_ts)?;
    tools.tsc(&module)?;

    let patched = tools.generate(&schema_ts)?;
    let defs = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    let names = defs
        .get("$defs")
        .and_then(Value::as_object)
        .map(|d| d.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for name in names {
        let pointer = if name == "ToolAnnotations" {
            "/$defs/ToolAnnotations/properties/recovery".to_owned()
        } else {
            format!("/$defs/{name}")
        };
        if patched.pointer(&pointer) != generated.pointer(&pointer) {
            failures.push(format!(
                "{pointer} generated from the patched schema.ts differs from the one generated from {TYPESCRIPT_MODULE}"
            ));
        }
    }
    let schema_json = version_dir.join("schema.json");
    std::fs::write(&schema_json, crate::codegen::json(patched))
        .map_err(|e| format!("cannot write {}: {e}", schema_json.display()))?;
    let ajv = tools.ajv_examples(&schema_json, &version_dir.join("examples"))?;
    println!("    checkout: {ajv}");
    Ok(failures)
}

/// Runs `mcp-recovery schema --spec-repo CHECKOUT --protocol-version draft`; returns what it printed.
fn spec_repo_command(root: &Path, checkout: &Path) -> Result<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["run", "--quiet", "--locked", "-p", "mcp-recovery", "--"])
        .args(["schema", "--spec-repo"])
        .arg(checkout)
        .args(["--protocol-version", "draft"]);
    // A cold build of the binary on a small machine takes minutes.
    let what = "mcp-recovery schema --spec-repo";
    let output = run(command, Duration::from_secs(1800), what)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(output.failure(what))
    }
}

/// The examples (and the official ones) against the official schema with our definitions
/// merged, as JSON and as generated from the TypeScript, with both validators.
fn official_examples(
    root: &Path,
    data: &Path,
    tools: &Tools,
    tmp: &Path,
    generated: &Value,
) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    let drop_in = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    let as_json = official_schema_with(data, &drop_in, "sep-3172.defs.json")?;
    let as_typescript = official_with_generated(data, generated)?;
    let examples = root.join(TYPESCRIPT_DIR).join("examples");
    let official = data.join("mcp-schema/examples-2026-07-28");
    for (what, merged) in [
        ("sep-3172.defs.json", &as_json),
        (
            "the definitions generated from the TypeScript",
            &as_typescript,
        ),
    ] {
        merge_in_force(merged, what, &mut failures)?;
        let ours = examples_validate(merged, &examples, &mut failures)?;
        let theirs = examples_validate(merged, &official, &mut failures)?;
        println!(
            "    {ours} examples and {theirs} official examples validate against the official schema with {what}"
        );
    }
    let merged_path = tmp.join("schema-2026-07-28-with-sep-3172.json");
    std::fs::write(&merged_path, crate::codegen::json(as_typescript))
        .map_err(|e| format!("cannot write {}: {e}", merged_path.display()))?;
    for dir in [&examples, &official] {
        match tools.ajv_examples(&merged_path, dir) {
            Ok(summary) => println!("    {}: {summary}", dir.display()),
            Err(message) => failures.push(message),
        }
    }
    Ok(failures)
}

/// The official schema as the specification repository would generate it after the SEP: the
/// generated definitions added, and `recovery` added to its own `ToolAnnotations`.
fn official_with_generated(data: &Path, generated: &Value) -> Result<Value, String> {
    let mut defs: Map<String, Value> = generated
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .ok_or("the generated schema has no $defs")?;
    let recovery = defs
        .get("ToolAnnotations")
        .and_then(|t| t.pointer("/properties/recovery"))
        .cloned()
        .ok_or("the generated ToolAnnotations has no recovery property")?;
    defs.remove("ToolAnnotations");
    let mut merged =
        official_schema_with(data, &json!({"$defs": defs}), "the generated definitions")?;
    let properties = merged
        .pointer_mut("/$defs/ToolAnnotations/properties")
        .and_then(Value::as_object_mut)
        .ok_or("the official ToolAnnotations has no properties")?;
    properties.insert("recovery".to_owned(), recovery);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(ours: Value, theirs: Value) -> Comparison {
        let defs = |recovery: Value| {
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": {
                    "Recovery": recovery,
                    "ToolAnnotations": {"type": "object", "properties": {"readOnlyHint": {"type": "boolean"}}}
                }
            })
        };
        let ours_defs = defs(ours.clone());
        let theirs_defs = defs(theirs);
        Comparison {
            ours_recovery: compile(&ours, "ours").unwrap_or_else(|e| panic!("{e}")),
            ours_annotations: definition_validator(&ours_defs, "ToolAnnotations")
                .unwrap_or_else(|e| panic!("{e}")),
            generated_recovery: definition_validator(&theirs_defs, "Recovery")
                .unwrap_or_else(|e| panic!("{e}")),
            generated_annotations: definition_validator(&theirs_defs, "ToolAnnotations")
                .unwrap_or_else(|e| panic!("{e}")),
        }
    }

    fn case(name: &str, kind: Kind, value: Value) -> Case {
        Case {
            name: name.to_owned(),
            kind,
            value,
        }
    }

    fn sample() -> Vec<Case> {
        vec![
            case("ok", Kind::Recovery, json!("$x")),
            case("bad", Kind::Recovery, json!("y")),
            case("a", Kind::Annotations, json!({"readOnlyHint": true})),
            case("b", Kind::Annotations, json!({"readOnlyHint": 1})),
        ]
    }

    #[test]
    fn equal_schemas_agree() {
        let schema = json!({"type": "string", "pattern": "^\\$"});
        let outcome = comparison(schema.clone(), schema).run(&sample(), &[]);
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    }

    #[test]
    fn a_lost_constraint_is_a_named_difference_unless_excluded() {
        let ours = json!({"type": "string", "pattern": "^\\$"});
        let lost = json!({"type": "string"});
        let outcome = comparison(ours.clone(), lost.clone()).run(&sample(), &[]);
        assert_eq!(outcome.failures.len(), 1, "{:?}", outcome.failures);
        assert!(outcome.failures[0].starts_with("bad: our schema rejects"));

        let excluded = [("bad", "the pattern")];
        let outcome = comparison(ours.clone(), lost).run(&sample(), &excluded);
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);

        // An exclusion that is no longer needed, or names nothing, fails.
        let outcome = comparison(ours.clone(), ours).run(&sample(), &[("bad", "x"), ("gone", "y")]);
        assert_eq!(outcome.failures.len(), 2, "{:?}", outcome.failures);
        assert!(outcome.failures[0].contains("drop the exclusion"));
        assert!(outcome.failures[1].contains("gone does not exist"));
    }

    #[test]
    fn a_comparison_without_rejections_proves_nothing() {
        let schema = json!({});
        let cases = [case("ok", Kind::Recovery, json!(1))];
        let outcome = comparison(schema.clone(), schema).run(&cases, &[]);
        assert!(
            outcome
                .failures
                .iter()
                .any(|f| f.contains("proves nothing")),
            "{:?}",
            outcome.failures
        );
    }

    #[test]
    fn cases_are_found_in_every_document_shape_and_mutated() {
        let recovery = json!({"strategy": "compensation", "compensatingOperation": {"operationId": "r", "parameters": {}}});
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"recovery": recovery}});
        let names = |file: &str, document: Value| -> Vec<String> {
            document_cases(file, &document)
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(
            names(
                "a.json",
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}})
            ),
            [
                "a.json#/result/tools/0/annotations",
                "a.json#/result/tools/0/annotations/recovery"
            ]
        );
        assert_eq!(names("b.json", json!([tool])).len(), 2);
        assert_eq!(
            names("c.json", tool.clone()),
            ["c.json#/annotations", "c.json#/annotations/recovery"]
        );
        assert_eq!(
            names("d.recovery.json", recovery.clone()),
            ["d.recovery.json#"]
        );
        let mutated = mutations(&case("r", Kind::Recovery, recovery));
        assert!(mutated.len() > BINDING_PROBES.len());
        assert!(mutated.iter().any(
            |c| c.value.pointer("/compensatingOperation/parameters/probe") == Some(&Value::Null)
        ));
    }

    #[test]
    fn the_checkout_starts_without_the_member_and_gets_it() {
        let module = mcp_recovery_schema::typescript::module().unwrap_or_else(|e| panic!("{e}"));
        let base = checkout_schema_ts(&module).unwrap_or_else(|e| panic!("{e}"));
        assert!(!base.contains("recovery?:"), "{base}");
        assert!(base.contains("export interface Tool {"), "{base}");
        let patched = mcp_recovery_schema::spec_repo::patch_schema_ts(&base)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(patched.contains("  recovery?: Recovery;\n}"), "{patched}");
    }

    #[test]
    fn generated_descriptions_must_match() {
        let ours = json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "y"}, "q": {}}}}});
        let same = json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "y"}, "q": {}}}}});
        assert!(description_differences(&ours, &same).is_empty());
        let other = json!({"$defs": {"A": {"description": "x", "properties": {"p": {"description": "z"}}}}});
        let found = description_differences(&ours, &other);
        assert_eq!(found.len(), 2, "{found:?}");
    }
}
