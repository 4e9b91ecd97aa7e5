/**
 * The console in a real browser against the real stack (Temporal, the database, the scripted model server, the API
 * serving the built console): sign in, follow a branching run with an agent step live, decide an approval from the
 * inbox, rerun a failed run from its failed step, start a run from the generated input form, sign out, and a second
 * user who sees nothing of the first. Every wait is on visible state.
 */
import type { Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import type { ScriptedReply } from '../helpers/llm-server';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const node = (page: Page, stepId: string, status?: string) =>
  page.locator(`[data-testid="step-node"][data-step-id="${stepId}"]${status ? `[data-status="${status}"]` : ''}`);

describe('console in a browser', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const signIn = async (user: TestUser, path = '/console/'): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };

  it('follows a branching run with an agent step live: the taken branch, the skipped one, the transcript', async () => {
    const { g } = s;
    let release!: (reply: ScriptedReply) => void;
    const held = new Promise<ScriptedReply>((resolve) => (release = resolve));
    const script = g.llm.script(uniqueId('router-'), (_req, i) =>
      i === 0 ? { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] } : { hold: held },
    );
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: 'classifier',
      default_prompt: 'Classify the ticket.',
      default_tools: ['calculator'],
      model: `openai:${script.model}`,
      output_schema: { type: 'object', properties: { category: { type: 'string' } }, required: ['category'] },
    });
    const branch = (id: string) => ({
      id,
      template_id: g.tpl.transform._id,
      depends_on: ['classify'],
      when: `steps.classify.output.category == "${id}"`,
      config: { expression: `"handled by ${id}"` },
    });
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Support triage '),
      steps: [
        { id: 'classify', template_id: agent._id, input: '{{input.ticket}}' },
        branch('billing'),
        branch('tech'),
        {
          id: 'reply',
          template_id: g.tpl.transform._id,
          depends_on: ['billing', 'tech'],
          config: { expression: '$', data: { b: '{{steps.billing.output}}' } },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, workflowId, { ticket: 'I was charged twice' });

    const page = await signIn(g.user);
    // The run is in the list; its page opens from there.
    const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    await row.waitFor();
    await row.getByRole('link', { name: new RegExp(runId) }).click();
    await page.waitForURL(`**/console/runs/${runId}`);

    // The agent waits on its second model call: the page shows it running, the branches still pending.
    await node(page, 'classify', 'running').waitFor();
    await node(page, 'billing', 'pending').waitFor();
    await page.getByTestId('live-state').getByText('live').waitFor();
    await script.waitForRequests(2);
    release({ text: '{"category": "billing"}' });

    // Live to the end, without a reload: the taken branch ran, the other is skipped and greyed.
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();
    await node(page, 'classify', 'completed').waitFor();
    await node(page, 'billing', 'completed').waitFor();
    await node(page, 'tech', 'skipped').waitFor();
    await node(page, 'reply', 'completed').waitFor();
    expect(await node(page, 'tech').getAttribute('aria-label')).toContain('Skipped');
    expect(await page.getByTestId('run-usage').textContent()).toMatch(/^2 model calls/);

    // The agent's transcript, turn by turn: the tool call, its result and the final answer.
    await node(page, 'classify').click();
    const transcript = page.getByTestId('transcript');
    await transcript.getByTestId('final-answer').getByText('billing').waitFor();
    await transcript.getByTestId('tool-call').getByText('calculator').waitFor();
    await transcript.locator('[data-role="tool"]').getByText('42').first().waitFor();
    expect(await transcript.locator('[data-testid="transcript-entry"]').count()).toBeGreaterThanOrEqual(4);
    await s.screenshot(page, 'run-page');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    await row.locator('[data-status="completed"]').first().waitFor();
    await s.screenshot(page, 'runs-list');
  });

  it('approves a waiting step from the inbox and the run continues', async () => {
    const { g } = s;
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Release '),
      steps: [
        { id: 'ask', template_id: g.tpl.approval._id, config: { message: 'Ship release 1.2?' } },
        { id: 'ship', template_id: g.tpl.transform._id, config: { expression: '"shipped"' } },
      ],
    });
    const runId = await startRun(g.api, g.user, workflowId);
    await waitForStatus(g.api, g.user, runId, (st) => st.status === 'waiting');

    const page = await signIn(g.user, '/console/approvals');
    const item = page.locator(`[data-testid="approval"][data-run-id="${runId}"]`);
    await item.getByText('Ship release 1.2?').waitFor();
    await item.getByLabel(/Comment on ask/).fill('Looks good');
    await s.screenshot(page, 'approvals');
    await item.getByRole('button', { name: 'Approve' }).click();
    await item.waitFor({ state: 'detached' });

    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toMatchObject({ approved: true, comment: 'Looks good' });
    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();
    await node(page, 'ship', 'completed').waitFor();
  });

  it('reruns a failed run from its failed step and lands on the new run', async () => {
    const { g } = s;
    const path = `/${uniqueId('publish')}`;
    g.sink.route(path, { status: 500, body: 'down' });
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Publish '),
      steps: [
        { id: 'draft', template_id: g.tpl.transform._id, config: { expression: '"draft"' } },
        {
          id: 'publish',
          template_id: g.tpl.http_request._id,
          retry: { max_attempts: 1 },
          config: { url: g.sink.url(path), method: 'POST', body: { text: '{{steps.draft.output}}' } },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, workflowId);
    expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('failed');

    const page = await signIn(g.user, `/console/runs/${runId}`);
    await node(page, 'publish', 'failed').waitFor();
    await page.getByTestId('run-error').getByText('publish').waitFor();
    g.sink.route(path, { status: 200, body: { ok: true } });
    expect(await page.getByLabel('Rerun from step').inputValue()).toBe('publish');
    await page.getByRole('button', { name: 'Rerun' }).click();

    await page.waitForURL((url) => /\/console\/runs\/run_/.test(url.pathname) && !url.pathname.endsWith(runId));
    const newRunId = new URL(page.url()).pathname.split('/').pop()!;
    await page.locator(`[data-testid="run-page"][data-run-id="${newRunId}"][data-status="completed"]`).waitFor();
    await node(page, 'publish', 'completed').waitFor();
    await page.getByRole('link', { name: runId }).waitFor();
    expect(g.sink.requestsTo(path)).toHaveLength(2);
  });

  it('reruns an agent step on another model and shows the override on the new run', async () => {
    const { g } = s;
    const model = g.llm.script(uniqueId('console-fix-'), [{ text: 'Fixed' }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('writer'),
      default_prompt: 'Write.',
      default_tools: [],
      model: 'compat:not-served-here',
    });
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Model fix '),
      steps: [{ id: 'draft', template_id: agent._id, input: 'Write' }],
    });
    const runId = await startRun(g.api, g.user, workflowId);
    expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('failed');

    const page = await signIn(g.user, `/console/runs/${runId}`);
    await node(page, 'draft', 'failed').waitFor();
    await page.getByLabel('Model (optional)').fill(`openai:${model.model}`);
    await page.getByRole('button', { name: 'Rerun' }).click();

    await page.waitForURL((url) => /\/console\/runs\/run_/.test(url.pathname) && !url.pathname.endsWith(runId));
    const newRunId = new URL(page.url()).pathname.split('/').pop()!;
    await page.locator(`[data-testid="run-page"][data-run-id="${newRunId}"][data-status="completed"]`).waitFor();
    await page.getByTestId('rerun-overrides').getByText(`draft on openai:${model.model}`).waitFor();
    expect(model.requests).toHaveLength(1);
  });

  it('starts a run from the form generated from the input schema', async () => {
    const { g } = s;
    const name = uniqueId('Greeter ');
    const workflowId = await createWorkflow(g.api, g.user, {
      name,
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: '$', data: '{{input}}' } }],
      config: {
        input_schema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'Who to greet' },
            count: { type: 'integer' },
            urgent: { type: 'boolean' },
            tone: { enum: ['warm', 'formal'] },
            tags: { type: 'array', items: { type: 'string' } },
            extra: { type: 'object' },
          },
          required: ['name', 'count'],
        },
      },
    });

    const page = await signIn(g.user, '/console/workflows');
    await page.getByRole('link', { name }).click();
    await page.waitForURL(`**/console/workflows/${workflowId}`);
    await node(page, 'echo').waitFor();
    const form = page.getByTestId('start-form');
    await form.getByLabel(/^name/).fill('Ada');
    await form.getByLabel(/^count/).fill('3');
    await form.getByLabel(/^urgent/).check();
    await form.getByLabel(/^tone/).selectOption({ label: 'formal' });
    await form.getByLabel(/^tags/).fill('a\nb');
    await form.getByLabel(/^extra/).fill('{"k": 1}');
    await s.screenshot(page, 'workflow-page');
    await form.getByRole('button', { name: 'Start run' }).click();

    await page.waitForURL(/\/console\/runs\/run_/);
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();
    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(status.outputs.echo).toEqual({
      name: 'Ada',
      count: 3,
      urgent: true,
      tone: 'formal',
      tags: ['a', 'b'],
      extra: { k: 1 },
    });
  });

  it('signs out, and a second user sees none of the first user runs', async () => {
    const { g } = s;
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Private '),
      steps: [{ id: 'one', template_id: g.tpl.transform._id, config: { expression: '1' } }],
    });
    const runId = await startRun(g.api, g.user, workflowId);
    await waitForStatus(g.api, g.user, runId, isTerminal);

    const page = await signIn(g.user);
    await page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('API key').waitFor();

    // Another user in the same tab: an empty list, and the first user's run is not found.
    const other = await createTestUser(g.api.database.db);
    await page.getByLabel('API key').fill(other.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No runs match.').waitFor();
    expect(await page.getByTestId('run-row').count()).toBe(0);
    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    await page
      .getByRole('alert')
      .getByText(/not found/)
      .waitFor();
    await page.goto(`${s.baseUrl}/console/workflows`);
    await page.getByText('No workflows yet').waitFor();

    // A key refused later (here: a wrong one put in place) sends the user back to sign-in.
    await page.evaluate("sessionStorage.setItem('stepwise.apiKey', 'sk_wrong')");
    await page.goto(`${s.baseUrl}/console/runs`);
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
  });
});
