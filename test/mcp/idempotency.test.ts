/**
 * The idempotency key derived from a JSON-RPC request: the same request within the retry window maps to the key its
 * first attempt claimed (also across a window boundary); the same request id and arguments later, another key, a new
 * run.
 */
import { claimKey } from '../../db/idempotency';
import { mcpIdempotencyKey, RETRY_WINDOW_MS, type McpStartRequest } from '../../api/mcp/idempotency';
import { useTestDb } from '../helpers/stack';

describe('MCP idempotency keys', () => {
  const database = useTestDb();
  const req: McpStartRequest = {
    ownerId: 'usr_idem00000001',
    keyId: 'key_idem00000001',
    requestId: 2,
    tool: 'daily_report',
    arguments: { topic: 'tides', n: 1 },
  };
  const windowStart = 1_000 * RETRY_WINDOW_MS;

  it('gives a retry the key of its first attempt, and a later request another', async () => {
    const { db } = database;
    const firstAt = windowStart + RETRY_WINDOW_MS - 1_000; // one second before the window ends
    const first = await mcpIdempotencyKey(db, req, firstAt);
    await claimKey(db, {
      ownerId: req.ownerId,
      key: first,
      runId: 'run_idem00000001',
      requestHash: 'h',
      now: new Date(firstAt),
    });

    // Same window, and the next one within RETRY_WINDOW_MS: the first attempt's key.
    expect(await mcpIdempotencyKey(db, req, firstAt + 500)).toBe(first);
    expect(await mcpIdempotencyKey(db, req, firstAt + 60_000)).toBe(first);
    // Argument order does not matter; the id's type, the arguments, the tool and the API key do.
    expect(await mcpIdempotencyKey(db, { ...req, arguments: { n: 1, topic: 'tides' } }, firstAt)).toBe(first);
    expect(await mcpIdempotencyKey(db, { ...req, requestId: '2' }, firstAt)).not.toBe(first);
    expect(await mcpIdempotencyKey(db, { ...req, arguments: { topic: 'tides', n: 2 } }, firstAt)).not.toBe(first);
    expect(await mcpIdempotencyKey(db, { ...req, tool: 'other' }, firstAt)).not.toBe(first);
    expect(await mcpIdempotencyKey(db, { ...req, keyId: 'key_idem00000002' }, firstAt)).not.toBe(first);
    // The same id and arguments once the window has passed (a new client session reusing ids): a new key.
    expect(await mcpIdempotencyKey(db, req, firstAt + RETRY_WINDOW_MS + 1)).not.toBe(first);
  });
});
