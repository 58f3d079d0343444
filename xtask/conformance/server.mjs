// The server for the server scenarios of @modelcontextprotocol/conformance, on the TypeScript
// SDK: `node server.mjs PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp (port 0 picks
// a free one) and prints that URL on its first line. One session per Mcp-Session-Id, events
// kept for resumption (Last-Event-ID), DNS rebinding protection for loopback hosts. (A tool
// without an input schema gets only the request's context.)

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import {
  isInitializeRequest, SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// A 1x1 PNG and a 44-byte silent WAV.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = Buffer.concat([
  Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0]),
  Buffer.from('data'), Buffer.from([0, 0, 0, 0]),
]).toString('base64');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value) => ({ content: [{ type: 'text', text: value }] });

/** Events per stream, in memory, bounded: what a reconnecting client is replayed. */
class Events {
  constructor(limit = 1000) {
    this.limit = limit;
    this.events = new Map();
  }
  async storeEvent(streamId, message) {
    const id = `${streamId}_${Date.now()}_${randomUUID().slice(0, 8)}`;
    this.events.set(id, { streamId, message });
    if (this.events.size > this.limit) this.events.delete(this.events.keys().next().value);
    return id;
  }
  async getStreamIdForEventId(eventId) {
    return this.events.get(eventId)?.streamId;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    for (const [id, { streamId, message }] of this.events) {
      if (id === lastEventId) after = true;
      else if (after && streamId === last.streamId) await send(id, message);
    }
    return last.streamId;
  }
}

function build() {
  const server = new McpServer(
    { name: 'mcp-recovery-conformance-server', version: '1.0.0' },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );
  // Log messages go with the call's own stream.
  const say = (extra, data) =>
    extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
  const subscriptions = new Set();
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  server.registerTool('test_simple_text', { description: 'Returns simple text' }, async () =>
    text('This is a simple text response for testing.'));
  server.registerTool('test_image_content', { description: 'Returns an image' }, async () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Returns audio' }, async () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', { description: 'Returns a resource' }, async () => ({
    content: [{
      type: 'resource',
      resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
    }],
  }));
  server.registerTool('test_multiple_content_types', { description: 'Returns mixed content' }, async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
    ],
  }));
  server.registerTool('test_tool_with_logging', { description: 'Logs while it runs' }, async (extra) => {
    await say(extra, 'Tool execution started');
    await sleep(50);
    await say(extra, 'Tool processing data');
    await sleep(50);
    await say(extra, 'Tool execution completed');
    return text('Logging tool finished');
  });
  server.registerTool('test_error_handling', { description: 'Always fails' }, async () => ({
    isError: true,
    ...text('This tool intentionally returns an error for testing'),
  }));
  server.registerTool('test_tool_with_progress', { description: 'Reports progress' }, async (extra) => {
    const token = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
      }
      if (progress < 100) await sleep(50);
    }
    return text('Progress tool finished');
  });
  server.registerTool('test_sampling', {
    description: 'Asks the client for a completion',
    inputSchema: { prompt: z.string() },
  }, async ({ prompt }, extra) => {
    const answer = await extra.sendRequest({
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
    }, z.object({ content: z.object({ text: z.string().optional() }).passthrough() }).passthrough());
    return text(`LLM response: ${answer.content.text ?? ''}`);
  });
  const elicit = (extra, message, requestedSchema) => extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } },
    z.object({ action: z.string() }).passthrough(),
  );
  server.registerTool('test_elicitation', {
    description: 'Asks the user',
    inputSchema: { message: z.string() },
  }, async ({ message }, extra) => {
    const answer = await elicit(extra, message, {
      type: 'object',
      properties: {
        username: { type: 'string', description: "User's response" },
        email: { type: 'string', description: "User's email address" },
      },
      required: ['username', 'email'],
    });
    return text(`User response: ${JSON.stringify(answer)}`);
  });
  server.registerTool('test_elicitation_sep1034_defaults', { description: 'Asks with defaults' }, async (extra) => {
    const answer = await elicit(extra, 'Defaults for every primitive type', {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    });
    return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  });
  server.registerTool('test_elicitation_sep1330_enums', { description: 'Asks with every enum form' }, async (extra) => {
    const answer = await elicit(extra, 'Every enum form', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' },
        ] },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', items: { anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ] } },
      },
    });
    return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  });
  server.registerTool('test_reconnection', { description: 'Closes its event stream mid-call' }, async (extra) => {
    await sleep(100);
    extra.closeSSEStream?.();
    await sleep(200);
    return text('Reconnection test completed successfully');
  });
  server.registerTool('json_schema_2020_12_tool', { description: 'Tool with JSON Schema 2020-12 features' }, async () =>
    text('JSON Schema 2020-12 tool'));
  // The SDK lists input schemas it derives from zod; this one goes out as written.
  const handlers = server.server._requestHandlers;
  const listTools = handlers.get('tools/list');
  handlers.set('tools/list', async (request, extra) => {
    const result = await listTools(request, extra);
    for (const tool of result.tools) {
      if (tool.name === 'json_schema_2020_12_tool') {
        tool.inputSchema = {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
          properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
          additionalProperties: false,
        };
      }
    }
    return result;
  });

  server.registerResource('static-text', 'test://static-text', { description: 'A text resource', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { description: 'A binary resource', mimeType: 'image/png' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource('watched-resource', 'test://watched-resource', { description: 'A resource to subscribe to', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched.' }],
  }));
  server.registerResource('template', new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data by id', mimeType: 'application/json' }, async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }));

  server.registerPrompt('test_simple_prompt', { description: 'A simple prompt' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt('test_prompt_with_arguments', {
    description: 'A prompt with arguments',
    argsSchema: {
      arg1: completable(z.string(), (value) => ['paris', 'park', 'party'].filter((v) => v.startsWith(value))),
      arg2: z.string(),
    },
  }, async ({ arg1, arg2 }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
  }));
  server.registerPrompt('test_prompt_with_embedded_resource', {
    description: 'A prompt embedding a resource',
    argsSchema: { resourceUri: z.string() },
  }, async ({ resourceUri }) => ({
    messages: [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }));
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  return server;
}

const sessions = new Map();

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  return body ? JSON.parse(body) : undefined;
}

const port = Number(process.argv[2] ?? 0);
const listener = http.createServer(async (request, response) => {
  try {
    const id = request.headers['mcp-session-id'];
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && !id && request.method === 'POST' && isInitializeRequest(body)) {
      const address = listener.address();
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new Events(),
        retryInterval: 500,
        enableDnsRebindingProtection: true,
        allowedHosts: ['127.0.0.1', 'localhost', '[::1]'].flatMap((h) => [h, `${h}:${address.port}`]),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    if (!transport) {
      response.writeHead(id ? 404 : 400, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'unknown or missing session' } }));
      return;
    }
    await transport.handleRequest(request, response, body);
  } catch (error) {
    if (!response.headersSent) {
      response.writeHead(400, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: String(error) } }));
    }
  }
});
listener.listen(port, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${listener.address().port}/mcp`);
});
