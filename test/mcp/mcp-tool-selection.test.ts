/**
 * `mcp_tools` on agent templates and agent steps, through the real API and database: a selection of one's own server
 * is stored and shown; another user's or an unknown server is a 400 naming the field; action templates and steps refuse
 * it; the run's snapshot carries the server's id, name, URL and the selection — never its credentials — and a server
 * deleted since the workflow was written stops the start.
 */
import { mcpServersCollection } from '../../db/mcp-servers';
import { findWorkflow } from '../../db/workflows';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import { buildSnapshot } from '../../shared/runs/snapshot';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate } from '../helpers/workflows';

const TOKEN = 'sel-token-0b5e77';

describe('MCP tool selection on templates and steps', () => {
  let api: TestApi;
  let user: TestUser;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    api = await startTestApi();
    user = await createTestUser(api.database.db);
    other = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const server = async (who: TestUser) => {
    const res = await api.http
      .post('/api/v1/mcp-servers')
      .set(who.auth)
      .send({ name: uniqueId('s'), url: 'https://mcp.example.com/mcp', auth: { type: 'bearer', token: TOKEN } });
    return (res.body as { data: { id: string; name: string } }).data;
  };
  const agent = (body: Record<string, unknown>) =>
    api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: uniqueId('agent '), default_prompt: 'Help.', ...body });

  it('stores a selection of an own server on a template; refuses others’, unknown ones and action templates', async () => {
    const mine = await server(user);
    const theirs = await server(other);
    const ok = await agent({ mcp_tools: [{ server_id: mine.id, include: ['echo'], allow_destructive: [] }] });
    oas.check(ok);
    expect(ok.status).toBe(201);
    expect(ok.body.data.mcp_tools).toEqual([{ server_id: mine.id, include: ['echo'], allow_destructive: [] }]);

    for (const id of [theirs.id, 'mcp_unknown000000', 'not-an-id']) {
      const res = await agent({ mcp_tools: [{ server_id: id }] });
      oas.check(res);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`mcp_tools[0].server_id: unknown MCP server "${id}" (see GET /api/v1/mcp-servers)`);
    }
    const twice = await agent({ mcp_tools: [{ server_id: mine.id }, { server_id: mine.id }] });
    expect(twice.status).toBe(400);
    const action = await agent({
      step_type: 'action',
      action_type: 'delay',
      config: { seconds: 1 },
      mcp_tools: [{ server_id: mine.id }],
    });
    expect(action.status).toBe(400);
    expect(action.body.error).toContain('mcp_tools: only allowed when step_type is "agent"');

    const patch = await api.http
      .patch(`/api/v1/agents/${ok.body.data.id}`)
      .set(user.auth)
      .send({ mcp_tools: [{ server_id: theirs.id }] });
    expect(patch.status).toBe(400);
    expect(patch.body.error).toContain('mcp_tools[0].server_id');
  });

  it('checks step overrides; the snapshot carries id, name, URL and selection but no credentials', async () => {
    const mine = await server(user);
    const theirs = await server(other);
    const template = await insertTemplate(api.database.db, user.id, { step_type: 'agent' });
    const bad = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({ name: 'w', steps: [{ id: 'ask', template_id: template._id, mcp_tools: [{ server_id: theirs.id }] }] });
    oas.check(bad);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain(`steps[0] (ask).mcp_tools[0].server_id: unknown MCP server "${theirs.id}"`);

    const wfId = await createWorkflow(api, user, {
      name: 'w',
      steps: [{ id: 'ask', template_id: template._id, mcp_tools: [{ server_id: mine.id, exclude: ['rm'] }] }],
    });
    const workflow = (await findWorkflow(api.database.db, user.id, wfId))!;
    const loaded = await loadSnapshotSources(api.database.db, user.id, workflow, 3);
    if (!loaded.ok) throw new Error(loaded.problem);
    const snapshot = buildSnapshot({
      runId: 'run_test',
      workflow,
      sources: loaded.sources,
      input: {},
      config: api.config,
      now: new Date(),
    });
    const step = snapshot.steps[0];
    expect(step?.kind === 'agent' && step.mcp_tools).toEqual([
      {
        server_id: mine.id,
        exclude: ['rm'],
        server_name: mine.name,
        url: 'https://mcp.example.com/mcp',
        allowed_tools: null,
      },
    ]);
    expect(JSON.stringify(snapshot)).not.toContain(TOKEN);
    expect(JSON.stringify(snapshot)).not.toContain('credentials');

    // A server a definition names is not deleted (409, naming it); one gone anyway (a definition written between
    // the check and the delete) fails the start, as a deleted template does.
    const refused = await api.http.delete(`/api/v1/mcp-servers/${mine.id}`).set(user.auth);
    expect(refused.status).toBe(409);
    await mcpServersCollection(api.database.db).deleteOne({ _id: mine.id });
    const start = await api.http.post(`/api/v1/workflows/${wfId}/run`).set(user.auth).send({});
    // As for a template deleted since the write: the definition no longer runs.
    expect(start.status).toBe(422);
    expect(start.body.error).toContain(`uses MCP server ${mine.id}, which no longer exists`);
  });
});
