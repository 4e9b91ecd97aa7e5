/**
 * What a failed MCP exchange means for the activity: retry or not. The guarded fetch's own failures keep their
 * classification (a refused URL or an egress denial is never retried); HTTP answers by status; protocol errors
 * (JSON-RPC) are the server's answer and final, except its request timeout.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { classify, StepError, type FailureCode } from '../failures';

export interface McpFailure {
  code: FailureCode;
  retryable: boolean;
  message: string;
}

/**
 * A refused private address says which setting allows it: a server on the operator's own network (a local MCP server
 * on 127.0.0.1) is refused until HTTP_ALLOWED_HOSTS names it, and the step's status shows this message (docs/mcp.md).
 */
function allowHint(err: StepError): string {
  const host = err.details?.host;
  if (err.code !== 'url_refused' || typeof host !== 'string' || err.details?.range === undefined) return '';
  const entry = host.includes(':') ? `[${host}]` : host;
  return `; to allow it, add ${entry} (or ${entry}:<port>) to the worker's HTTP_ALLOWED_HOSTS`;
}

export function classifyMcpError(err: unknown): McpFailure {
  if (err instanceof StepError) {
    const c = classify(err);
    return { ...c, message: c.message + allowHint(err) };
  }
  if (err instanceof StreamableHTTPError && err.code !== undefined) {
    const status = err.code;
    if (status === 429) return { code: 'http_429', retryable: true, message: `the MCP server answered ${status}` };
    if (status >= 500) return { code: 'http_5xx', retryable: true, message: `the MCP server answered ${status}` };
    const why = status === 401 || status === 403 ? ' (check the server’s auth)' : '';
    return { code: 'http_4xx', retryable: false, message: `the MCP server answered ${status}${why}` };
  }
  if (err instanceof McpError) {
    const retryable = err.code === Number(ErrorCode.RequestTimeout) || err.code === Number(ErrorCode.ConnectionClosed);
    return { code: retryable ? 'timeout' : 'http_4xx', retryable, message: err.message };
  }
  return classify(err);
}
