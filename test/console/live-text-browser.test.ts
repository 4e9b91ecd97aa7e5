/**
 * The console shows an agent's text growing while the model writes it: Chromium against the real stack, with a
 * scripted model that streams its answer and holds the rest after a first part until the test lets it go. The page
 * must show that first part (and not the rest) while the call runs, then the whole answer from the transcript.
 */
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';

describe('console in a browser: live text', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  it('shows the answer growing in the transcript, then the final text', async () => {
    const { g } = s;
    const first = 'Three things happened today. ';
    const rest = 'The release went out, the build got faster, and nobody was paged.';
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const script = g.llm.script(uniqueId('console-stream-'), [
      { text: first + rest, stream: { chunkChars: 5, holdAfter: { chars: first.length, until: released } } },
    ]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('writer '),
      default_prompt: 'Write the digest.',
      model: `openai:${script.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('Live digest '),
      steps: [{ id: 'draft', template_id: agent._id, input: 'today' }],
    });
    const runId = await startRun(g.api, g.user, wf);

    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    await page.getByLabel('API key').fill(g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();

    // No step chosen: the page selects the one writing, and its transcript ends with the text so far.
    const live = page.locator('[data-testid="step-panel"][data-step-id="draft"] [data-testid="live-text"]');
    await live.getByText(first.trim()).waitFor();
    expect(await live.getAttribute('aria-busy')).toBe('true');
    expect(await live.textContent()).not.toContain('nobody was paged');
    expect(script.requests).toHaveLength(1);
    await s.screenshot(page, 'console-live-text');

    release();
    // The call ended: the transcript's entry, the final text, takes the live one's place.
    const transcript = page.getByTestId('transcript');
    await transcript.getByTestId('final-answer').getByText('nobody was paged').waitFor();
    await transcript
      .locator('[data-role="assistant"]')
      .getByText(first + rest)
      .waitFor();
    await live.waitFor({ state: 'detached' });
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();
  });
});
