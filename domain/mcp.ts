/**
 * MCP tools of an agent step, as the run carries them: which of the user's MCP servers, and which of their tools
 * (docs/mcp.md). Workflow-safe: types and pure functions only. Credentials are never here: the worker's MCP
 * activities read them from MongoDB by server id.
 */
import type { JsonObject } from './json';

/** Which tools of one server a selection lets through, and which of them wait for a decision. */
export interface McpToolFilter {
  /** Only these tools of the server (absent: all that `allowed_tools` and `exclude` leave). */
  include?: string[];
  /** Never these tools. */
  exclude?: string[];
  /**
   * Destructive tools (annotated `destructiveHint`) this agent may call without asking. Every other destructive tool
   * waits for the owner's decision in the approvals inbox before each call (decision 0410).
   */
  allow_destructive?: string[];
  /** Tools the user marks destructive: each call waits for a decision, whatever the server's annotations say. */
  require_approval?: string[];
}

/**
 * What a template or a workflow step chooses from one MCP server: one of the user's own servers by id, or a local
 * stdio server the operator declared (MCP_STDIO_SERVERS), by name (decision 0420). Users never give a command.
 */
export type McpToolSelection = McpToolFilter &
  ({ server_id: string; stdio?: never } | { stdio: string; server_id?: never });

/** Operator-declared stdio server names: the form of a user's server name. */
export const MCP_STDIO_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** The key a stdio server has in a run (McpServerSelection.server_id, McpToolShown.server_id): never an `mcp_…` id. */
export function stdioServerKey(name: string): string {
  return `stdio:${name}`;
}

/** A selection in a run's snapshot: the server as it was when the run started. */
export interface McpServerSelection extends McpToolFilter {
  /** The user's server id, or stdioServerKey(name) for a stdio server. */
  server_id: string;
  server_name: string;
  /** The Streamable HTTP endpoint; empty for a stdio server. */
  url: string;
  /** The server's own limit (null: every tool it lists). For a stdio server the worker applies its declaration's. */
  allowed_tools: string[] | null;
  /** Set for an operator-declared stdio server: its name in MCP_STDIO_SERVERS, which the worker launches. */
  stdio?: string;
}

/** How a failed call of an MCP tool is treated: retried like any activity, or attempted once. */
export type McpRetryClass = 'retry' | 'once';

/** One MCP tool as the model was shown it (recorded with the step: a replay or a later turn sees the same). */
export interface McpToolShown {
  /** The name the model calls: `<server name>__<tool>`, sanitised (see mcpToolName). */
  name: string;
  server_id: string;
  /** The tool's own name on its server. */
  tool: string;
  /** `retry` for tools annotated readOnlyHint or idempotentHint, else `once`. */
  retry: McpRetryClass;
  /**
   * Destructive (annotated destructiveHint, or in the selection's `require_approval`) and not allowed without asking:
   * each call waits for the owner's decision (decision 0410). Runs recorded before patch `mcp-tool-approval` refused
   * such a call instead; the name stays so their recorded tool lists still read the same.
   */
  refused: boolean;
}

/** A tool shown to the model: what it calls, and what it was told about it. */
export interface McpToolDefinition extends McpToolShown {
  description: string;
  /** The tool's input JSON Schema (an object schema). */
  input_schema: JsonObject;
}

/** What listing the step's MCP tools gave: the tools, and what went wrong per server (logged, in the transcript). */
export interface McpToolList {
  tools: McpToolDefinition[];
  problems: string[];
}

/** Whether a call of `tool` waits for the owner's decision before it is made. */
export function needsApproval(tool: McpToolShown): boolean {
  return tool.refused;
}

/** Providers accept tool names of `^[a-zA-Z0-9_-]{1,64}$` (OpenAI's rule, the strictest of those used). */
export const TOOL_NAME_MAX = 64;
export const MCP_NAME_SEPARATOR = '__';

/** `<server>__<tool>` with every other character replaced by `_`, cut to 64 characters. */
export function mcpToolName(serverName: string, tool: string): string {
  return `${serverName}${MCP_NAME_SEPARATOR}${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, TOOL_NAME_MAX);
}

/** Whether the selection (and the server's own limit) lets `tool` be shown to the model. */
export function isSelected(sel: McpServerSelection, tool: string): boolean {
  if (sel.allowed_tools && !sel.allowed_tools.includes(tool)) return false;
  if (sel.include && !sel.include.includes(tool)) return false;
  return !(sel.exclude ?? []).includes(tool);
}
