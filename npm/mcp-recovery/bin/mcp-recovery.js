#!/usr/bin/env node
// Runs the mcp-recovery binary of the platform package npm installed beside this one (one of
// the optionalDependencies; npm installs only the one whose os, cpu and libc match).
"use strict";

const { spawnSync } = require("node:child_process");

function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    // glibc reports its version in the process report; musl does not.
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

function packageName() {
  const { platform, arch } = process;
  if (platform === "linux") return `@mcp-recovery/linux-${arch}-${isMusl() ? "musl" : "gnu"}`;
  return `@mcp-recovery/${platform}-${arch}`;
}

function binaryPath() {
  const override = process.env.MCP_RECOVERY_BINARY;
  if (override) return override;
  const exe = process.platform === "win32" ? "mcp-recovery.exe" : "mcp-recovery";
  const name = packageName();
  try {
    return require.resolve(`${name}/bin/${exe}`);
  } catch {
    process.stderr.write(
      `error: mcp-recovery has no binary for ${process.platform}-${process.arch}: the package ` +
        `${name} is not installed.\nReinstall without --omit=optional (or --no-optional), or ` +
        "install the binary another way (cargo install mcp-recovery, pip install mcp-recovery) " +
        "and set MCP_RECOVERY_BINARY to its path.\n",
    );
    process.exit(2);
  }
}

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  process.stderr.write(`error: cannot run mcp-recovery: ${result.error.message}\n`);
  process.exit(2);
}
if (result.signal) {
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 2);
