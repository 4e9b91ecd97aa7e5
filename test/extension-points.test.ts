/**
 * Adding an action type or a built-in tool takes a declaration, an implementation and a test, each registered by one
 * line in its list. The fixtures in test/fixtures/extensions/ are added to those lists here (jest.mock gives this file
 * the longer lists, as the one-line edits would) and nothing else changes: the API's checks and listings, the
 * OpenAPI document, the run snapshot, the workflow and the worker all pick them up, on the real stack.
 */
import type * as ActionDeclarations from '../domain/actions/declarations';
import type * as ToolDeclarations from '../domain/tools/declarations';
import type * as ActionRegistry from '../temporal/actions/registry';
import type * as ToolImplementations from '../temporal/tools/implementations';
import type * as SlugifyDeclaration from './fixtures/extensions/slugify.declaration';
import type * as SlugifyAction from './fixtures/extensions/slugify.action';
import type * as WordCountDeclaration from './fixtures/extensions/word-count.declaration';
import type * as WordCountTool from './fixtures/extensions/word-count.tool';
import { ACTION_TYPES } from '../domain/action-types';
import { ACTION_CATALOG } from '../domain/actions/catalog';
import { TOOL_NAMES } from '../domain/tools/catalog';
import { runAction } from '../temporal/actions/run-action';
import { NonRetryableError, toApplicationFailure } from '../temporal/failures';
import { getTool } from '../temporal/tools/registry';
import { actionBody, agentBody, expectError } from './helpers/api';
import { getTranscript, runAgent } from './helpers/agent-runs';
import { actionContext, toolContext } from './helpers/effects-context';
import { startLlmServer, type LlmServer } from './helpers/llm-server';
import { openApiChecker } from './helpers/openapi';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from './helpers/stack';
import { createTestUser, type TestUser } from './helpers/users';
import { createWorkflow, isTerminal, startRun, temporalFinalStatus, waitForStatus } from './helpers/workflows';

jest.mock('../domain/actions/declarations', () => {
  const actual = jest.requireActual<typeof ActionDeclarations>('../domain/actions/declarations');
  const fixture = jest.requireActual<typeof SlugifyDeclaration>('./fixtures/extensions/slugify.declaration');
  return { ACTION_DECLARATIONS: [...actual.ACTION_DECLARATIONS, fixture.slugifyDeclaration] };
});
jest.mock('../temporal/actions/registry', () => {
  const actual = jest.requireActual<typeof ActionRegistry>('../temporal/actions/registry');
  const fixture = jest.requireActual<typeof SlugifyAction>('./fixtures/extensions/slugify.action');
  return { ACTIONS: { ...actual.ACTIONS, slugify: fixture.slugifyAction } };
});
jest.mock('../domain/tools/declarations', () => {
  const actual = jest.requireActual<typeof ToolDeclarations>('../domain/tools/declarations');
  const fixture = jest.requireActual<typeof WordCountDeclaration>('./fixtures/extensions/word-count.declaration');
  return { TOOL_DECLARATIONS: [...actual.TOOL_DECLARATIONS, fixture.wordCountDeclaration] };
});
jest.mock('../temporal/tools/implementations', () => {
  const actual = jest.requireActual<typeof ToolImplementations>('../temporal/tools/implementations');
  const fixture = jest.requireActual<typeof WordCountTool>('./fixtures/extensions/word-count.tool');
  return { TOOL_IMPLEMENTATIONS: { ...actual.TOOL_IMPLEMENTATIONS, word_count: fixture.wordCountTool } };
});

/** The names as the lists' readers see them (typed for the product's lists, so widened here). */
const actionTypes: readonly string[] = ACTION_TYPES;
const toolNames: readonly string[] = TOOL_NAMES;

/** Every `enum` in the document that lists the action types (or the tools), wherever a schema states them. */
function enumsListing(node: unknown, member: string, found: unknown[][] = []): unknown[][] {
  if (Array.isArray(node)) {
    for (const item of node) enumsListing(item, member, found);
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'enum' && Array.isArray(value) && value.includes(member)) found.push(value);
      else enumsListing(value, member, found);
    }
  }
  return found;
}

