/**
 * A thread's working memory on the real stack (decision 0601): the template's `memory_schema` gives its threads a
 * memory (the schema's defaults first) that the model changes with the `update_memory` tool — a valid patch makes a
 * version, an invalid one is refused with the reason in the tool result and the memory unchanged — and the user
 * reads and replaces through the API (an invalid document is a 400, nothing changes). Every turn's system prompt
 * holds the memory; a thread without a schema has no memory and no tool.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import type { RecordedRequest } from '../helpers/llm-server';
import { uniqueId } from '../helpers/stack';

type Body = Record<string, unknown>;
type Msg = { role: string; content: unknown };

const systemOf = (req: RecordedRequest) => {
  const m = (req.body.messages as Msg[]).find((x) => x.role === 'system');
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
};
const toolNames = (req: RecordedRequest) =>
  ((req.body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name);

describe('thread working memory', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
  }, 60_000);
  afterAll(() => g?.stop());

  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, city: { type: 'string', default: 'Paris' } },
    additionalProperties: false,
  };

  it('the agent updates it through update_memory (validated); the user reads and replaces it; every turn sees it', async () => {
    const model = g.llm.script(uniqueId('memory-'), [
      { toolCalls: [{ name: 'update_memory', args: { patch: { name: 'Ada' } } }] },
      { toolCalls: [{ name: 'update_memory', args: { patch: { name: 42 } } }] },
      { text: 'Noted.' },
      { text: 'Hello again, Ada.' },
    ]);
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({
        name: uniqueId('remembering '),
        default_prompt: 'Answer.',
        model: `openai:${model.model}`,
        memory_schema: schema,
      });
    expect(tpl.status).toBe(201);
    expect(tpl.body.data.memory_schema).toEqual(schema);
    const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl.body.data.id });
    expect(created.body.data).toMatchObject({ memory: { city: 'Paris' }, memory_version: 0 });
    const id = created.body.data.id as string;

    const first = await g.api.http
      .post(`/api/v1/threads/${id}/messages?wait=30`)
      .set(g.user.auth)
      .send({ text: 'I am Ada.' });
    expect(first.status).toBe(200);
    expect(first.body.data.reply.text).toBe('Noted.');

    // The first call offered the tool and showed the memory as created.
    expect(toolNames(model.requests[0]!)).toContain('update_memory');
    expect(systemOf(model.requests[0]!)).toContain('{"city":"Paris"}');
    // The valid patch changed the memory; the invalid one was refused, the model told why, nothing changed.
    const results = ((await g.api.http.get(`/api/v1/threads/${id}/messages`).set(g.user.auth)).body.data as Body[])
      .filter((m) => m.role === 'tool')
      .map((m) => m.tool as Body);
    expect(results[0]).toMatchObject({ is_error: false, output: { ok: true, version: 1 } });
    expect(results[1]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[1]!.output)).toContain('the memory was not changed');
    expect(JSON.stringify(results[1]!.output)).toContain('memory.name');
    expect(JSON.stringify(model.requests[2]!.body.messages)).toContain('the memory was not changed');

    const memory = await g.api.http.get(`/api/v1/threads/${id}/memory`).set(g.user.auth);
    expect(memory.status).toBe(200);
    expect(memory.body.data).toEqual({ memory: { city: 'Paris', name: 'Ada' }, version: 1, schema });
    const thread = await g.api.http.get(`/api/v1/threads/${id}`).set(g.user.auth);
    expect(thread.body.data).toMatchObject({ memory: { city: 'Paris', name: 'Ada' }, memory_version: 1 });

    // The next turn's system prompt holds the memory.
    const second = await g.api.http
      .post(`/api/v1/threads/${id}/messages?wait=30`)
      .set(g.user.auth)
      .send({ text: 'Who am I?' });
    expect(second.body.data.reply.text).toBe('Hello again, Ada.');
    expect(systemOf(model.requests[3]!)).toContain('{"city":"Paris","name":"Ada"}');

    // The user's PUT: an invalid document is a 400 envelope naming the problem, the memory unchanged.
    const bad = await g.api.http
      .put(`/api/v1/threads/${id}/memory`)
      .set(g.user.auth)
      .send({ memory: { name: 5, age: 3 } });
    expect(bad.status).toBe(400);
    expect(bad.headers['x-error-code']).toBe('invalid_memory');
    expect(bad.body).toMatchObject({ data: null, error: expect.stringContaining('memory.name') });
    expect((await g.api.http.get(`/api/v1/threads/${id}/memory`).set(g.user.auth)).body.data.version).toBe(1);
    const good = await g.api.http
      .put(`/api/v1/threads/${id}/memory`)
      .set(g.user.auth)
      .send({ memory: { name: 'Bob' } });
    expect(good.status).toBe(200);
    expect(good.body.data).toMatchObject({ memory: { name: 'Bob' }, version: 2 });

    const versions = await g.api.http.get(`/api/v1/threads/${id}/memory/versions`).set(g.user.auth);
    expect(versions.status).toBe(200);
    expect((versions.body.data as Body[]).map((v) => [v.version, v.by, v.turn, v.memory])).toEqual([
      [1, 'agent', 1, { city: 'Paris', name: 'Ada' }],
      [2, 'user', null, { name: 'Bob' }],
    ]);
  }, 90_000);

  it('a thread whose template has no memory schema has no memory and no update_memory tool', async () => {
    const model = g.llm.script(uniqueId('nomem-'), [{ text: 'ok' }]);
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({ name: uniqueId('plain '), default_prompt: 'Answer.', model: `openai:${model.model}` });
    const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl.body.data.id });
    expect(created.body.data).toMatchObject({ memory: null, memory_version: null });
    const id = created.body.data.id as string;
    const res = await g.api.http.get(`/api/v1/threads/${id}/memory`).set(g.user.auth);
    expect(res.status).toBe(422);
    expect(res.headers['x-error-code']).toBe('no_memory');
    await g.api.http.post(`/api/v1/threads/${id}/messages?wait=30`).set(g.user.auth).send({ text: 'hi' });
    expect(toolNames(model.requests[0]!)).not.toContain('update_memory');
    // A template's memory schema is checked like any user schema.
    const invalid = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({ name: uniqueId('bad '), default_prompt: 'x', memory_schema: { type: 'no-such-type' } });
    expect(invalid.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(invalid.body)).toContain('memory_schema');
  }, 60_000);
});
