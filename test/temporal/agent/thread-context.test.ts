/** The context window of a thread turn (temporal/activities/agent/thread-context.ts): whole turns, newest first. */
import type { ThreadMessageDoc } from '../../../db/thread-messages';
import { fitContext } from '../../../temporal/activities/agent/thread-context';

const at = new Date(0);
const user = (turn: number, text: string, status: ThreadMessageDoc['status'] = 'completed'): ThreadMessageDoc => ({
  _id: `t:${turn}:0`,
  thread_id: 't',
  owner_id: 'u',
  turn,
  pos: 0,
  role: 'user',
  text,
  status,
  created_at: at,
});
const reply = (turn: number, pos: number, text: string | null, calls = false): ThreadMessageDoc => ({
  _id: `t:${turn}:${pos}`,
  thread_id: 't',
  owner_id: 'u',
  turn,
  pos,
  role: 'assistant',
  text,
  ...(calls ? { tool_calls: [{ id: 'c1', name: 'calculator', args: { expression: '1+1' } }] } : { final: true }),
  created_at: at,
});
const tool = (turn: number, pos: number): ThreadMessageDoc => ({
  _id: `t:${turn}:${pos}`,
  thread_id: 't',
  owner_id: 'u',
  turn,
  pos,
  role: 'tool',
  text: null,
  tool: { call_id: 'c1', name: 'calculator', args: { expression: '1+1' }, output: { result: 2 }, is_error: false },
  created_at: at,
});

/** The docs of turns 1..3 as the read returns them: newest first. */
const turns = [
  user(1, 'a'.repeat(400)),
  reply(1, 2, 'b'.repeat(400)),
  user(2, 'what is 1+1'),
  reply(2, 2, null, true),
  tool(2, 3),
  reply(2, 4, 'two'),
  user(3, 'this one failed', 'failed'),
  reply(3, 2, null, true),
].reverse();

describe('fitContext', () => {
  it('keeps whole turns, oldest first, a tool call with its result', () => {
    const kinds = fitContext(turns, 10_000, false).map((e) => e.kind);
    expect(kinds).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('gives a turn that did not complete only its user message', () => {
    const entries = fitContext(turns, 10_000, false);
    expect(entries.at(-1)).toEqual({ kind: 'user', text: 'this one failed', repair: false });
  });

  it('leaves out the oldest turns that do not fit, never part of a turn', () => {
    const entries = fitContext(turns, 100, false);
    expect(entries.map((e) => (e.kind === 'user' ? e.text : e.kind))).toEqual([
      'what is 1+1',
      'assistant',
      'tool',
      'assistant',
      'this one failed',
    ]);
  });

  it('drops the oldest turn read when the read stopped at its limit (it may be partial)', () => {
    expect(fitContext(turns, 10_000, true).filter((e) => e.kind === 'user')).toHaveLength(2);
  });
});
