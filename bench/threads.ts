/**
 * T1–T3: threads (docs/threads.md) against the same agent calls without them. A turn is a run of a one-agent-step
 * snapshot (decision 0600), so each row compares a turn with the call or run it stands for:
 * - T1, the first live token: POST a message and follow the thread's SSE stream to its first `agent.text.delta` ÷ the
 *   first token of the same streamed call made inline through the provider adapter (B6's mock, 300 ms).
 * - T2, growth: a thread at turn 500 ÷ one at turn 10 — turn latency, database commands per turn (the API's and the
 *   worker's METRICS_ROUND_TRIPS counters, as C2), Temporal history bytes per turn. The earlier turns are seeded in
 *   the database as the API leaves them (copies of a real turn's messages, the thread's counters to match).
 * - T3, load: 50 threads chatting at once, 10 turns each ÷ 50 chains of 10 runs of a one-agent-step workflow.
 */
import http from 'node:http';
import { temporal as proto } from '@temporalio/proto';
import { threadMessageId } from '../domain/thread';
import {
  SUMMARY_POS,
  threadMessageDocId,
  threadMessagesCollection,
  type ThreadMessageDoc,
} from '../db/thread-messages';
import { threadsCollection } from '../db/threads';
import type { LlmServer } from '../test/helpers/llm-server';
import { createLlmProvider } from '../temporal/llm/provider';
import { COMPACTION_SYSTEM, compactionPrompt } from '../temporal/activities/agent/compact-thread';
import { splitTurns, windowRoom } from '../temporal/activities/agent/thread-context';
import type { BenchContext, Row } from './arms';
import {
  MOCK_LLM_FAST_MODEL,
  MOCK_LLM_FAST_REPLY,
  MOCK_LLM_LATENCY_MS,
  MOCK_LLM_MODEL,
  mockLlmEnv,
} from './agent-overhead';
import { roundTrips, minus } from './counted';
import { interleave, interleaveArms, round, summarize, timed } from './stats';

/**
 * T2's messages: 10 KiB each (the size the issue's 500-turn test speaks of), answered with 2 KiB; a turn is some
 * 3 100 tokens, so a window of 16 000 (the default `context_tokens`, set on the template) holds five turns and is full
 * from turn 6 on: every measured turn, at 10 or at 500, gets the same context and compacts as often.
 */
const T2_MESSAGE = 'A question of some length, with its context pasted in. '.repeat(183).slice(0, 10 * 1024);
const T2_CONTEXT_TOKENS = 16_000;

interface Turn {
  turn: number;
  run_id: string;
}

/** An agent template on the mock provider's `model`. */
export async function agentTemplate(
  ctx: BenchContext,
  model: string,
  name: string,
  contextTokens?: number,
): Promise<string> {
  const template = await ctx.api.call<{ id: string }>('POST', '/api/v1/agents', {
    name: `bench thread agent ${name}`,
    default_prompt: 'Answer briefly.',
    model: `openai:${model}`,
    ...(contextTokens !== undefined ? { context_tokens: contextTokens } : {}),
  });
  return template.data.id;
}

export async function newThread(ctx: BenchContext, templateId: string, title: string): Promise<string> {
  return (await ctx.api.call<{ id: string }>('POST', '/api/v1/threads', { template: templateId, title })).data.id;
}

/**
 * One turn, answered once it has ended (`?wait=60`: 200 then; after a 202, on a very busy machine, the thread is
 * waited for). Sent with policy `enqueue`, as a chat client would: a message that lands while the previous turn's end
 * is still being written waits for it instead of being refused.
 */
async function turn(ctx: BenchContext, threadId: string, text = 'go'): Promise<Turn> {
  const res = await ctx.api.call<Turn>('POST', `/api/v1/threads/${threadId}/messages?wait=60`, {
    text,
    policy: 'enqueue',
  });
  if (res.status !== 200) await waitForIdle(ctx, threadId);
  return res.data;
}

/** Follows an SSE stream (`url`, bearer `key`) and resolves at the first event of `type`; `close` ends the stream. */
export function firstEvent(
  url: string,
  key: string,
  type: string,
): { opened: Promise<void>; seen: Promise<void>; close: () => void } {
  let req: http.ClientRequest | undefined;
  let resolveSeen!: () => void;
  let rejectSeen!: (err: Error) => void;
  const seen = new Promise<void>((resolve, reject) => ((resolveSeen = resolve), (rejectSeen = reject)));
  const opened = new Promise<void>((resolve, reject) => {
    req = http.get(url, { headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`thread events: ${res.statusCode}`));
      resolve();
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          if (event === type) resolveSeen();
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', (err) => (reject(err), rejectSeen(err)));
  });
  return { opened, seen, close: () => req?.destroy() };
}

