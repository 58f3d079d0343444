// Preloaded with `node --import`: the conformance suite imports `globSync` from `fs`, which
// Node 20 lacks. It uses it only in `tier-check`, which this check never runs, so the suite's
// `fs` is Node's own plus a `globSync` that says so (on a Node that has one, nothing changes).
import fs from 'node:fs';
import { register } from 'node:module';

const shim = `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync() {
  throw new Error('fs.globSync needs Node 22 (only tier-check uses it)');
}
`)}`;

const hooks = `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs')
      && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: ${JSON.stringify(shim)}, shortCircuit: true };
  }
  return next(specifier, context);
}
`)}`;

if (typeof fs.globSync !== 'function') register(hooks);
