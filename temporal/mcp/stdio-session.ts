/**
 * One local stdio MCP server process per activity attempt (decision 0420): launched from the operator's declaration
 * in MCP_STDIO_SERVERS, initialized, used for one thing (a listing or a call), and stopped before the activity ends.
 * Nothing is pinned to a worker, so a restarted or different worker serves the next activity alike.
 *
 * The child's environment is the operator's `env` over the SDK's few safe defaults (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER): never the worker's own (MONGODB_URI, PAYLOAD_CODEC_KEYS, provider keys). Its stderr is kept to a bounded
 * tail for the log; its stdout answers are bounded like an HTTP server's. Closing the session ends stdin, then sends
 * SIGTERM and SIGKILL two seconds apart (the SDK's close): an activity cancelled or timed out leaves no process.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { NonRetryableError } from '../failures';

/** How this worker introduces itself to an MCP server, over stdio or HTTP. */
export const MCP_CLIENT_INFO = { name: 'stepwise', version: '1.0.0' };

/** The last this many bytes of a server's stderr are logged; the rest is counted, not kept. */
export const STDIO_STDERR_TAIL_BYTES = 4 * 1024;
/** One JSON-RPC message from the server may be this large, like an HTTP server's answer (docs/mcp.md "Results"). */
const STDIO_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

export interface StdioSessionOptions {
  /** The server's name in MCP_STDIO_SERVERS. */
  name: string;
  declared: Config['MCP_STDIO_SERVERS'];
  timeoutMs: number;
  signal?: AbortSignal;
  /** Carries the run and step ids: the server's stderr tail is logged with them. */
  logger: Logger;
}

/** The operator's declaration of `name`, or a non-retryable failure naming the setting. */
export function stdioDeclaration(
  declared: Config['MCP_STDIO_SERVERS'],
  name: string,
): Config['MCP_STDIO_SERVERS'][string] {
  const decl = declared[name];
  if (!decl) {
    throw new NonRetryableError(
      'invalid_config',
      `stdio MCP server "${name}" is not declared in this worker's MCP_STDIO_SERVERS`,
    );
  }
  return decl;
}

/** A tool the operator has since taken out of the server's `allowed_tools` is not called. */
export function assertStdioToolAllowed(declared: Config['MCP_STDIO_SERVERS'], name: string, tool: string): void {
  const allowed = stdioDeclaration(declared, name).allowed_tools;
  if (allowed && !allowed.includes(tool)) {
    throw new NonRetryableError(
      'invalid_config',
      `tool "${tool}" is not in the allowed_tools of stdio MCP server "${name}"`,
    );
  }
}

/** Keeps the last STDIO_STDERR_TAIL_BYTES of a stream and counts everything. */
function stderrTail(): { push: (chunk: Buffer) => void; read: () => { tail: string; bytes: number } } {
  let kept = Buffer.alloc(0);
  let bytes = 0;
  return {
    push(chunk) {
      bytes += chunk.length;
      kept = Buffer.concat([kept, chunk]);
      if (kept.length > STDIO_STDERR_TAIL_BYTES) kept = kept.subarray(kept.length - STDIO_STDERR_TAIL_BYTES);
    },
    read: () => ({ tail: kept.toString('utf8'), bytes }),
  };
}

/** Launches the server, runs `fn` with a connected client, and stops the process whatever happens. */
export async function withStdioSession<T>(opts: StdioSessionOptions, fn: (client: Client) => Promise<T>): Promise<T> {
  const decl = stdioDeclaration(opts.declared, opts.name);
  const transport = new StdioClientTransport({
    command: decl.command,
    args: decl.args ?? [],
    env: decl.env ?? {},
    stderr: 'pipe',
    maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
  });
  const stderr = stderrTail();
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
  // A cancelled activity (its timeout, a lost heartbeat answer, the run cancelled) stops the process at once; the
  // request in flight fails with it.
  let closing: Promise<void> | undefined;
  const stop = () => {
    closing ??= client.close().catch(() => undefined);
  };
  opts.signal?.addEventListener('abort', stop, { once: true });
  let failed = false;
  let pid: number | null = null;
  try {
    try {
      await client.connect(transport, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (err) {
      const spawnError = err as NodeJS.ErrnoException | undefined;
      if (spawnError?.syscall?.startsWith('spawn')) {
        // The command cannot be started (ENOENT, EACCES): the operator's setting is wrong, a retry changes nothing.
        throw new NonRetryableError(
          'invalid_config',
          `stdio MCP server "${opts.name}" could not be started (${spawnError.code ?? 'spawn failed'})`,
        );
      }
      throw err;
    }
    pid = transport.pid;
    return await fn(client);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    stop();
    await closing;
    const { tail, bytes } = stderr.read();
    if (bytes > 0) {
      const fields = { mcp_stdio_server: opts.name, pid, stderr_bytes: bytes, stderr_tail: tail };
      if (failed) opts.logger.warn(fields, 'stdio MCP server stderr');
      else opts.logger.debug(fields, 'stdio MCP server stderr');
    }
  }
}
