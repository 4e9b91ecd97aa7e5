/**
 * The hand-written service's activities: the same GET a Stepwise `http_request` step with only a URL makes (with an
 * Idempotency-Key), the run's outcome written to its record (run as a local activity), and T1's chat reply: the
 * chat's messages read, the model called through the same provider adapter, its first text written to the chat's
 * live text as it arrives and the rest with the answer.
 */
import type { Db } from 'mongodb';
import { createLlmProvider, type LlmConfig } from '../../temporal/llm/provider';
import { chatDeltas, chatMessages, runs } from './store';

export interface ChatTurn {
  chatId: string;
  turn: number;
  model: string;
}

export function createActivities(db: Db, llm: LlmConfig) {
  return {
    async reply(t: ChatTurn): Promise<void> {
      const messages = await chatMessages(db)
        .find({ chat_id: t.chatId, _id: { $lte: `${t.chatId}:${String(t.turn).padStart(9, '0')}:0` } })
        .sort({ _id: -1 })
        .limit(50)
        .toArray();
      const delta = (n: number, text: string) =>
        chatDeltas(db).insertOne({
          _id: `${t.chatId}:${String(t.turn).padStart(9, '0')}:${n}`,
          chat_id: t.chatId,
          text,
        });
      let first: Promise<unknown> | undefined;
      let rest = '';
      const result = await createLlmProvider(llm, t.model).generate({
        system: 'Answer briefly.',
        messages: messages
          .reverse()
          .map((m) =>
            m.role === 'user' ? { role: 'user', text: m.text } : { role: 'assistant', text: m.text, tool_calls: [] },
          ),
        tools: [],
        onText: (text) => {
          if (first) rest += text;
          else first = delta(0, text);
        },
      });
      await first;
      await Promise.all([
        rest ? delta(1, rest) : undefined,
        chatMessages(db).insertOne({
          _id: `${t.chatId}:${String(t.turn).padStart(9, '0')}:1`,
          chat_id: t.chatId,
          turn: t.turn,
          role: 'assistant',
          text: result.text ?? '',
        }),
      ]);
    },

    async request(url: string, idempotencyKey: string): Promise<unknown> {
      const res = await fetch(url, { headers: { 'Idempotency-Key': idempotencyKey } });
      return { status: res.status, body: await res.json() };
    },

    async recordOutcome(runId: string, outcome: { output: unknown } | { error: string }): Promise<void> {
      await runs(db).updateOne(
        { _id: runId },
        {
          $set:
            'error' in outcome
              ? { status: 'failed', error: outcome.error, ended_at: new Date() }
              : { status: 'completed', output: outcome.output, ended_at: new Date() },
        },
      );
    },
  };
}

export type HandWrittenActivities = ReturnType<typeof createActivities>;
