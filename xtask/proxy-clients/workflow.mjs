// Drives `mcp-recovery proxy -- mcp-recovery-demo-server` with the official TypeScript SDK:
// the checkout workflow whose third step fails; the proxy must roll back the first two.
// Usage: node workflow.mjs PROXY_BINARY DEMO_SERVER_BINARY JOURNAL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [proxy, server, journal] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: proxy,
  args: [
    "proxy", "--journal", journal, "--on-failure", "rollback",
    "--ask", "charge_payment", "--approve-with", "grep -q charge_payment",
    "--deny", "get_secret*", "--", server,
  ],
  stderr: "inherit",
});
const client = new Client({ name: "mcp-recovery-check", version: "1.0.0" });
await client.connect(transport);

function fail(message) {
  console.error(`FAIL (TypeScript SDK): ${message}`);
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
await client.close();
console.log("ok (TypeScript SDK): the failed workflow was rolled back and the state equals the start");
