/**
 * Rules of a template that a shape schema cannot express: they need the tool and action registries, or the whole
 * template (PATCH checks the stored template merged with the change). Each problem names its field.
 */
import type { TemplateContent } from '../../db/templates';
import type { JsonObject } from '../../domain/json';
import { isActionType, validateActionConfig } from '../../domain/actions/catalog';
import { describeSchemaProblems } from '../../domain/user-schema';
import { isToolName } from '../../domain/tools/catalog';
import { describeIssue } from '../middleware/validate';
import { agentConfig } from './agents';

/** Every rule violation of `t`, as `field: message` strings (empty when the template is valid). */
export function templateRuleProblems(t: TemplateContent): string[] {
  const problems: string[] = [];
  const duplicates = duplicateIndexes(t.default_tools);
  for (const [i, tool] of t.default_tools.entries()) {
    if (!isToolName(tool)) problems.push(`default_tools[${i}]: unknown tool "${tool}" (see GET /api/v1/agents/tools)`);
    else if (duplicates.has(i)) problems.push(`default_tools[${i}]: duplicate tool "${tool}"`);
  }
  switch (t.step_type) {
    case 'agent':
      if (t.action_type !== null) problems.push('action_type: only allowed when step_type is "action"');
      problems.push(...agentConfigProblems(t.config));
      if (t.output_schema !== null) problems.push(...outputSchemaProblems(t.output_schema));
      if (t.memory_schema) problems.push(...describeSchemaProblems(t.memory_schema, 'memory_schema'));
      break;
    case 'action':
      if (t.action_type === null) {
        problems.push('action_type: required when step_type is "action" (see GET /api/v1/agents/actions)');
      } else if (!isActionType(t.action_type)) {
        problems.push(`action_type: unknown action type "${String(t.action_type)}"`);
      } else {
        const checked = validateActionConfig(t.action_type, t.config, 'template');
        if (!checked.ok) {
          for (const issue of checked.issues)
            problems.push(`${issue.path ? `config.${issue.path}` : 'config'}: ${issue.message}`);
        }
      }
      if (t.default_tools.length > 0) problems.push('default_tools: only allowed when step_type is "agent"');
      if (t.model !== null) problems.push('model: only allowed when step_type is "agent"');
      if (t.max_turns !== null) problems.push('max_turns: only allowed when step_type is "agent"');
      if (t.output_schema !== null) problems.push('output_schema: only allowed when step_type is "agent"');
      if (t.egress && Object.keys(t.egress).length > 0) problems.push('egress: only allowed when step_type is "agent"');
      if (t.mcp_tools?.length) problems.push('mcp_tools: only allowed when step_type is "agent"');
      if (t.memory_schema) problems.push('memory_schema: only allowed when step_type is "agent"');
      break;
  }
  return problems;
}

function duplicateIndexes(items: readonly string[]): Set<number> {
  const seen = new Set<string>();
  const dup = new Set<number>();
  items.forEach((item, i) => {
    if (seen.has(item)) dup.add(i);
    seen.add(item);
  });
  return dup;
}

function agentConfigProblems(config: unknown): string[] {
  const parsed = agentConfig.safeParse(config, { reportInput: true });
  return parsed.success ? [] : parsed.error.issues.flatMap((issue) => describeIssue(issue, 'config'));
}

/** The schema must compile with the compiler the agent loop checks final answers with (JSON Schema 2020-12). */
function outputSchemaProblems(schema: Record<string, unknown>): string[] {
  return describeSchemaProblems(schema as JsonObject, 'output_schema');
}
