/**
 * Each of the caller's workflows as an MCP tool: the name from the workflow's name (./tool-names.ts), the description
 * from its description, `inputSchema` from `config.input_schema` (an open object when it has none). A workflow with
 * `config.mcp.listed: false` is left out (and is not callable by a tool name; `start_run` still starts it by id).
 * Names are assigned over all listed workflows, so a page's names agree with every other page's.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { findWorkflows, workflowsCollection, type WorkflowDoc } from '../../db/workflows';
import { decodeCursor, encodeCursor } from './cursor';
import { assignToolNames } from './tool-names';

/** Workflows per tools/list page: enough to be useful, few enough that a client's context is not flooded. */
export const WORKFLOW_TOOLS_PER_PAGE = 50;

/** The listed workflows' tool names, by workflow id, ordered by id (the paging order). */
export async function workflowToolNames(
  db: Db,
  ownerId: string,
  reserved: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const docs = await workflowsCollection(db)
    .find(
      { owner_id: ownerId, 'config.mcp.listed': { $ne: false } },
      { projection: { _id: 1, name: 1, created_at: 1 } },
    )
    .toArray();
  const names = assignToolNames(
    docs.map((d) => ({ id: d._id, name: d.name, created_at: d.created_at })),
    reserved,
  );
  return new Map([...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The position in a tools/list or list_workflows cursor: the last workflow id of the previous page. */
const workflowCursor = z.strictObject({ after: z.string() });

/** The workflow id a tools/list or list_workflows cursor continues after; undefined for the first page. */
export function workflowCursorAfter(cursor: string | undefined): string | undefined {
  return cursor ? decodeCursor(cursor, workflowCursor).after : undefined;
}

/** One page of the listed workflow ids after `afterId` (exclusive), and the next page's cursor when more follow. */
export function workflowIdsPage(
  names: Map<string, string>,
  afterId: string | undefined,
): { ids: string[]; nextCursor: string | undefined } {
  const ids = [...names.keys()].filter((id) => afterId === undefined || id > afterId);
  const page = ids.slice(0, WORKFLOW_TOOLS_PER_PAGE);
  const last = page[page.length - 1];
  return {
    ids: page,
    nextCursor: ids.length > page.length && last !== undefined ? encodeCursor({ after: last }) : undefined,
  };
}

/** The tools of the listed workflows after `afterId` (exclusive), one page, and the next page's cursor. */
export async function workflowToolsPage(
  db: Db,
  ownerId: string,
  names: Map<string, string>,
  afterId: string | undefined,
): Promise<{ tools: Tool[]; nextCursor: string | undefined }> {
  const page = workflowIdsPage(names, afterId);
  const docs = new Map((await findWorkflows(db, ownerId, page.ids)).map((d) => [d._id, d]));
  const tools: Tool[] = [];
  for (const id of page.ids) {
    const doc = docs.get(id);
    const name = names.get(id);
    // Deleted between the two reads: left out of this page.
    if (doc && name) tools.push(workflowTool(doc, name));
  }
  return { tools, nextCursor: page.nextCursor };
}

export function workflowTool(doc: WorkflowDoc, name: string): Tool {
  const about = doc.description?.trim() || `Runs the Stepwise workflow "${doc.name}".`;
  return {
    name,
    title: doc.name,
    description:
      `${about}\n\nStarts a durable run of workflow ${doc._id} with the arguments as its input. With task support ` +
      'the call returns a task that is the run; otherwise it returns the run id at once: follow it with get_run.',
    inputSchema: inputSchemaOf(doc),
    execution: { taskSupport: 'optional' },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    _meta: { 'io.stepwise/workflow_id': doc._id },
  };
}

/** MCP requires an object schema: the workflow's own when it is one, an open object otherwise. */
function inputSchemaOf(doc: WorkflowDoc): Tool['inputSchema'] {
  const schema = doc.config.input_schema;
  if (!schema) return { type: 'object', additionalProperties: true };
  if (schema.type === undefined) return { ...schema, type: 'object' };
  if (schema.type === 'object') return schema as Tool['inputSchema'];
  // A run input is always an object; a schema of another type admits no input, so the server's check decides.
  return { type: 'object', additionalProperties: true };
}

/** The workflow a tool name stands for (a listed one of the caller's), or undefined. */
export function workflowIdOfTool(names: Map<string, string>, toolName: string): string | undefined {
  for (const [id, name] of names) if (name === toolName) return id;
  return undefined;
}
