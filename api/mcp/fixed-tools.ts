/**
 * The fixed tools beside the workflow tools: list workflows, start a run, read a run, list and decide approvals, cancel
 * a run, send a message to a thread and read a turn's reply (./threads.ts). Each is `{name, description, args (zod: the source of its inputSchema), run}` and calls the same command as
 * its HTTP route, scoped to the caller.
 */
import type { CallToolResult, CreateTaskResult, RequestId, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { approvalsCollection, type ApprovalDoc } from '../../db/approvals';
import { isId } from '../../db/ids';
import { workflowsCollection } from '../../db/workflows';
import type { JsonObject } from '../../domain/json';
import { approveStep, cancelRun } from '../commands/run-control';
import { postMessage } from '../commands/threads/post-message';
import { createThread } from '../commands/threads/thread-control';
import { MAX_THREAD_MESSAGE_BYTES } from '../../domain/thread';
import { NotFoundError } from '../http/errors';
import { presentApproval } from '../presenters/approval';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { decodeCursor, encodeCursor } from './cursor';
import { jsonResult } from './results';
import { readRun, runSummary } from './runs';
import { startRunFromMcp } from './run-start';
import { startedAnswer } from './start-answer';
import { ownThreadId, turnAnswer } from './threads';
import { WORKFLOW_TOOLS_PER_PAGE, workflowCursorAfter, workflowIdsPage, workflowToolNames } from './workflow-tools';

export interface ToolCall {
  deps: ApiDeps;
  caller: McpCaller;
  requestId: RequestId;
  /** The client asked for a task (`params.task`); only tools with task support are given one. */
  asTask: boolean;
}

interface FixedTool<A extends z.ZodType> {
  name: string;
  description: string;
  args: A;
  taskSupport?: 'optional';
  readOnly: boolean;
  run(args: z.infer<A>, call: ToolCall): Promise<CallToolResult | CreateTaskResult>;
}

const define = <A extends z.ZodType>(tool: FixedTool<A>) => tool;

const runId = z.string().min(1).max(600).meta({ description: 'The run id (`run_…`).' });
const cursor = z.string().min(1).max(500).optional().meta({ description: 'next_cursor of the previous page.' });
const jsonInput = z.record(z.string(), z.unknown());

const approvalCursor = z.strictObject({ t: z.string(), id: z.string() });

const listWorkflows = define({
  name: 'list_workflows',
  description:
    'Lists your workflows listed for MCP (50 a page): id, name, description, the tool that runs each, and its input ' +
    'schema.',
  args: z.strictObject({ cursor }),
  readOnly: true,
  async run(args, { deps, caller }) {
    const names = await workflowToolNames(deps.db, caller.ownerId, FIXED_TOOL_NAMES);
    const page = workflowIdsPage(names, workflowCursorAfter(args.cursor));
    const docs = await workflowsCollection(deps.db)
      .find({ _id: { $in: page.ids }, owner_id: caller.ownerId }, { projection: { steps: 0 } })
      .sort({ _id: 1 })
      .toArray();
    return jsonResult({
      workflows: docs.map((d) => ({
        id: d._id,
        name: d.name,
        description: d.description,
        tool: names.get(d._id) ?? null,
        has_input_schema: d.config.input_schema !== undefined,
      })),
      next_cursor: page.nextCursor ?? null,
    });
  },
});

const startRunTool = define({
  name: 'start_run',
  description:
    'Starts a run of one of your workflows by id, with `input` checked against its input schema. With task support ' +
    'it returns a task that is the run; otherwise the run id at once (follow it with get_run).',
  args: z.strictObject({
    workflow_id: z.string().min(1).max(100).meta({ description: 'The workflow id (`wf_…`).' }),
    input: jsonInput.optional().meta({ description: 'The run input (default `{}`).' }),
  }),
  taskSupport: 'optional',
  readOnly: false,
  async run(args, call) {
    const started = await startRunFromMcp(call.deps, call.caller, {
      workflowId: args.workflow_id,
      input: (args.input ?? {}) as JsonObject,
      requestId: call.requestId,
      tool: 'start_run',
      arguments: args as JsonObject,
    });
    return startedAnswer(call.deps, call.caller, started, call.asTask);
  },
});

const getRun = define({
  name: 'get_run',
  description:
    "A run's status (queued, running, waiting, completed, failed, cancelled, timed_out), its outputs, its error, " +
    'and the approvals it waits for.',
  args: z.strictObject({ run_id: runId }),
  readOnly: true,
  async run(args, { deps, caller }) {
    return jsonResult(runSummary(await readRun(deps, caller, runIdOr404(args.run_id))));
  },
});

const listApprovals = define({
  name: 'list_approvals',
  description: 'Approval steps waiting for your decision across all your runs, the oldest first (50 a page).',
  args: z.strictObject({ cursor }),
  readOnly: true,
  async run(args, { deps, caller }) {
    const from = args.cursor ? decodeCursor(args.cursor, approvalCursor) : undefined;
    const after = from
      ? { $or: [{ created_at: { $gt: new Date(from.t) } }, { created_at: new Date(from.t), _id: { $gt: from.id } }] }
      : {};
    const docs = await approvalsCollection(deps.db)
      .find({ owner_id: caller.ownerId, ...after })
      .sort({ created_at: 1, _id: 1 })
      .limit(WORKFLOW_TOOLS_PER_PAGE + 1)
      .toArray();
    const page = docs.slice(0, WORKFLOW_TOOLS_PER_PAGE);
    const last: ApprovalDoc | undefined = page[page.length - 1];
    return jsonResult({
      approvals: page.map((doc) => presentApproval(doc, caller.baseUrl)),
      next_cursor:
        docs.length > page.length && last ? encodeCursor({ t: last.created_at.toISOString(), id: last._id }) : null,
    });
  },
});

const decideApproval = define({
  name: 'decide_approval',
  description:
    'Approves or rejects what a run waits for — an approval step, or an agent step before a destructive MCP tool ' +
    'call (list_approvals or get_run name them).',
  args: z.strictObject({
    run_id: runId,
    step_id: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'The step id, or `step[i]` / `step#n` inside a map or loop.' }),
    approved: z.boolean(),
    comment: z.string().max(2_000).optional(),
  }),
  readOnly: false,
  async run(args, { deps, caller }) {
    const decided = await approveStep(deps, {
      ownerId: caller.ownerId,
      runId: runIdOr404(args.run_id),
      stepId: args.step_id,
      approved: args.approved,
      comment: args.comment ?? null,
    });
    return jsonResult({ run_id: args.run_id, ...decided });
  },
});

