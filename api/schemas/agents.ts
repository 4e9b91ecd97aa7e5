/**
 * Request schemas of /api/v1/agents (the same objects validate() parses with and the OpenAPI document shows).
 * Shape checks live here; rules that need the registries or the stored template are in agent-rules.ts.
 */
import { z } from 'zod';
import { MODEL_REF_MESSAGE, MODEL_REF_PATTERN } from '../../domain/agent';
import { ACTION_TYPES } from '../../domain/action-types';
import { TOOL_NAMES } from '../../domain/tools/catalog';
import { pageQuery } from '../http/pagination';
import { egressSettings } from './egress';
import { mcpToolSelections } from './mcp-tools';
import { jsonDataObject, jsonSchemaObject } from './json';

export const LIMITS = {
  name: 200,
  promptBytes: 32 * 1024,
  listItems: 50,
  tag: 64,
  task: 2_000,
  shortDescription: 1_000,
  model: 200,
  maxTurns: 50,
} as const;

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const name = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.name)
  .meta({ description: `Display name, ≤ ${LIMITS.name} characters.` });
const defaultPrompt = z
  .string()
  .min(1)
  .refine((s) => utf8Bytes(s) <= LIMITS.promptBytes, { message: `too long (max ${LIMITS.promptBytes / 1024} KiB)` })
  .meta({ description: 'System prompt of an agent (for an action: what the step is for), ≤ 32 KiB of UTF-8.' });
/**
 * A built-in tool's name. The document states the catalog's names (an `enum`); the server's check is
 * agent-rules.ts / check-workflow.ts, whose message names the field and points to GET /api/v1/agents/tools.
 */
export const builtInToolName = z
  .string()
  .min(1)
  .max(64)
  .meta({ enum: [...TOOL_NAMES] });
export const toolNames = z
  .array(builtInToolName)
  .max(LIMITS.listItems)
  .meta({ description: 'Tool names from GET /api/v1/agents/tools (agents only).', example: ['http_fetch'] });
const defaultTasks = z.array(z.string().min(1).max(LIMITS.task)).max(LIMITS.listItems);
const tags = z
  .array(
    z
      .string()
      .min(1)
      .max(LIMITS.tag)
      .regex(/^[\p{L}\p{N}_:-][\p{L}\p{N} _:-]*$/u, 'letters, digits, space, "_", ":" and "-" only'),
  )
  .max(LIMITS.listItems);
const shortDescription = z.string().max(LIMITS.shortDescription).nullable();
const stepType = z.enum(['agent', 'action']).meta({ description: '`agent` (default) or `action`.' });
const actionType = z
  .enum(ACTION_TYPES)
  .nullable()
  .meta({ description: 'Required for, and only for, `step_type: action`.' });
const model = z.string().max(LIMITS.model).regex(MODEL_REF_PATTERN, MODEL_REF_MESSAGE).nullable().meta({
  description: 'Agents only: `openai:…`, `anthropic:…` or `compat:…`; null → LLM_DEFAULT_MODEL.',
  example: 'openai:gpt-4o-mini',
});
const config = jsonDataObject.meta({
  description:
    'Action: defaults checked by the action type (see GET /api/v1/agents/actions); `{{…}}` references allowed. Agent: `temperature`, `max_output_tokens`.',
});
const maxTurns = z
  .number()
  .int()
  .min(1)
  .max(LIMITS.maxTurns)
  .nullable()
  .meta({ description: 'Agents only: turn limit of the agent loop (null → 8).' });
const outputSchema = jsonSchemaObject
  .nullable()
  .meta({ description: 'Agents only: JSON Schema the final answer must satisfy (null → free text).' });

const contextTokens = z
  .number()
  .int()
  .min(256)
  .max(1_000_000)
  .nullable()
  .meta({
    description:
      "Agents only: how many tokens of a thread's earlier turns each turn's model call is given (null → 16000; " +
      'docs/threads.md).',
  });

const memorySchema = jsonSchemaObject.nullable().meta({
  description:
    "Agents only: JSON Schema of a thread's working memory (null/absent → threads have none; docs/threads.md). " +
    'Threads created from the template take it, start with its defaults and get the `update_memory` tool.',
});

