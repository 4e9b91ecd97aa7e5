/**
 * Agent template → JSON: `_id` becomes `id`, dates become ISO strings, ownership internals (`owner_id`,
 * `system_key`) stay inside. `templateView` is the response schema in the OpenAPI document, and `presentTemplate`
 * returns exactly that type, so the document and the responses cannot drift apart.
 */
import { z } from 'zod';
import type { TemplateDoc } from '../../db/templates';
import { ACTION_TYPES } from '../../domain/action-types';
import { egressSettings } from '../schemas/egress';
import { mcpToolSelections } from '../schemas/mcp-tools';
import { iso, isoTimestamp, jsonObjectView } from './common';

export const templateView = z
  .strictObject({
    id: z.string().meta({ example: 'tpl_x1Y2z3A4b5C6d7E8' }),
    name: z.string(),
    default_prompt: z.string(),
    default_tools: z.array(z.string()),
    default_tasks: z.array(z.string()),
    tags: z.array(z.string()),
    short_description: z.string().nullable(),
    step_type: z.enum(['agent', 'action']),
    action_type: z.enum(ACTION_TYPES).nullable(),
    model: z.string().nullable().meta({ description: '`provider:model`; null → the configured default.' }),
    config: jsonObjectView.meta({ description: 'Action defaults (validated by the action type) or agent settings.' }),
    max_turns: z.number().int().nullable(),
    output_schema: jsonObjectView.nullable(),
    egress: egressSettings,
    mcp_tools: mcpToolSelections.optional(),
    context_tokens: z
      .number()
      .int()
      .optional()
      .meta({ description: "Tokens of a thread's earlier turns each turn is given (absent: 16000)." }),
    memory_schema: jsonObjectView
      .optional()
      .meta({ description: "JSON Schema of a thread's working memory (absent: threads have none)." }),
    system: z.boolean().meta({ description: 'System templates are seeded, visible to everyone and read-only.' }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'AgentTemplate' });

export type TemplateView = z.infer<typeof templateView>;

export function presentTemplate(doc: TemplateDoc): TemplateView {
  return {
    id: doc._id,
    name: doc.name,
    default_prompt: doc.default_prompt,
    default_tools: doc.default_tools,
    default_tasks: doc.default_tasks,
    tags: doc.tags,
    short_description: doc.short_description,
    step_type: doc.step_type,
    action_type: doc.action_type,
    model: doc.model,
    config: doc.config,
    max_turns: doc.max_turns,
    output_schema: doc.output_schema,
    // Templates stored before the field existed have the defaults.
    egress: doc.egress ?? {},
    ...(doc.mcp_tools?.length ? { mcp_tools: doc.mcp_tools } : {}),
    ...(typeof doc.context_tokens === 'number' ? { context_tokens: doc.context_tokens } : {}),
    ...(doc.memory_schema ? { memory_schema: doc.memory_schema } : {}),
    system: doc.system,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}