const cancelRunTool = define({
  name: 'cancel_run',
  description: 'Cancels a run that has not ended; the run records `cancelled` as it stops.',
  args: z.strictObject({ run_id: runId }),
  readOnly: false,
  async run(args, { deps, caller }) {
    const { run_id } = await cancelRun(deps, caller.ownerId, runIdOr404(args.run_id));
    return jsonResult({ run_id, cancel_requested: true });
  },
});

const threadId = z.string().min(1).max(100).meta({ description: 'The thread id (`thr_…`).' });
const waitSeconds = z
  .number()
  .int()
  .min(0)
  .max(60)
  .optional()
  .meta({ description: 'How long to wait for the reply, in seconds (default 50): after it the turn goes on.' });
const DEFAULT_WAIT_SECONDS = 50;

const sendThreadMessage = define({
  name: 'send_thread_message',
  description:
    "Sends a message to one of your threads (a conversation with an agent) and answers with the agent's reply and " +
    'the thread id. Without thread_id it starts a new thread on `template`. A turn that waits for your approval of a ' +
    'tool call answers `input_required` naming it (decide it with decide_approval, then call get_thread_turn); one ' +
    'still running after wait_seconds answers `working`.',
  args: z
    .strictObject({
      thread_id: threadId.optional(),
      template: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .meta({ description: 'For a new thread: the agent template, its id (`tpl_…`) or its name.' }),
      title: z.string().min(1).max(200).optional().meta({ description: 'For a new thread: its title.' }),
      text: z
        .string()
        .min(1)
        .max(MAX_THREAD_MESSAGE_BYTES)
        .refine((t) => t.trim().length > 0, 'must not be blank')
        .meta({ description: `Your message (at most ${MAX_THREAD_MESSAGE_BYTES} UTF-8 bytes).` }),
      wait_seconds: waitSeconds,
    })
    .refine((a) => (a.thread_id === undefined) !== (a.template === undefined), {
      message: 'give thread_id (an existing thread) or template (a new thread), not both',
    }),
  readOnly: false,
  async run(args, { deps, caller }) {
    const id =
      args.thread_id !== undefined
        ? await ownThreadId(deps, caller, args.thread_id)
        : (
            await createThread(deps, {
              ownerId: caller.ownerId,
              template: args.template ?? '',
              title: args.title ?? null,
              metadata: {},
              overrides: {},
            })
          )._id;
    const accepted = await postMessage(deps, {
      ownerId: caller.ownerId,
      threadId: id,
      text: args.text,
      after: undefined,
      policy: undefined,
      idempotencyKey: undefined,
      waitSeconds: 0,
      charge: caller.chargeRunStart,
    });
    caller.log.info({ thread_id: id, turn: accepted.turn, run_id: accepted.run_id, via: 'mcp' }, 'thread message');
    return turnAnswer(deps, caller, id, accepted.turn, args.wait_seconds ?? DEFAULT_WAIT_SECONDS);
  },
});

const getThreadTurn = define({
  name: 'get_thread_turn',
  description:
    'A turn of one of your threads: its reply once it completed, `input_required` while it waits for your approval, ' +
    '`working` while it runs (after waiting up to wait_seconds for it to end).',
  args: z.strictObject({
    thread_id: threadId,
    turn: z.number().int().min(1).max(999_999_999).meta({ description: 'The turn (send_thread_message names it).' }),
    wait_seconds: waitSeconds,
  }),
  readOnly: true,
  async run(args, { deps, caller }) {
    const id = await ownThreadId(deps, caller, args.thread_id);
    return turnAnswer(deps, caller, id, args.turn, args.wait_seconds ?? DEFAULT_WAIT_SECONDS);
  },
});

function runIdOr404(id: string): string {
  if (!isId('run', id)) throw new NotFoundError(`run ${id} not found`);
  return id;
}

export const FIXED_TOOLS = [
  listWorkflows,
  startRunTool,
  getRun,
  listApprovals,
  decideApproval,
  cancelRunTool,
  sendThreadMessage,
  getThreadTurn,
] as const;
export type AnyFixedTool = (typeof FIXED_TOOLS)[number];

export const FIXED_TOOL_NAMES: ReadonlySet<string> = new Set(FIXED_TOOLS.map((t) => t.name));

export function fixedTool(name: string): AnyFixedTool | undefined {
  return FIXED_TOOLS.find((t) => t.name === name);
}

/** The tools/list entries of the fixed tools (their input schemas from the zod arguments). */
export const FIXED_TOOL_DEFINITIONS: Tool[] = FIXED_TOOLS.map((t) => ({
  name: t.name,
  description: t.description,
  inputSchema: z.toJSONSchema(t.args, { io: 'input' }) as Tool['inputSchema'],
  ...('taskSupport' in t && t.taskSupport ? { execution: { taskSupport: t.taskSupport } } : {}),
  annotations: { readOnlyHint: t.readOnly, openWorldHint: false },
}));