const fields = {
  name,
  default_prompt: defaultPrompt,
  default_tools: toolNames,
  default_tasks: defaultTasks,
  tags,
  short_description: shortDescription,
  step_type: stepType,
  action_type: actionType,
  model,
  config,
  max_turns: maxTurns,
  output_schema: outputSchema,
  egress: egressSettings,
  mcp_tools: mcpToolSelections,
  context_tokens: contextTokens,
  memory_schema: memorySchema,
};

/** POST /api/v1/agents. */
export const createTemplateBody = z
  .strictObject({
    name: fields.name,
    default_prompt: fields.default_prompt,
    default_tools: fields.default_tools.default([]),
    default_tasks: fields.default_tasks.default([]),
    tags: fields.tags.default([]),
    short_description: fields.short_description.default(null),
    step_type: fields.step_type.default('agent'),
    action_type: fields.action_type.default(null),
    model: fields.model.default(null),
    config: fields.config.default({}),
    max_turns: fields.max_turns.default(null),
    output_schema: fields.output_schema.default(null),
    egress: fields.egress.default({}),
    mcp_tools: fields.mcp_tools.optional(),
    context_tokens: fields.context_tokens.optional(),
    memory_schema: fields.memory_schema.optional(),
  })
  // agent-rules.ts's step_type rule on action_type, as the document states it (step_type defaults to `agent`):
  // `not` of the two ways to break it, so a generated client keeps one object type.
  .meta({
    id: 'CreateAgentTemplate',
    not: {
      anyOf: [
        { required: ['action_type'], properties: { step_type: { const: 'agent' }, action_type: { type: 'string' } } },
        { required: ['step_type'], properties: { step_type: { const: 'action' }, action_type: { type: 'null' } } },
      ],
    },
  });

/** PATCH /api/v1/agents/:id: any subset of the fields (null clears a nullable one); at least one. */
export const updateTemplateBody = z
  .strictObject({
    name: fields.name.optional(),
    default_prompt: fields.default_prompt.optional(),
    default_tools: fields.default_tools.optional(),
    default_tasks: fields.default_tasks.optional(),
    tags: fields.tags.optional(),
    short_description: fields.short_description.optional(),
    step_type: fields.step_type.optional(),
    action_type: fields.action_type.optional(),
    model: fields.model.optional(),
    config: fields.config.optional(),
    max_turns: fields.max_turns.optional(),
    output_schema: fields.output_schema.optional(),
    egress: fields.egress.optional(),
    mcp_tools: fields.mcp_tools.optional(),
    context_tokens: fields.context_tokens.optional(),
    memory_schema: fields.memory_schema.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  // The refinement above, and the step_type rule on action_type where the change names both (the rest is checked
  // merged with the stored template, agent-rules.ts), as the document states them.
  .meta({
    id: 'UpdateAgentTemplate',
    minProperties: 1,
    not: {
      required: ['step_type', 'action_type'],
      anyOf: [
        { properties: { step_type: { const: 'agent' }, action_type: { type: 'string' } } },
        { properties: { step_type: { const: 'action' }, action_type: { type: 'null' } } },
      ],
    },
  });

/** GET /api/v1/agents. */
export const listTemplatesQuery = pageQuery.extend({
  tag: z.string().min(1).max(LIMITS.tag).optional().meta({ description: 'Only templates carrying this tag.' }),
  step_type: stepType.optional().meta({ description: 'Only `agent` or only `action` templates.' }),
});

/** `:id` of /api/v1/agents/:id. Any string: an ill-formed id is answered like an unknown one (404). */
export const templateIdParams = z.strictObject({
  id: z.string().meta({ description: 'Template id (`tpl_…`).', example: 'tpl_x1Y2z3A4b5C6d7E8' }),
});

/** Agent settings allowed in `config` of an agent template. */
export const agentConfig = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  max_output_tokens: z.number().int().min(1).max(200_000).optional(),
});

/** GET /api/v1/agents/tools items. */
export const toolView = z
  .strictObject({
    name: z.enum(TOOL_NAMES),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()).meta({ description: 'JSON Schema (2020-12) of the tool input.' }),
  })
  .meta({ id: 'Tool' });

/** GET /api/v1/agents/actions items. */
export const actionView = z
  .strictObject({
    name: z.enum(ACTION_TYPES),
    description: z.string(),
    config_schema: z
      .record(z.string(), z.unknown())
      .meta({ description: 'JSON Schema (2020-12) of the action config.' }),
  })
  .meta({ id: 'ActionType' });
