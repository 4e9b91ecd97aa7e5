/** The `/api/v1/agents` routes and the template lifecycle, every response checked against the OpenAPI document. */
import { SYSTEM_TEMPLATES } from '../../../db/system-templates';
import { TOOLS } from '../../../temporal/tools/registry';
import { ACTION_TYPES } from '../../../temporal/actions/types';
import { actionBody, agentBody, expectEnvelope, expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

let api: TestApi;
let user: TestUser;
const oas = openApiChecker();

beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.database.db);
});
afterAll(() => api?.close());

const get = async (path: string, auth = true) => {
  const res = auth ? await api.http.get(path).set(user.auth) : await api.http.get(path);
  oas.check(res);
  return res;
};
const post = async (body: unknown) => {
  const res = await api.http
    .post('/api/v1/agents')
    .set(user.auth)
    .send(body as object);
  oas.check(res);
  return res;
};
const patch = async (id: string, body: unknown) => {
  const res = await api.http
    .patch(`/api/v1/agents/${id}`)
    .set(user.auth)
    .send(body as object);
  oas.check(res);
  return res;
};
const del = async (id: string) => {
  const res = await api.http.delete(`/api/v1/agents/${id}`).set(user.auth);
  oas.check(res);
  return res;
};

describe('GET /api/v1/agents/tools and /actions (public)', () => {
  it('lists every registered tool with a JSON Schema of its parameters, without a key', async () => {
    const res = await get('/api/v1/agents/tools', false);
    expect(res.status).toBe(200);
    expectEnvelope(res, true);
    const names = (res.body.data as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(TOOLS.map((t) => t.name));
    expect(names).toEqual(
      expect.arrayContaining(['http_fetch', 'calculator', 'current_time', 'send_email', 'json_transform']),
    );
    for (const tool of res.body.data) {
      expect(tool.description.length).toBeGreaterThan(10);
      expect(tool.parameters.type).toBe('object');
      expect(tool.parameters.$schema).toBeUndefined();
    }
  });

  it('lists every action type with its config schema', async () => {
    const res = await get('/api/v1/agents/actions', false);
    expect(res.status).toBe(200);
    expect((res.body.data as { name: string }[]).map((a) => a.name).sort()).toEqual([...ACTION_TYPES].sort());
    const email = res.body.data.find((a: { name: string }) => a.name === 'send_email');
    expect(email.config_schema.properties).toHaveProperty('subject');
  });

  it('never takes "tools" or "actions" as an id, even with a key', async () => {
    const res = await get('/api/v1/agents/tools');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.data)).toBe(true);
  });
});

describe('system templates', () => {
  it('are listed for every user, read-only, with at least one per action type and three agents', async () => {
    const res = await get('/api/v1/agents?limit=200');
    expect(res.status).toBe(200);
    const system = (res.body.data as { system: boolean; step_type: string; action_type: string | null }[]).filter(
      (t) => t.system,
    );
    expect(system).toHaveLength(SYSTEM_TEMPLATES.length);
    for (const type of ACTION_TYPES) expect(system.some((t) => t.action_type === type)).toBe(true);
    expect(system.filter((t) => t.step_type === 'agent').length).toBeGreaterThanOrEqual(3);
    expect(res.body.data[0]).not.toHaveProperty('owner_id');
    expect(res.body.data[0]).not.toHaveProperty('system_key');
  });

  it('refuse PATCH and DELETE with 403 and a clear message, and stay unchanged', async () => {
    const list = await get('/api/v1/agents?step_type=agent');
    const sys = list.body.data.find((t: { system: boolean }) => t.system);
    expectError(await patch(sys.id, { name: 'mine now' }), 403, 'system template', 'read-only');
    expectError(await del(sys.id), 403, 'read-only');
    const again = await get(`/api/v1/agents/${sys.id}`);
    expect(again.body.data.name).toBe(sys.name);
  });
});

