// Drives `mcp-recovery proxy --on-failure rollback -- SERVER...` with the official TypeScript SDK
// client through a workflow whose second step fails: the note the first step created must be
// deleted again by the proxy's rollback, leaving the server's notes as they were.
// Usage: node workflow.mjs PROXY_BINARY JOURNAL SERVER_COMMAND [SERVER_ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [proxy, journal, ...server] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: proxy,
  args: ["proxy", "--journal", journal, "--on-failure", "rollback", "--", ...server],
  stderr: "inherit",
});
const client = new Client({ name: "mcp-recovery-examples-check", version: "1.0.0" });
await client.connect(transport);
const fail = (message) => {
  console.error(`FAIL (${server.join(" ")}): ${message}`);
  process.exit(1);
};
const notes = async () => {
  const listed = await client.callTool({ name: "list_notes", arguments: {} });
  if (listed.isError) fail("list_notes failed");
  return listed.structuredContent.notes;
};

const start = await notes();
const created = await client.callTool({ name: "create_note", arguments: { title: "groceries", body: "milk" } });
if (created.isError) fail("create_note failed");
const middle = await notes();
if (middle.length !== start.length + 1) fail(`create_note stored nothing: ${JSON.stringify(middle)}`);
const failed = await client.callTool({ name: "delete_note", arguments: { id: "no-such-note" } });
if (!failed.isError) fail("the second step was meant to fail");
const end = await notes();
if (JSON.stringify(end) !== JSON.stringify(start)) {
  fail(`the notes were not restored:\n start ${JSON.stringify(start)}\n end   ${JSON.stringify(end)}`);
}
await client.close();
console.log(`ok: the failed workflow was rolled back (${created.structuredContent.note.id} deleted)`);
