// A notes server on the official TypeScript SDK whose create/delete pair declares recovery:
// `create_note` is compensated by `delete_note`, bound to the id the create returned.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

// The compensate carrier: `_meta` reaches clients through the SDK's typed `Tool` unchanged.
const COMPENSATE = "dev.chronomcp/compensate";

const notes = new Map<string, { id: string; title: string; body: string }>();
const server = new McpServer({ name: "notes-typescript", version: "1.0.0" });

server.registerTool(
  "create_note",
  {
    title: "Create note",
    description: "Stores a note and returns it with its id.",
    inputSchema: { title: z.string(), body: z.string() },
    // Every field the compensation binds is required here, so the binding is provable.
    outputSchema: { note: z.object({ id: z.string(), title: z.string() }) },
    annotations: {
      title: "Create note",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    _meta: {
      [COMPENSATE]: {
        reversibility: "compensable",
        compensation: {
          toolName: "delete_note",
          parameterMapping: { id: "$.output.structuredContent.note.id" },
        },
        sideEffectScope: ["storage"],
      },
    },
  },
  async ({ title, body }) => {
    const note = { id: randomUUID(), title, body };
    notes.set(note.id, note);
    const structuredContent = { note: { id: note.id, title } };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  },
);

server.registerTool(
  "delete_note",
  {
    title: "Delete note",
    description: "Deletes a note by id.",
    inputSchema: { id: z.string() },
    outputSchema: { deleted: z.string() },
    annotations: {
      title: "Delete note",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: { [COMPENSATE]: { reversibility: "irreversible", sideEffectScope: ["storage"] } },
  },
  async ({ id }) => {
    if (!notes.delete(id)) {
      return { content: [{ type: "text", text: `no note ${id}` }], isError: true };
    }
    const structuredContent = { deleted: id };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  },
);

server.registerTool(
  "list_notes",
  {
    title: "List notes",
    description: "Lists every note.",
    inputSchema: {},
    outputSchema: { notes: z.array(z.object({ id: z.string(), title: z.string() })) },
    annotations: {
      title: "List notes",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: { [COMPENSATE]: { reversibility: "readonly" } },
  },
  async () => {
    const structuredContent = { notes: [...notes.values()].map(({ id, title }) => ({ id, title })) };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  },
);

await server.connect(new StdioServerTransport());
