/**
 * The status shows what each step was given, rendered: an agent step's input, an action's config, an approval's
 * config, a map item's config, a sub-workflow's input — recorded when the execution starts, on the real stack.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('step inputs in the status', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack();
  }, 60_000);
  afterAll(() => g?.stop());

  it('records the rendered input of every kind of step and of map items', async () => {
    const model = g.llm.script(uniqueId('inputs-'), [{ text: 'fine' }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('agent'),
      default_prompt: 'Answer.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    const child = await createWorkflow(g.api, g.user, {
      name: uniqueId('child'),
      steps: [{ id: 'inner', template_id: g.tpl.transform._id, config: { expression: '1' } }],
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('inputs'),
      steps: [
        { id: 'ask', template_id: agent._id, input: 'How is {{input.city}}?' },
        { id: 'calc', template_id: g.tpl.transform._id, config: { expression: '$ * 2', data: '{{input.n}}' } },
        {
          id: 'each',
          template_id: g.tpl.transform._id,
          map: { over: '{{input.items}}' },
          config: { expression: '$', data: '{{map.item}}' },
        },
        { id: 'sub', workflow_id: child, input: { from: '{{input.city}}' } },
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Ok for {{input.city}}?' } },
      ],
    });
    const runId = await startRun(g.api, g.user, wf, { city: 'Oslo', n: 21, items: ['a', 'b'] });
    const waiting = await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    const input = (id: string) => waiting.steps.find((s) => s.id === id)?.input;
    expect(input('ask')).toBe('How is Oslo?');
    expect(input('calc')).toEqual({ expression: '$ * 2', data: 21 });
    expect(input('sub')).toEqual({ from: 'Oslo' });
    expect(input('gate')).toEqual({ message: 'Ok for Oslo?' });
    const items = (
      waiting.steps.find((s) => s.id === 'each') as unknown as {
        executions: { shown: { exec_id: string; input: unknown }[] };
      }
    ).executions.shown;
    expect(items.map((i) => [i.exec_id, i.input])).toEqual([
      ['each[0]', { expression: '$', data: 'a' }],
      ['each[1]', { expression: '$', data: 'b' }],
    ]);
    await g.api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'gate', approved: true })
      .expect(200);
    expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('completed');
  }, 60_000);
});
