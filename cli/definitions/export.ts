/**
 * `workflows export` / `agents export`: a stored definition as a file `apply` takes back — without the fields the
 * server sets (id, timestamps, `system`), with each step's template by name when it was written by name, and MCP
 * servers by name (./mcp-refs.ts), so the file applies on another deployment.
 */
import { stringify } from 'yaml';
import type { ApiClient } from '../api-client';
import { nameMcpServers } from './mcp-refs';

function withoutServerFields(body: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, created_at: _c, updated_at: _u, system: _s, ...rest } = body;
  return rest;
}

export async function exportWorkflow(api: ApiClient, id: string): Promise<Record<string, unknown>> {
  const answer = api.http.GET('/api/v1/workflows/{id}', { params: { path: { id } } });
  const { data } = await api.unwrap('GET /workflows/…', answer);
  const steps = data.steps.map((step) => {
    if (step.template === undefined) return step;
    const { template_id: _resolved, ...rest } = step;
    return rest;
  });
  const out = await nameMcpServers(api, 'workflow', withoutServerFields({ ...data, steps }));
  if (out.description === null) delete out.description;
  if (Object.keys(data.config).length === 0) delete out.config;
  return out;
}

export async function exportTemplate(api: ApiClient, id: string): Promise<Record<string, unknown>> {
  const answer = api.http.GET('/api/v1/agents/{id}', { params: { path: { id } } });
  return nameMcpServers(api, 'template', withoutServerFields((await api.unwrap('GET /agents/…', answer)).data));
}

/** YAML by default (what a repository keeps), JSON with --json. */
export function formatDefinition(body: Record<string, unknown>, json: boolean): string {
  return json ? JSON.stringify(body, null, 2) : stringify(body, { lineWidth: 0 }).trimEnd();
}