describe('create, read, change, delete', () => {
  it('creates an agent template with defaults and returns 201 with the stored template', async () => {
    const res = await post(
      agentBody({
        name: '  Researcher  ',
        default_tools: ['http_fetch'],
        tags: ['web'],
        model: 'anthropic:claude-3-5-haiku-latest',
        max_turns: 5,
      }),
    );
    expect(res.status).toBe(201);
    expectEnvelope(res, true);
    const t = res.body.data;
    expect(t.id).toMatch(/^tpl_/);
    expect(res.headers.location).toBe(`/api/v1/agents/${t.id}`);
    expect(t).toMatchObject({
      name: 'Researcher',
      default_prompt: 'You help.',
      default_tools: ['http_fetch'],
      default_tasks: [],
      tags: ['web'],
      short_description: null,
      step_type: 'agent',
      action_type: null,
      model: 'anthropic:claude-3-5-haiku-latest',
      config: {},
      max_turns: 5,
      output_schema: null,
      system: false,
    });
    expect(new Date(t.created_at).toISOString()).toBe(t.created_at);
    const stored = await api.database.db.collection('agent_templates').findOne({ _id: t.id });
    expect(stored).toMatchObject({ owner_id: user.id, system: false, name: 'Researcher' });
    const read = await get(`/api/v1/agents/${t.id}`);
    expect(read.status).toBe(200);
    // The write's warning (no ANTHROPIC_API_KEY here) describes the configuration then; it is not stored.
    const { warnings, ...written } = t as { warnings?: { code: string }[] };
    expect(warnings?.map((w) => w.code)).toEqual(['model_provider_not_configured']);
    expect(read.body.data).toEqual(written);
  });

  it('creates an action template whose config holds {{…}} references', async () => {
    const res = await post(actionBody());
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      step_type: 'action',
      action_type: 'send_email',
      config: { text: '{{steps.summarize.output}}' },
    });
  });

  it('accepts an output_schema that compiles', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const res = await post(agentBody({ output_schema: schema, config: { temperature: 0.2 } }));
    expect(res.status).toBe(201);
    expect(res.body.data.output_schema).toEqual(schema);
  });

  it('changes only the given fields, and null clears a nullable one', async () => {
    const created = (await post(agentBody({ short_description: 'first', tags: ['a'] }))).body.data;
    const res = await patch(created.id, { short_description: null, default_tasks: ['do it'] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: created.name,
      short_description: null,
      default_tasks: ['do it'],
      tags: ['a'],
    });
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect(res.body.data.created_at).toBe(created.created_at);
  });

  it('checks the rules on the stored template merged with the change', async () => {
    const created = (await post(agentBody({ model: 'openai:gpt-4o-mini' }))).body.data;
    expectError(await patch(created.id, { step_type: 'action' }), 400, 'action_type: required', 'model: only allowed');
    const ok = await patch(created.id, {
      step_type: 'action',
      action_type: 'delay',
      model: null,
      config: { seconds: 5 },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ step_type: 'action', action_type: 'delay', config: { seconds: 5 } });
    expectError(await patch(created.id, { config: { seconds: 'soon' } }), 400, 'config.seconds');
  });

  it('refuses an empty PATCH', async () => {
    const created = (await post(agentBody())).body.data;
    expectError(await patch(created.id, {}), 400, 'at least one field');
  });

  it('deletes one of your own templates; it is then 404 everywhere', async () => {
    const created = (await post(agentBody())).body.data;
    const res = await del(created.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: created.id, deleted: true });
    expectError(await get(`/api/v1/agents/${created.id}`), 404);
    expectError(await patch(created.id, { name: 'x' }), 404);
    expectError(await del(created.id), 404);
    expect(await api.database.db.collection('agent_templates').countDocuments({ _id: created.id })).toBe(0);
  });

  it('answers unknown and ill-formed ids with the same 404', async () => {
    for (const id of ['tpl_doesNotExist123', 'nope', 'wf_aaaaaaaaaaaaaaaa', '%24where', 'tpl_' + 'a'.repeat(300)]) {
      const res = await get(`/api/v1/agents/${id}`);
      expectError(res, 404, 'not found');
    }
  });
});

describe('template rules (400, naming the field)', () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['unknown tool', agentBody({ default_tools: ['http_fetch', 'rm_rf'] }), ['default_tools[1]: unknown tool "rm_rf"']],
    ['duplicate tool', agentBody({ default_tools: ['calculator', 'calculator'] }), ['default_tools[1]: duplicate']],
    ['bad step_type', agentBody({ step_type: 'robot' }), ['step_type: must be one of']],
    ['action without action_type', agentBody({ step_type: 'action' }), ['action_type: required']],
    [
      'action_type on an agent',
      agentBody({ action_type: 'delay' }),
      ['action_type: only allowed when step_type is "action"'],
    ],
    ['unknown action type', actionBody({ action_type: 'launch_rockets' }), ['action_type: must be one of']],
    ['bad action config', actionBody({ config: { to: 'not-an-address', subject: 'x' } }), ['config.to']],
    ['unknown action config key', actionBody({ config: { bogus: 1 } }), ['config', 'bogus']],
    [
      'tools on an action',
      actionBody({ default_tools: ['calculator'] }),
      ['default_tools: only allowed when step_type is "agent"'],
    ],
    ['output_schema on an action', actionBody({ output_schema: { type: 'object' } }), ['output_schema: only allowed']],
    ['bad agent config', agentBody({ config: { temperature: 9 } }), ['config.temperature: must be at most 2']],
    ['unknown agent config key', agentBody({ config: { url: 'x' } }), ['config.url: unknown field']],
    ['bad model', agentBody({ model: 'gpt-4' }), ['model: must be provider:model']],
    ['max_turns too high', agentBody({ max_turns: 51 }), ['max_turns: must be at most 50']],
    ['max_turns fractional', agentBody({ max_turns: 2.5 }), ['max_turns']],
    [
      'output_schema not compiling',
      agentBody({ output_schema: { type: 'banana' } }),
      ['output_schema: not a valid JSON Schema'],
    ],
    ['output_schema not an object', agentBody({ output_schema: 'string' }), ['output_schema: expected object']],
    ['empty name', agentBody({ name: '   ' }), ['name: must not be empty']],
    ['bad tag', agentBody({ tags: ['ok', 'no/slash'] }), ['tags[1]: letters, digits']],
  ];
  it.each(cases)('%s', async (_label, body, fragments) => {
    expectError(await post(body), 400, ...fragments);
  });
});