describe('an action type and a tool added by their declaration and implementation alone', () => {
  it('join the names, the catalog and the worker registries', () => {
    expect(actionTypes.at(-1)).toBe('slugify');
    expect(toolNames.at(-1)).toBe('word_count');
    expect((ACTION_CATALOG as Record<string, { effect: string }>).slugify?.effect).toBe('pure');
    expect(getTool('word_count')?.name).toBe('word_count');
  });

  it('are stated by the OpenAPI document wherever it lists action types or tools', () => {
    const doc = openApiChecker().document;
    const actionEnums = enumsListing(doc, 'http_request');
    const toolEnums = enumsListing(doc, 'calculator');
    expect(actionEnums.length).toBeGreaterThan(0);
    expect(toolEnums.length).toBeGreaterThan(0);
    for (const values of actionEnums) expect(values).toContain('slugify');
    for (const values of toolEnums) expect(values).toContain('word_count');
  });

  it('execute through the worker: config checked in run mode first, defaults filled', async () => {
    expect(await runAction('slugify' as never, { text: 'Hello, World 2' }, actionContext())).toEqual({
      slug: 'hello-world-2',
    });
    const err: unknown = await runAction('slugify' as never, { text: '' }, actionContext()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonRetryableError);
    expect((err as Error).message).toMatch(/^config\.text: /);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'invalid_config', nonRetryable: true });
    expect(await getTool('word_count')?.execute({ text: 'one two  three' }, toolContext())).toEqual({
      words: 3,
      characters: 14,
    });
  });
});

describe('on the real stack', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: 'sk-test-extension', OPENAI_BASE_URL: llm.baseUrl }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  it('the API lists both, with their schemas, as the document describes them', async () => {
    const actions = await api.http.get('/api/v1/agents/actions');
    oas.check(actions);
    expect((actions.body as { data: unknown[] }).data).toContainEqual({
      name: 'slugify',
      description: 'Turn a text into a lower-case URL slug of ASCII letters and digits.',
      config_schema: expect.objectContaining({
        type: 'object',
        required: ['text'],
        additionalProperties: false,
      }) as unknown,
    });
    const tools = await api.http.get('/api/v1/agents/tools');
    oas.check(tools);
    expect((tools.body as { data: { name: string }[] }).data.map((t) => t.name)).toContain('word_count');
  });

  it('templates are checked against the declarations, with the messages every action and tool gets', async () => {
    const post = async (body: Record<string, unknown>) => {
      const res = await api.http.post('/api/v1/agents').set(user.auth).send(body);
      oas.check(res);
      return res;
    };
    const bad = await post(actionBody({ action_type: 'slugify', config: { separator: '+', colour: 'red' } }));
    expectError(bad, 400, 'config.separator: ', 'config.colour: unknown field');
    const ok = await post(actionBody({ action_type: 'slugify', config: { text: '{{input.title}}' } }));
    expect(ok.status).toBe(201);
    const agent = await post(agentBody({ default_tools: ['word_count'] }));
    expect(agent.status).toBe(201);
  });

  it("the action's system template is seeded from its declaration", async () => {
    const res = await api.http.get('/api/v1/agents/tpl_sys_slugify').set(user.auth);
    oas.check(res);
    expect((res.body as { data: unknown }).data).toMatchObject({
      name: 'Slugify',
      step_type: 'action',
      action_type: 'slugify',
      config: { text: '{{input.title}}' },
      system: true,
    });
  });

  it('a run performs the pure action as a local activity, and an agent calls the tool', async () => {
    const tpl = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send(actionBody({ action_type: 'slugify', config: { text: '{{input.title}}' } }));
    const workflowId = await createWorkflow(api, user, {
      name: uniqueId('slug-'),
      steps: [{ id: 'slug', template_id: (tpl.body as { data: { id: string } }).data.id }],
    });
    const runId = await startRun(api, user, workflowId, { title: 'Ship It Now' });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.slug).toEqual({ slug: 'ship-it-now' });
    expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const types = (history.events ?? []).map((e) => String(e.eventType));
    // Declared pure: no activity task through the server, only local activities.
    expect(types.filter((t) => t.endsWith('ACTIVITY_TASK_SCHEDULED') || t === '10')).toEqual([]);
    expect(types.filter((t) => t.endsWith('MARKER_RECORDED') || t === '25').length).toBeGreaterThan(0);

    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'word_count', args: { text: 'one two three' } }] },
      { text: 'Three words.' },
    ]);
    const agent = await runAgent(api, user, { model: `openai:${script.model}`, tools: ['word_count'] });
    expect(agent.status.status).toBe('completed');
    const offered = (script.requests[0]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(offered).toEqual(['word_count']);
    const transcript = await getTranscript(api, user, agent.runId);
    expect(transcript.entries.find((e) => e.role === 'tool')).toMatchObject({
      name: 'word_count',
      result: { words: 3, characters: 13 },
      is_error: false,
    });
  });
});
