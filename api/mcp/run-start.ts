/**
 * Starting a run from MCP: the same command as POST /api/v1/workflows/:id/run (api/commands/start-run.ts, input checked
 * against the workflow's input schema, the run-start rate limit, the concurrent-runs limit), with an idempotency key
 * derived from the JSON-RPC request.
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isId } from '../../db/ids';
import type { JsonObject } from '../../domain/json';
import { startRun, type StartedRun } from '../commands/start-run';
import { BadRequestError, NotFoundError } from '../http/errors';
import { findOperatorKey } from '../middleware/body';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { mcpIdempotencyKey } from './idempotency';

export interface McpRunStart {
  workflowId: string;
  input: JsonObject;
  /** The JSON-RPC request and the tool it called: the idempotency key is derived from them. */
  requestId: RequestId;
  tool: string;
  arguments: JsonObject;
}

export async function startRunFromMcp(deps: ApiDeps, caller: McpCaller, req: McpRunStart): Promise<StartedRun> {
  if (!isId('wf', req.workflowId)) throw new NotFoundError(`workflow ${req.workflowId} not found`);
  // What the HTTP body parser refuses for POST …/run: keys that are MongoDB operators or paths.
  const bad = findOperatorKey(req.input, 'input');
  if (bad) throw new BadRequestError(`${bad}: keys may not start with "$" or contain "." or NUL`, 'invalid_key');
  const idempotencyKey = await mcpIdempotencyKey(deps.db, {
    ownerId: caller.ownerId,
    keyId: caller.keyId,
    requestId: req.requestId,
    tool: req.tool,
    arguments: req.arguments,
  });
  const started = await startRun(deps, {
    ownerId: caller.ownerId,
    workflowId: req.workflowId,
    input: req.input,
    idempotencyKey,
    baseUrl: caller.baseUrl,
    chargeRunStart: caller.chargeRunStart,
  });
  caller.log.info({ run_id: started.run_id, workflow_id: started.workflow_id, via: 'mcp' }, 'run started');
  return started;
}