const threadEvents = (ctx: BenchContext, threadId: string) =>
  firstEvent(`${ctx.stack.apiUrl}/api/v1/threads/${threadId}/events`, ctx.stack.apiKey, 'agent.text.delta');

export async function t1FirstToken(ctx: BenchContext, llm: LlmServer): Promise<Row> {
  const provider = createLlmProvider(mockLlmEnv(llm), `openai:${MOCK_LLM_MODEL}`);
  const inline = async () => {
    const t0 = process.hrtime.bigint();
    let first = NaN;
    await provider.generate({
      system: 'Answer briefly.',
      messages: [{ role: 'user', text: 'go' }],
      tools: [],
      onText: () => {
        if (Number.isNaN(first)) first = Number(process.hrtime.bigint() - t0) / 1e6;
      },
    });
    return first;
  };
  const template = await agentTemplate(ctx, MOCK_LLM_MODEL, 'T1');
  // A new thread for every sample, its stream opened (untimed) before its first message is sent: the stream has
  // nothing earlier to replay.
  const viaThread = async () => {
    const threadId = await newThread(ctx, template, 'T1');
    const stream = threadEvents(ctx, threadId);
    await stream.opened;
    try {
      return await timed(async () => {
        await ctx.api.call<Turn>('POST', `/api/v1/threads/${threadId}/messages`, { text: 'go' });
        await stream.seen;
      });
    } finally {
      stream.close();
      // The turn's end, untimed: no sample is measured while the one before is still at work.
      await waitForIdle(ctx, threadId);
    }
  };
  // The reference: the same turn as a hand-written chat service on the same stack would do it (bench/hand-written/
  // chat.ts): the message stored, a workflow whose one activity streams the call and writes its first text to
  // MongoDB at once, a stream that polls MongoDB at Stepwise's interval. Its turn's end is waited for, untimed.
  const viaHand = async () => {
    const chatId = await ctx.hand.newChat();
    const stream = firstEvent(`${ctx.hand.baseUrl}/chats/${chatId}/events`, ctx.hand.key, 'text.delta');
    await stream.opened;
    let turn = '';
    try {
      return await timed(async () => {
        turn = await ctx.hand.sendMessage(chatId, 'go', `openai:${MOCK_LLM_MODEL}`);
        await stream.seen;
      });
    } finally {
      stream.close();
      await ctx.stepwiseTemporal.workflow.getHandle(turn).result();
    }
  };
  const [a, c, b] = await interleaveArms(20 * ctx.scale, [viaThread, viaHand, inline], 3);
  const sa = summarize(a!);
  const sb = summarize(b!);
  const sc = summarize(c!);
  const ratio = sa.p50 / sc.p50;
  return {
    id: 'T1',
    what: `first live token of a turn: POST a message, the thread's SSE stream until the first agent.text.delta ÷ the same turn in a hand-written chat service (message stored, one workflow activity streaming the call and writing its first text to MongoDB, an SSE endpoint polling MongoDB at Stepwise's 250 ms); the same streamed call made inline beside it (mock LLM, ${MOCK_LLM_LATENCY_MS} ms)`,
    stepwise: `p50 ${round(sa.p50, 0)} ms`,
    bare: `hand-written p50 ${round(sc.p50, 0)} ms; inline p50 ${round(sb.p50, 0)} ms (Stepwise ÷ inline: ${round(sa.p50 / sb.p50, 2)}×)`,
    ratio,
    target: '≤ 1.10×',
    pass: ratio <= 1.1,
    detail: { thread: sa, handWritten: sc, inline: sb, threadOverInline: sa.p50 / sb.p50 },
  };
}

