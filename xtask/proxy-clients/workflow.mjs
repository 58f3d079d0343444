// Drives `mcp-recovery proxy -- mcp-recovery-demo-server` with the official TypeScript SDK:
// the checkout workflow whose third step fails; the proxy must roll back the first two.
// Usage: [MCP_RECOVERY_CHECK_MODE=http] node workflow.mjs PROXY_BINARY DEMO_SERVER_BINARY JOURNAL
// With MCP_RECOVERY_CHECK_MODE=http the proxy serves Streamable HTTP (`--listen 127.0.0.1:0`) and the SDK's
// StreamableHTTPClientTransport connects to the address it prints; otherwise stdio.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [proxy, server, journal] = process.argv.slice(2);
const mode = process.env.MCP_RECOVERY_CHECK_MODE;
const flags = [
  "proxy", "--journal", journal, "--on-failure", "rollback",
  "--ask", "charge_payment", "--approve-with", "grep -q charge_payment",
  "--deny", "get_secret*",
];
let listener = null;
let transport;
if (mode === "http") {
  listener = spawn(proxy, [...flags, "--listen", "127.0.0.1:0", "--", server], {
    stdio: ["ignore", "inherit", "pipe"],
  });
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: listener.stderr });
    lines.on("line", (line) => {
      process.stderr.write(`${line}\n`);
      const found = line.match(/listening on (http:\/\/\S+)/);
      if (found) resolve(found[1]);
    });
    listener.on("exit", (code) => reject(new Error(`the proxy exited (${code}) before listening`)));
  });
  transport = new StreamableHTTPClientTransport(new URL(url));
} else {
  transport = new StdioClientTransport({
    command: proxy,
    args: [...flags, "--", server],
    stderr: "inherit",
  });
}
const client = new Client({ name: "mcp-recovery-check", version: "1.0.0" });
await client.connect(transport);

const who = mode === "http" ? "TypeScript SDK over Streamable HTTP" : "TypeScript SDK";
function fail(message) {
  console.error(`FAIL (${who}): ${message}`);
  listener?.kill();
  process.exit(1);
}
const state = async () => (await client.callTool({ name: "get_state", arguments: {} })).structuredContent;

const listed = await client.listTools();
if (!listed.tools.some((t) => t.name === "reserve_inventory")) fail("tools/list lost tools");
const start = await state();
const reserved = await client.callTool({ name: "reserve_inventory", arguments: { sku: "sku-widget", quantity: 2 } });
if (reserved.isError) fail("reserve_inventory failed");
const charged = await client.callTool({ name: "charge_payment", arguments: { customerId: "c-1", amount: 25, currency: "EUR" } });
if (charged.isError) fail("charge_payment was not approved");
const middle = await state();
if (JSON.stringify(middle) === JSON.stringify(start)) fail("the first two steps changed nothing");
const shipped = await client.callTool({
  name: "create_shipment",
  arguments: { reservationId: reserved.structuredContent.reservationId, address: "1 Main St", simulateFailure: true },
});
if (!shipped.isError) fail("the third step was meant to fail");
const denied = await client.callTool({ name: "get_secret_key", arguments: {} });
if (!denied.isError || !JSON.stringify(denied.content).includes("refused")) fail("a denied call was not refused");
const end = await state();
if (JSON.stringify(end) !== JSON.stringify(start)) {
  fail(`the state was not restored:\n start ${JSON.stringify(start)}\n end   ${JSON.stringify(end)}`);
}
if (mode === "http") await transport.terminateSession();
await client.close();
if (listener) {
  const exited = new Promise((resolve) => listener.on("exit", resolve));
  listener.kill();
  await exited;
}
console.log(`ok (${who}): the failed workflow was rolled back and the state equals the start`);
