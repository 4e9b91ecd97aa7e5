/**
 * A replayed experiment item whose changed agent step calls an MCP tool (real worker, real API, a scripted model, the
 * SDK-built failure server counting the calls it receives): the call the recorded run made with the same arguments is
 * answered from its transcript, so the server receives no call, and the new transcript says where it came from.
 */
import type { Response } from 'supertest';
import { getTranscript, insertAgentTemplate } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer, type RecordedRequest } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

describe('replay experiments serve MCP tool calls from the record', () => {
  let llm: LlmServer;
  let failures: FailureServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    [llm, failures] = await Promise.all([startLlmServer(), startFailureServer()]);
    api = await startTestApi(
      testConfig({ HTTP_ALLOWED_HOSTS: failures.host, OPENAI_API_KEY: 'sk-test-mcp', OPENAI_BASE_URL: llm.baseUrl }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), failures?.close()]);
  });

  const data = <T>(res: Response, status: number): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };

  it('answers the recorded lookup without calling the server', async () => {
    const server = data<{ id: string }>(
      await api.http.post('/api/v1/mcp-servers').set(user.auth).send({ name: 'ops', url: failures.url }),
      201,
    );
    // Looks the key up, then answers by its prompt's version.
    const script = llm.script(uniqueId('gpt-mcp-replay-'), (req: RecordedRequest) => {
      const messages = JSON.stringify(req.body.messages);
      if (!messages.includes('"tool"')) return { toolCalls: [{ name: 'ops__lookup', args: { key: 'k1' } }] };
      return { text: `answer ${/Version (\d)/.exec(messages)?.[1] ?? '?'}` };
    });
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, tools: [] });
    const workflow = (prompt: string) =>
      createWorkflow(api, user, {
        name: uniqueId('mcp-replay'),
        steps: [
          {
            id: 'ask',
            template_id: template._id,
            input: '{{input.question}}',
            prompt,
            mcp_tools: [{ server_id: server.id, include: ['lookup'] }],
          },
        ],
      });
    const recordedWf = await workflow('Version 1.');
    const runId = await startRun(api, user, recordedWf, { question: 'k1?' });
    expect((await waitForStatus(api, user, runId, isTerminal, 60_000)).status).toBe('completed');
    expect(failures.callsOf('lookup')).toHaveLength(1);

    const ds = data<{ id: string }>(
      await api.http
        .post('/api/v1/datasets')
        .set(user.auth)
        .send({ name: uniqueId('rec-') }),
      201,
    );
    data(
      await api.http
        .post(`/api/v1/datasets/${ds.id}/items/from-runs`)
        .set(user.auth)
        .send({ run_ids: [runId] }),
      201,
    );
    const exp = data<{ id: string }>(
      await api.http
        .post('/api/v1/experiments')
        .set(user.auth)
        .send({
          dataset_id: ds.id,
          workflow_id: await workflow('Version 2.'),
          mode: 'replay',
          replay: { tool_calls: 'error_on_miss' },
          scorers: [{ kind: 'contains', path: 'ask', value: 'answer 2' }],
        }),
      201,
    );
    let status = 'queued';
    for (let i = 0; i < 600 && ['queued', 'running'].includes(status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = data<{ status: string }>(await api.http.get(`/api/v1/experiments/${exp.id}`).set(user.auth), 200).status;
    }
    expect(status).toBe('completed');
    const [row] = data<{ run_id: string; scores: { pass: boolean }[] }[]>(
      await api.http.get(`/api/v1/experiments/${exp.id}/results`).set(user.auth),
      200,
    );
    expect(row!.scores[0]!.pass).toBe(true);
    // The step ran again (two more model calls); the lookup was served from the record.
    expect(script.requests).toHaveLength(4);
    expect(failures.callsOf('lookup')).toHaveLength(1);
    const tools = (await getTranscript(api, user, row!.run_id)).entries.filter((e) => e.role === 'tool');
    expect(tools).toEqual([
      expect.objectContaining({ name: 'ops__lookup', is_error: false, replayed_from_run_id: runId }),
    ]);
  }, 120_000);
});