export async function waitForIdle(ctx: BenchContext, threadId: string): Promise<void> {
  for (;;) {
    const { data } = await ctx.api.call<{ running_turn: unknown; queued: number }>(
      'GET',
      `/api/v1/threads/${threadId}`,
    );
    if (data.running_turn === null && data.queued === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Gives `threadId` (one real turn behind it) `upTo` turns as the API and the worker would have left them: copies of
 * turn 1's messages for turns 2…upTo, the summaries the turns' compactions would have written (decided by the
 * activity's own rule, with its prompt, the model's reply as their text), and the thread's counters to match.
 */
async function seedTurns(ctx: BenchContext, threadId: string, upTo: number): Promise<void> {
  const db = ctx.stack.database.db;
  const first = await threadMessagesCollection(db).find({ thread_id: threadId, turn: 1 }).sort({ _id: 1 }).toArray();
  const turns: ThreadMessageDoc[][] = [first];
  const summaries: ThreadMessageDoc[] = [];
  let prev: ThreadMessageDoc | null = null;
  for (let t = 2; t <= upTo; t++) {
    // Turn t's compaction, before its model call: the turns after the latest summary, newest first.
    const after: number = prev?.summary?.to_turn ?? 0;
    const newestFirst: ThreadMessageDoc[] = turns.slice(after).flat().reverse();
    const room = windowRoom(T2_CONTEXT_TOKENS, prev);
    if (splitTurns(newestFirst, room, false, after).rest.length > 0) {
      const old: ThreadMessageDoc[][] = splitTurns(newestFirst, Math.floor(room / 2), false, after).rest;
      const from: number = old[0]![0]!.turn;
      const last: number = old[old.length - 1]![0]!.turn;
      const summary: ThreadMessageDoc = {
        _id: threadMessageDocId(threadId, t, SUMMARY_POS),
        thread_id: threadId,
        owner_id: first[0]!.owner_id,
        turn: t,
        pos: SUMMARY_POS,
        role: 'summary',
        text: MOCK_LLM_FAST_REPLY,
        summary: {
          from_turn: prev?.summary?.from_turn ?? from,
          to_turn: last,
          model: `openai:${MOCK_LLM_FAST_MODEL}`,
          usage: { input_tokens: 0, output_tokens: 0 },
          request: { system: COMPACTION_SYSTEM, prompt: compactionPrompt(prev, old, from, last) },
        },
        created_at: new Date(),
      };
      summaries.push(summary);
      prev = summary;
    }
    // A seeded turn names a run that never existed: the rows stand for turns whose runs have been cleaned up.
    turns.push(
      first.map((m) => ({
        ...m,
        _id: threadMessageDocId(threadId, t, m.pos),
        turn: t,
        ...(m.run_id ? { run_id: `${m.run_id}_seed${t}` } : {}),
      })),
    );
  }
  const docs = [...turns.slice(1).flat(), ...summaries];
  for (let i = 0; i < docs.length; i += 200)
    await threadMessagesCollection(db).insertMany(docs.slice(i, i + 200), { ordered: false });
  const thread = (await threadsCollection(db).findOne({ _id: threadId }))!;
  const last = first[first.length - 1]!;
  const u = thread.usage;
  await threadsCollection(db).updateOne(
    { _id: threadId },
    {
      $set: {
        turns: upTo,
        message_count: first.length * upTo + summaries.length,
        last_message_id: threadMessageId(upTo, last.pos),
        usage: {
          ...u,
          llm_calls: u.llm_calls * upTo + summaries.length,
          input_tokens: u.input_tokens * upTo,
          output_tokens: u.output_tokens * upTo,
        },
        ...(prev?.summary ? { summarized_to: prev.summary.to_turn } : {}),
      },
      $inc: { version: 1 },
    },
  );
}

/** History bytes of a turn's run (its Temporal history as stored, encoded). */
async function historyBytes(ctx: BenchContext, runId: string): Promise<number> {
  const history = await ctx.stepwiseTemporal.workflow.getHandle(runId).fetchHistory();
  return proto.api.history.v1.History.encode(history).finish().length;
}

export async function t2Growth(ctx: BenchContext): Promise<Row> {
  const template = await agentTemplate(ctx, MOCK_LLM_FAST_MODEL, 'T2', T2_CONTEXT_TOKENS);
  const small = await newThread(ctx, template, 'T2 at 10');
  const large = await newThread(ctx, template, 'T2 at 500');
  await turn(ctx, small, T2_MESSAGE);
  await turn(ctx, large, T2_MESSAGE);
  // Both at the same point of the compaction cycle (a compaction every 4 turns here): seeded to 7 and 495, then the
  // warm-up turns, so that the measured turns are 10… and 498….
  await seedTurns(ctx, small, 7);
  await seedTurns(ctx, large, 495);
  const apiMetrics = `${ctx.stack.apiUrl}/metrics`;
  const commands = { small: [] as number[], large: [] as number[] };
  const bytes = { small: [] as number[], large: [] as number[] };
  const measure = (which: 'small' | 'large', threadId: string) => async () => {
    const api0 = await roundTrips(apiMetrics);
    const worker0 = await roundTrips(ctx.stack.workerMetricsUrl);
    let done: Turn | undefined;
    const ms = await timed(async () => (done = await turn(ctx, threadId, T2_MESSAGE)));
    // The execution closes after the turn's end is written: every worker round trip of the turn is behind it.
    await ctx.stepwiseTemporal.workflow.getHandle(done!.run_id).result();
    const count = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
    commands[which].push(
      count(minus(await roundTrips(apiMetrics), api0)) +
        count(minus(await roundTrips(ctx.stack.workerMetricsUrl), worker0)),
    );
    bytes[which].push(await historyBytes(ctx, done!.run_id));
    return ms;
  };
  const warmup = 2;
  const { a, b } = await interleave(10 * ctx.scale, measure('large', large), measure('small', small), warmup);
  const median = (xs: number[]) => summarize(xs.slice(warmup)).p50;
  const sa = summarize(a);
  const sb = summarize(b);
  const ratios = {
    latency: sa.p50 / sb.p50,
    commands: median(commands.large) / median(commands.small),
    historyBytes: median(bytes.large) / median(bytes.small),
  };
  const worst = Math.max(...Object.values(ratios));
  // The measured turns that compacted (a summary at their pos 1): the same share in both arms.
  const compacted = (threadId: string, from: number) =>
    threadMessagesCollection(ctx.stack.database.db).countDocuments({
      thread_id: threadId,
      role: 'summary',
      turn: { $gte: from + warmup },
    });
  const compactions = { large: await compacted(large, 496), small: await compacted(small, 8) };
  return {
    id: 'T2',
    what: `growth of one thread: turns 498… ÷ turns 10… (${sa.n} each, earlier turns seeded in the database; 10 KiB messages, 2 KiB answers, context_tokens ${T2_CONTEXT_TOKENS}, compacted ${compactions.large} and ${compactions.small} of them): turn latency (POST ?wait), database commands per turn (API + worker, scrapes included alike), Temporal history bytes per turn; ratios ${Object.entries(
      ratios,
    )
      .map(([k, v]) => `${k} ${round(v, 2)}×`)
      .join(', ')}`,
    stepwise: `p50 ${round(sa.p50, 0)} ms, ${median(commands.large)} commands, ${median(bytes.large)} history bytes`,
    bare: `p50 ${round(sb.p50, 0)} ms, ${median(commands.small)} commands, ${median(bytes.small)} history bytes`,
    ratio: worst,
    target: '≤ 1.2× each',
    pass: worst <= 1.2,
    detail: { ratios, large: sa, small: sb, commands, bytes, compactions },
  };
}

/** Untimed, before the timed rounds: both arms' paths warm. */
const T3_WARMUP_CHAINS = 5;

export async function t3Concurrent(ctx: BenchContext): Promise<Row> {
  const chains = 50;
  const turns = 10;
  const rounds = ctx.scale;
  const template = await agentTemplate(ctx, MOCK_LLM_MODEL, 'T3');
  const workflow = await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'bench T3 agent step',
    steps: [{ id: 'a1', template_id: template, input: { question: 'go' } }],
  });
  const threadsArm = (n: number) => async () => {
    const ids = await Promise.all(Array.from({ length: n }, (_, i) => newThread(ctx, template, `T3 ${i}`)));
    // Thread creation is not timed: the row compares the turns with the runs.
    return timed(() =>
      Promise.all(
        ids.map(async (id) => {
          for (let t = 0; t < turns; t++) await turn(ctx, id);
        }),
      ),
    );
  };
  const runsArm = (n: number) => () =>
    timed(() =>
      Promise.all(
        Array.from({ length: n }, async () => {
          for (let t = 0; t < turns; t++) await ctx.api.waitForCompletion(await ctx.api.startRun(workflow.data.id, {}));
        }),
      ),
    );
  await threadsArm(T3_WARMUP_CHAINS)();
  await runsArm(T3_WARMUP_CHAINS)();
  const [a, b] = await interleaveArms(rounds, [threadsArm(chains), runsArm(chains)], 0);
  const rate = (samples: number[]) => (chains * turns) / (summarize(samples).p50 / 1000);
  const ratio = rate(a!) / rate(b!);
  return {
    id: 'T3',
    what: `${chains} threads chatting at once, ${turns} turns each (POST ?wait) ÷ ${chains} concurrent chains of ${turns} runs of a one-agent-step workflow (start + status), mock LLM ${MOCK_LLM_LATENCY_MS} ms; ${rounds} rounds, interleaved`,
    stepwise: `${round(rate(a!), 1)} turns/s`,
    bare: `${round(rate(b!), 1)} runs/s`,
    ratio,
    target: '≥ 0.9×',
    pass: ratio >= 0.9,
    detail: { threadsMs: a, runsMs: b, chains, turns },
  };
}
