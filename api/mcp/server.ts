/**
 * The MCP server of one /mcp request (stateless: a fresh one per request, built for the request's caller; everything
 * it knows lives in MongoDB and Temporal). Protocol handlers are set directly on the SDK's low-level server so that
 * tools/list can page and the tasks are the caller's runs; the SDK's in-memory task store is not used.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { FIXED_TOOL_DEFINITIONS, FIXED_TOOL_NAMES, fixedTool, type ToolCall } from './fixed-tools';
import { errorResult, toolError } from './results';
import { startRunFromMcp } from './run-start';
import { startedAnswer } from './start-answer';
import { cancelTask, getTask, getTaskResult } from './tasks';
import { workflowCursorAfter, workflowIdOfTool, workflowToolNames, workflowToolsPage } from './workflow-tools';
import { z } from 'zod';

const SERVER_INFO = { name: 'stepwise', version: '1.0.0' };

const INSTRUCTIONS =
  'Each workflow tool starts a durable Stepwise run with its arguments as the run input. Runs can take minutes or ' +
  'hours: with task support the call returns a task that is the run (tasks/get, tasks/result, tasks/cancel); ' +
  'otherwise call get_run with the run_id. A run waiting for a human approval reports input_required: answer it ' +
  'with decide_approval.';

export function createMcpServer(deps: ApiDeps, caller: McpCaller): McpServer {
  const mcp = new McpServer(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      // Tasks for tools/call; tasks/list is not offered (list runs through the HTTP API).
      tasks: { cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: INSTRUCTIONS,
  });
  const server = mcp.server;

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const after = workflowCursorAfter(request.params?.cursor);
    const names = await workflowToolNames(deps.db, caller.ownerId, FIXED_TOOL_NAMES);
    const page = await workflowToolsPage(deps.db, caller.ownerId, names, after);
    // The fixed tools open the first page.
    const tools: Tool[] = after === undefined ? [...FIXED_TOOL_DEFINITIONS, ...page.tools] : page.tools;
    return { tools, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const call: ToolCall = { deps, caller, requestId: extra.requestId, asTask: request.params.task !== undefined };
    const name = request.params.name;
    const args = (request.params.arguments ?? {}) as JsonObject;
    try {
      return await callTool(call, name, args);
    } catch (err) {
      if (err instanceof McpError) throw err;
      return errorResult(err, caller.log);
    }
  });

  server.setRequestHandler(GetTaskRequestSchema, (request) => getTask(deps, caller, request.params.taskId));
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) =>
    getTaskResult(deps, caller, request.params.taskId, extra.signal),
  );
  server.setRequestHandler(CancelTaskRequestSchema, (request) => cancelTask(deps, caller, request.params.taskId));
  return mcp;
}

async function callTool(call: ToolCall, name: string, args: JsonObject): Promise<CallToolResult | CreateTaskResult> {
  const fixed = fixedTool(name);
  if (fixed) {
    const parsed = fixed.args.safeParse(args);
    if (!parsed.success) return toolError(`arguments: ${z.prettifyError(parsed.error)}`, { code: 'invalid_arguments' });
    // A client asking a tool without task support for a task is answered as the protocol says: an error.
    if (call.asTask && !('taskSupport' in fixed)) {
      throw new McpError(ErrorCode.InvalidParams, `tool ${name} does not support tasks`);
    }
    // The tool's own argument type: `fixed` is one element of the union, `parsed.data` that element's args.
    return (fixed.run as (a: unknown, c: ToolCall) => Promise<CallToolResult | CreateTaskResult>)(parsed.data, call);
  }
  const names = await workflowToolNames(call.deps.db, call.caller.ownerId, FIXED_TOOL_NAMES);
  const workflowId = workflowIdOfTool(names, name);
  if (!workflowId) return toolError(`unknown tool ${name}: tools/list names the tools`, { code: 'not_found' });
  const started = await startRunFromMcp(call.deps, call.caller, {
    workflowId,
    input: args,
    requestId: call.requestId,
    tool: name,
    arguments: args,
  });
  return startedAnswer(call.deps, call.caller, started, call.asTask);
}
