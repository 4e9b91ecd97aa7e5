/**
 * The Idempotency-Key of a run started through MCP, derived from the JSON-RPC request, so a client (or a proxy) that
 * sends the same request again gets the run the first one started (db/idempotency.ts, the same claim as
 * `Idempotency-Key` on POST …/run). The key is a hash of the API key's id, the JSON-RPC request id, the tool name and
 * its arguments, plus a ten-minute window: JSON-RPC ids restart at 0 in every client session, so the same id with the
 * same arguments an hour later is a new request, not a retry. A retry is recognised for at least ten minutes after the
 * first request (the window before is looked up too) — docs/decisions/0453-mcp-idempotency-key.md.
 */
import type { Db } from 'mongodb';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { findClaim } from '../../db/idempotency';
import type { JsonObject } from '../../domain/json';
import { hashRequest } from '../commands/start-run';

/** How long after a request its repetition still counts as a retry (at least; at most twice this). */
export const RETRY_WINDOW_MS = 10 * 60_000;

export interface McpStartRequest {
  ownerId: string;
  keyId: string;
  requestId: RequestId;
  tool: string;
  arguments: JsonObject;
}

export async function mcpIdempotencyKey(db: Db, req: McpStartRequest, now = Date.now()): Promise<string> {
  const digest = hashRequest({
    key_id: req.keyId,
    // Typed, so the ids 1 and "1" stay apart.
    request_id: `${typeof req.requestId}:${String(req.requestId)}`,
    tool: req.tool,
    arguments: req.arguments,
  });
  const window = Math.floor(now / RETRY_WINDOW_MS);
  const previous = `mcp:${digest}:${window - 1}`;
  // A first request near the end of the last window: its retry in this window is still its retry.
  const claim = await findClaim(db, req.ownerId, previous);
  if (claim && now - claim.created_at.getTime() < RETRY_WINDOW_MS) return previous;
  return `mcp:${digest}:${window}`;
}
