/**
 * `runs watch` shows an agent's text while the model writes it: the CLI (in-process, output not a terminal) against
 * the real API, worker and Temporal, with a scripted model that streams its answer and holds the second half until
 * the test lets it go. The first half must be on the watch's output before the call ends.
 */
import { runCli } from '../../cli/run';
import { loadConfig } from '../../config';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';

/** Resolves once `seen()` holds after a write, or fails after `ms` with what was written. */
function waitForOutput(seen: () => boolean, output: () => string, ms = 30_000) {
  let check = () => undefined as void;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not seen within ${ms} ms; output so far:\n${output()}`)), ms);
    check = () => {
      if (!seen()) return;
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, check: () => check() };
}

describe('runs watch: live text against the real stack', () => {
  let g: GraphStack;
  let url: string;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
    url = await g.api.listen();
  }, 60_000);
  afterAll(() => g?.stop());

  /** A run of one agent step on `model`, and `runs watch` on it, its output collected as written. */
  async function watchAgentRun(model: string, watchFor: (written: string) => boolean) {
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('writer '),
      default_prompt: 'Write the digest.',
      model: `openai:${model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('live-text'),
      steps: [{ id: 'draft', template_id: agent._id, input: 'today' }],
    });
    const runId = await startRun(g.api, g.user, wf);
    let written = '';
    const seen = waitForOutput(
      () => watchFor(written),
      () => written,
    );
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key });
    const err: string[] = [];
    const exit = runCli(['runs', 'watch', runId], config, {
      out: (line) => {
        written += `${line}\n`;
        seen.check();
      },
      err: (line) => err.push(line),
      write: (text) => {
        written += text;
        seen.check();
      },
    });
    return { seen: seen.done, exit, err, written: () => written };
  }

  it('prints the text as it is generated, before the model call ends, then the call and the run', async () => {
    const first = 'Three things happened today. ';
    const answer = `${first}The release went out, the build got faster, and nobody was paged.`;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const script = g.llm.script(uniqueId('stream-'), [
      { text: answer, stream: { chunkChars: 5, holdAfter: { chars: first.length, until: released } } },
    ]);
    const watch = await watchAgentRun(script.model, (w) => w.includes(first.trimEnd()));

    await watch.seen;
    // The model server still holds the rest of the answer: the call has not ended.
    expect(script.requests).toHaveLength(1);
    expect(watch.written()).not.toContain('model call');
    expect(watch.written()).not.toContain('nobody was paged');
    release();

    expect(await watch.exit).toBe(0);
    const written = watch.written();
    const lines = written.trimEnd().split('\n');
    const text = lines.findIndex((l) => / draft turn 1: /.test(l) && !l.includes('model call'));
    // The text of the turn on one line after one prefix, however many deltas carried it; then the call's end.
    expect(lines[text]).toMatch(new RegExp(`^\\S+ draft turn 1: ${answer.replace(/[.,]/g, '\\$&')}$`));
    expect(lines[text + 1]).toMatch(/ draft turn 1: model call, /);
    expect(lines.filter((l) => l.includes('Three things'))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/ run completed$/);
    // Plain output: no escape codes.
    expect(written).not.toContain('\x1b');
    expect(watch.err).toEqual([]);
  });

  it('says when a failed attempt’s partial text is discarded, then prints the retry’s text alone', async () => {
    const partial = 'Half a try'; // two chunks of five
    let breakOff!: () => void;
    const broken = new Promise<void>((resolve) => (breakOff = resolve));
    const answer = 'The second try says it all.';
    const script = g.llm.script(uniqueId('stream-retry-'), [
      // The connection drops mid-answer once the watch has shown the partial text: a retryable failure.
      {
        text: `${partial} that breaks off here.`,
        stream: { chunkChars: 5, holdAfter: { chars: partial.length, until: broken }, breakAfter: partial.length },
      },
      { text: answer, stream: { chunkChars: 4 } },
    ]);
    const watch = await watchAgentRun(script.model, (w) => w.includes(partial));
    await watch.seen;
    breakOff();

    expect(await watch.exit).toBe(0);
    expect(script.requests).toHaveLength(2);
    // Without the times: the partial text, the failure, the void, the retry's text alone, the call's end.
    expect(
      watch
        .written()
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/^\S+ /, '')),
    ).toEqual([
      'draft started',
      `draft turn 1: ${partial}`,
      expect.stringMatching(/^draft attempt 1 failed, retrying: llm_connection: /),
      'draft started (attempt 2)',
      'draft turn 1: the partial text of attempt 1 is discarded; attempt 2 follows',
      `draft turn 1 (attempt 2): ${answer}`,
      expect.stringMatching(/^draft turn 1: model call, /),
      expect.stringMatching(/^draft completed/),
      'run completed',
    ]);
    expect(watch.written()).not.toContain('breaks off');
  });
});
