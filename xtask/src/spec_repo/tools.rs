//! The specification repository's npm tools, installed pinned: its schema generator, Prettier,
//! `tsc` and Ajv, each run the way the repository runs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::live::{Output, run};

/// The flags the specification repository's `scripts/generate-schemas.ts` passes.
const GENERATOR_FLAGS: &[&str] = &[
    "--defaultNumberType",
    "integer",
    "--required",
    "--skipLibCheck",
];

/// Time limit of one generator, formatter, compiler or validator run.
const TOOL_TIMEOUT: Duration = Duration::from_secs(180);

/// The installed npm tools.
pub(super) struct Tools {
    pub(super) npm: PathBuf,
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
    pub(super) fn generate(&self, file: &Path) -> Result<Value, String> {
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
    pub(super) fn prettier_check(&self, files: &[&Path]) -> Result<(), String> {
        let mut args = vec!["--check".to_owned(), "--no-config".to_owned()];
        args.extend(files.iter().map(|f| f.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.expect(&self.bin("prettier"), &args, &self.npm, "prettier --check")
    }

    /// `tsc --noEmit` under the repository's compiler options.
    pub(super) fn tsc(&self, file: &Path) -> Result<(), String> {
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
    pub(super) fn ajv_examples(&self, schema: &Path, examples: &Path) -> Result<String, String> {
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
