// `node run.mjs MCP_RECOVERY`: runs every server scenario of @modelcontextprotocol/conformance
// against server.mjs directly, then through `MCP_RECOVERY proxy --listen 127.0.0.1:0 --url …`
// with the proxy's default settings, prints both tallies and exits non-zero unless every
// scenario passes directly and the same scenarios pass through the proxy.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cli = process.argv[2];
if (!cli) {
  console.error('usage: node run.mjs MCP_RECOVERY');
  process.exit(2);
}
const children = [];
process.on('exit', () => children.forEach((child) => child.kill()));

/** Starts `command`; resolves with the first line of `stream` that `pattern` matches. */
function start(command, args, stream, pattern) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} named no URL within 30 s`)), 30000);
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code} before naming its URL`)));
    createInterface({ input: child[stream] }).on('line', (line) => {
      const found = line.match(pattern);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    // The other stream is read too, so the child never blocks on it.
    child[stream === 'stdout' ? 'stderr' : 'stdout'].resume();
  });
}

/** Runs the suite against `url`: each scenario's check tallies. */
async function suite(url, label) {
  // Under the working directory: the check's temporary directory.
  const out = mkdtempSync(join(process.cwd(), `results-${label.replaceAll(' ', '-')}-`));
  const suiteBin = join(process.cwd(), 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const child = spawn(process.execPath, [
    '--import', join(here, 'node20-fs.mjs'), suiteBin,
    'server', '--url', url, '--suite', 'all', '-o', out,
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  const timer = setTimeout(() => child.kill(), 300000);
  await new Promise((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const scenarios = new Map();
  for (const dir of readdirSync(out)) {
    const name = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8'));
    const count = (status) => checks.filter((check) => check.status === status).length;
    scenarios.set(name, {
      passed: count('SUCCESS'),
      failed: count('FAILURE'),
      warnings: count('WARNING'),
      failures: checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.name}: ${c.errorMessage ?? ''}`),
    });
  }
  const total = (key) => [...scenarios.values()].reduce((sum, s) => sum + s[key], 0);
  const passing = [...scenarios].filter(([, s]) => s.failed === 0).length;
  console.log(`${label}: ${scenarios.size} scenarios, ${passing} pass; checks: ${total('passed')} passed, ` +
    `${total('failed')} failed, ${total('warnings')} warnings`);
  for (const [name, s] of scenarios) {
    for (const failure of s.failures) console.log(`  ${label} ${name}: ${failure}`);
  }
  return scenarios;
}

const server = await start(process.execPath, [join(here, 'server.mjs'), '0'], 'stdout', /^(http:\/\/\S+)$/);
const direct = await suite(server, 'directly');
const proxy = await start(cli, ['proxy', '--listen', '127.0.0.1:0', '--url', server], 'stderr',
  /listening on (http:\/\/\S+)$/);
const proxied = await suite(proxy, 'through the proxy');

const problems = [];
if (direct.size === 0) problems.push('the suite ran no scenario');
for (const [name, s] of direct) {
  if (s.failed > 0) problems.push(`${name} fails directly against our server`);
  const through = proxied.get(name);
  if (!through) problems.push(`${name} did not run through the proxy`);
  else if ((through.failed === 0) !== (s.failed === 0)) problems.push(`${name} passes one way only`);
}
for (const name of proxied.keys()) {
  if (!direct.has(name)) problems.push(`${name} ran only through the proxy`);
}
if (problems.length > 0) {
  for (const problem of problems) console.log(`FAILED: ${problem}`);
  process.exit(1);
}
console.log(`the same ${direct.size} scenarios pass directly and through the proxy`);
process.exit(0);
