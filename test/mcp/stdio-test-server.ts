/**
 * A stdio MCP server written with the official SDK for the failure cases of stdio servers (test/mcp/mcp-stdio*.ts).
 * The worker launches it from MCP_STDIO_SERVERS (`node --import tsx test/mcp/stdio-test-server.ts`). Every start and
 * every call is appended as a JSON line to the file named by STDIO_TEST_LOG, with the process id, so a test can
 * count calls and check that the process is gone. Tools:
 * - `note` (read-only): answers at once.
 * - `charge` (no annotations: attempted once): logged, then never answers; the process ends with its stdin.
 * - `hang` (no annotations): logged, then never answers, and the process holds on: it ignores SIGTERM and keeps a
 *   timer, so only SIGKILL ends it (a server that does not stop when asked).
 * - `forbidden`: left out of the declaration's `allowed_tools` by the tests, so never shown to a model.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

// Launched as its own process: its one setting comes from the environment the operator's declaration gave it.
const logFile = process.env.STDIO_TEST_LOG;
if (!logFile) throw new Error('STDIO_TEST_LOG is not set');
const log = (entry: Record<string, unknown>) =>
  appendFileSync(logFile, `${JSON.stringify({ ...entry, pid: process.pid })}\n`);

const server = new McpServer({ name: 'stdio-test', version: '1.0.0' });
server.registerTool(
  'note',
  { description: 'Echoes a note', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
  ({ text }) => {
    log({ event: 'call', tool: 'note' });
    return { content: [{ type: 'text', text: `noted: ${text}` }] };
  },
);
server.registerTool('charge', { description: 'Charges a card', inputSchema: { cents: z.number() } }, () => {
  log({ event: 'call', tool: 'charge' });
  return new Promise<never>(() => undefined);
});
server.registerTool('hang', { description: 'Never answers', inputSchema: {} }, () => {
  log({ event: 'call', tool: 'hang' });
  process.on('SIGTERM', () => log({ event: 'sigterm ignored' }));
  setInterval(() => undefined, 60_000);
  return new Promise<never>(() => undefined);
});
server.registerTool('forbidden', { description: 'Not in the declaration’s allowed_tools', inputSchema: {} }, () => {
  log({ event: 'call', tool: 'forbidden' });
  return { content: [{ type: 'text', text: 'should never be called' }] };
});

log({ event: 'start' });
void server.connect(new StdioServerTransport());
