/**
 * T1's reference in the hand-written service: what a team would write by hand for a durable chat turn with live
 * text on the same stack — the message stored, a workflow started whose one activity calls the model and writes its
 * text to MongoDB as it comes (./activities.ts), and an SSE endpoint that reads that text by polling MongoDB at the
 * interval Stepwise's event streams poll (EVENTS_POLL_MS, 250 ms in the bench). No run record, quota, idempotency,
 * budgets, compaction or event log: the row's ratio is what those cost on the way to the first token.
 *
 * - `POST /chats`: a new chat (201 with its id).
 * - `POST /chats/:id/messages` `{text, model}`: the chat's turn counter, the message, the workflow's start (202).
 * - `GET /chats/:id/events`: `event: text.delta` frames of the chat's live text, in order, until the client leaves.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Context, Next } from 'koa';
import type { Db } from 'mongodb';
import type { ChatTurn } from './activities';
import { chatDeltas, chatMessages, chats } from './store';

/** Stepwise's EVENTS_POLL_MS default, which the bench stack runs with. */
const POLL_MS = 250;

const pad = (turn: number) => String(turn).padStart(9, '0');

export function addChatRoutes(
  router: Router,
  deps: { db: Db; temporal: Client; taskQueue: string },
  authenticate: (ctx: Context, next: Next) => Promise<void>,
): void {
  const { db } = deps;
  router.post('/chats', authenticate, async (ctx) => {
    const id = randomUUID();
    await chats(db).insertOne({ _id: id, owner_id: ctx.state.ownerId as string, turns: 0 });
    ctx.status = 201;
    ctx.body = { data: { id }, error: null };
  });

  router.post('/chats/:id/messages', authenticate, async (ctx) => {
    const body = ctx.request.body as { text?: string; model?: string } | undefined;
    const chat = await chats(db).findOneAndUpdate(
      { _id: ctx.params.id!, owner_id: ctx.state.ownerId as string },
      { $inc: { turns: 1 } },
      { returnDocument: 'after' },
    );
    if (!chat) {
      ctx.status = 404;
      ctx.body = { data: null, error: 'chat not found' };
      return;
    }
    const turn: ChatTurn = { chatId: chat._id, turn: chat.turns, model: body?.model ?? '' };
    await chatMessages(db).insertOne({
      _id: `${chat._id}:${pad(turn.turn)}:0`,
      chat_id: chat._id,
      turn: turn.turn,
      role: 'user',
      text: body?.text ?? '',
    });
    const workflowId = `chat-${chat._id}-${turn.turn}`;
    await deps.temporal.workflow.start('handWrittenChatTurn', { taskQueue: deps.taskQueue, workflowId, args: [turn] });
    ctx.status = 202;
    ctx.body = { data: { turn: turn.turn, workflow_id: workflowId }, error: null };
  });

  router.get('/chats/:id/events', authenticate, async (ctx) => {
    const chat = await chats(db).findOne({ _id: ctx.params.id!, owner_id: ctx.state.ownerId as string });
    if (!chat) {
      ctx.status = 404;
      ctx.body = { data: null, error: 'chat not found' };
      return;
    }
    const out = new PassThrough();
    let open = true;
    ctx.res.once('close', () => (open = false));
    ctx.req.socket.setNoDelay(true);
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = out;
    out.write(': open\n\n');
    void (async () => {
      let after = `${chat._id}:`;
      while (open) {
        const docs = await chatDeltas(db)
          .find({ chat_id: chat._id, _id: { $gt: after } })
          .sort({ _id: 1 })
          .toArray();
        for (const d of docs) {
          out.write(`event: text.delta\ndata: ${JSON.stringify({ text: d.text })}\n\n`);
          after = d._id;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      out.end();
    })().catch(() => out.end());
  });
}
