/**
 * What the agent loop (temporal/workflows/agent-step.ts) and its two activities exchange. Kept small on purpose:
 * messages, tool arguments and tool results live in the `transcripts` collection, not in Temporal payloads.
 */
import type { JsonObject, JsonValue } from '../../../domain/json';
import type { EgressPolicy } from '../../../domain/egress';
import type { McpServerSelection, McpToolDefinition, McpToolShown } from '../../../domain/mcp';
import type { OutputRef } from '../../../domain/run';
import type { ThreadRef } from '../../../domain/thread';

/** Sent with the first model call only: the activity writes it as the transcript's first entries. */
export interface AgentSetup {
  prompt: string;
  tasks: string[];
  tools: string[];
  model: string;
  output_schema: JsonObject | null;
  max_turns: number;
  temperature?: number;
  max_output_tokens?: number;
  /** Absent for runs started before egress policies existed (they get the defaults). */
  egress?: EgressPolicy;
  /** The rendered step input (may hold OutputRefs; the activity resolves them). */
  input: JsonValue;
  /** The MCP tools listed for this step (listMcpTools), shown to the model next to the built-in ones. */
  mcp_tools?: McpToolDefinition[];
  /** Why some MCP tools are missing from that list (a server that could not be listed, a tool over a bound). */
  mcp_problems?: string[];
}

export interface CallModelInput {
  run_id: string;
  step_id: string;
  /** The run's owner, whose daily token budget the call counts against. */
  owner_id: string;
  /** 1-based model call number within the step. */
  turn: number;
  /** The first transcript seq this call may write (the workflow's cursor). */
  seq: number;
  setup?: AgentSetup;
  /** Set on a repair turn: why the previous final answer was rejected (written as a user message first). */
  repair?: string;
  /** The step's attempt limit, so the last failing attempt is recorded as final in the status. */
  max_attempts: number;
  /** HTTP timeout of the provider call, shorter than the activity's start-to-close timeout. */
  timeout_ms: number;
  /** A thread's turn: every call is given the thread's earlier turns, the first opens with the turn's message. */
  thread?: ThreadRef;
}

export interface CallUsage {
  input_tokens: number;
  output_tokens: number;
  /** The provider reported no usage: the counts are estimates (temporal/llm/usage-estimate.ts). */
  estimated?: true;
}

interface CallModelBase {
  /** The workflow's cursor after this call. */
  next_seq: number;
  usage: CallUsage;
}

export type CallModelResult =
  | (CallModelBase & { kind: 'tool_calls'; assistant_seq: number; calls: { id: string; name: string }[] })
  | (CallModelBase & {
      kind: 'final';
      output: JsonValue | OutputRef;
    })
  | (CallModelBase & { kind: 'invalid_output'; problem: string });

export interface CallToolInput {
  run_id: string;
  step_id: string;
  turn: number;
  /** The assistant entry holding the call, and the call's index in it (arguments are read from MongoDB). */
  assistant_seq: number;
  call_index: number;
  /** Where the result is written. */
  seq: number;
  max_attempts: number;
}

export interface CallToolResult {
  /** False when the result handed back to the model is an error (unknown tool, bad arguments, tool failure). */
  ok: boolean;
  truncated: boolean;
}

export interface ListMcpToolsInput {
  run_id: string;
  step_id: string;
  owner_id: string;
  servers: McpServerSelection[];
  egress?: EgressPolicy;
  /** Time limit of each HTTP exchange with a server. */
  timeout_ms: number;
  max_attempts: number;
}

export interface CallMcpToolInput {
  run_id: string;
  step_id: string;
  owner_id: string;
  turn: number;
  assistant_seq: number;
  call_index: number;
  seq: number;
  /** The server's URL as the run's snapshot has it (empty for a stdio server). */
  url: string;
  /** A stdio server's name in MCP_STDIO_SERVERS (the snapshot's McpServerSelection.stdio): launched for the call. */
  stdio?: string;
  tool: McpToolShown;
  egress?: EgressPolicy;
  timeout_ms: number;
  max_attempts: number;
  /** The owner's decision on a call that waited for one (McpToolShown.refused); absent for any other call. */
  decision?: McpCallDecision;
}

/** What the approvals inbox answered for one tool call. */
export interface McpCallDecision {
  approved: boolean;
  /** The deciding user's id. */
  by: string;
  comment: string | null;
}

/** Lists a destructive tool call in the approvals inbox, its arguments read from the transcript. */
export interface RequestMcpApprovalInput {
  run_id: string;
  step_id: string;
  assistant_seq: number;
  call_index: number;
  server_name: string;
  /** The tool's own name on its server. */
  tool: string;
}

/** The call's activity failed for good (timed out, worker lost): the model gets this as the call's error result. */
export interface RecordMcpFailureInput {
  run_id: string;
  step_id: string;
  turn: number;
  assistant_seq: number;
  call_index: number;
  seq: number;
  message: string;
}
