// Drives the published `@modelcontextprotocol/server-everything` with the official TypeScript
// SDK client twice, directly and through `mcp-recovery proxy`, and compares what the client saw:
// tools/list, call results, progress notifications, and the server's own requests (sampling,
// elicitation, roots), which the client answers through the proxy.
// Usage: node transparency.mjs PROXY_BINARY EVERYTHING_SERVER_BINARY
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [proxy, everything] = process.argv.slice(2);

function fail(message) {
  console.error(`FAIL (transparency): ${message}`);
  process.exit(1);
}

async function session(command, args) {
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  const client = new Client(
    { name: "mcp-recovery-transparency", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  const asked = { sampling: [], elicitation: [], roots: 0 };
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.sampling.push(request.params.messages);
    return { model: "scripted", role: "assistant", content: { type: "text", text: "sampled reply" } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.elicitation.push(request.params.message);
    const properties = request.params.requestedSchema?.properties ?? {};
    const content = {};
    for (const [name, schema] of Object.entries(properties)) {
      if (schema.type === "boolean") content[name] = true;
      else if (schema.type === "number" || schema.type === "integer") content[name] = 1;
      else if (Array.isArray(schema.enum)) content[name] = schema.enum[0];
      else if (schema.type === "array") content[name] = [];
      else if (schema.type === "string") content[name] = "answer";
    }
    return { action: "accept", content };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.roots += 1;
    return { roots: [{ uri: "file:///tmp/mcp-recovery-root", name: "scripted root" }] };
  });
  await client.connect(transport);
  const seen = {};
  seen.server = client.getServerVersion();
  seen.capabilities = client.getServerCapabilities();
  seen.tools = (await client.listTools()).tools;
  const call = (name, args, options) => client.callTool({ name, arguments: args }, undefined, options);
  seen.echo = await call("echo", { message: "hello through the proxy" });
  seen.sum = await call("get-sum", { a: 2, b: 40 });
  seen.structured = await call("get-structured-content", { location: "Chicago" });
  const progress = [];
  seen.longRunning = await call("trigger-long-running-operation", { duration: 1, steps: 3 }, {
    onprogress: (p) => progress.push([p.progress, p.total]),
  });
  // The server sends its last progress notification right before the result, and the SDK may
  // handle the result first and drop it (directly as well): only the earlier ones are compared.
  seen.progress = progress.filter(([done, total]) => done < total);
  seen.sampling = await call("trigger-sampling-request", { prompt: "say something", maxTokens: 5 });
  seen.elicitation = await call("trigger-elicitation-request", {});
  seen.roots = await call("get-roots-list", {});
  seen.unknownTool = await call("no-such-tool", {}).catch((e) => ({ error: String(e.code ?? e.message) }));
  seen.asked = asked;
  await client.close();
  return seen;
}

const direct = await session(everything, ["stdio"]);
const proxied = await session(proxy, ["proxy", "--", everything, "stdio"]);

if (direct.tools.length === 0) fail("the server listed no tools");
if (direct.progress.length === 0) fail("no progress notification reached the client directly");
if (direct.asked.sampling.length === 0) fail("the server sent no sampling request");
if (direct.asked.elicitation.length === 0) fail("the server sent no elicitation request");
if (!JSON.stringify(direct.sampling).includes("sampled reply")) fail("the sampling answer did not reach the server");
// A tool the server never listed is refused by the proxy itself (its default), so the client
// gets a tool error either way, from the server directly and from the proxy through it.
if (direct.unknownTool?.isError !== true) fail("the server did not refuse an unknown tool");
if (proxied.unknownTool?.isError !== true ||
    !JSON.stringify(proxied.unknownTool).includes("not in the server's tools/list")) {
  fail(`an unlisted tool was not refused by the proxy: ${JSON.stringify(proxied.unknownTool)}`);
}
for (const key of Object.keys(direct).filter((key) => key !== "unknownTool")) {
  const a = JSON.stringify(direct[key]);
  const b = JSON.stringify(proxied[key]);
  if (a !== b) fail(`${key} differs through the proxy:\n direct  ${a}\n proxied ${b}`);
}
console.log(
  `ok (transparency): ${direct.tools.length} tools, ${Object.keys(direct).length} observations ` +
    `(${direct.progress.length} progress notifications, ${direct.asked.sampling.length} sampling, ` +
    `${direct.asked.elicitation.length} elicitation, ${direct.asked.roots} roots requests) ` +
    "identical directly and through the proxy",
);
