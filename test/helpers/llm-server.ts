/**
 * A real HTTP server on a free 127.0.0.1 port that speaks the OpenAI chat-completions API (`POST …/chat/completions`)
 * and the Anthropic messages API (`POST …/messages`), lists its models (`GET …/models`), answering from per-model scripts so that the real provider code
 * of the AI SDK runs over HTTP in the tests. Scripts are keyed by the request's `model`: one server (and one worker
 * configured with its URL) serves many tests at once, each with its own unique model name.
 *
 * Every request body is recorded (with the auth headers, so tests can assert keys were sent and never leaked).
 *
 * A request that asks for a stream (`"stream": true`, what the provider code sends) is answered with server-sent
 * chunks in the API's own streaming format; a reply's `stream` plan splits its text into chunks, holds the rest until
 * a promise settles, drops the connection part-way (a failure mid-stream) or ends the body there as if it were whole.
 * A reply can also bend the protocol the way some servers do: `unstreamed` answers a streamed request with a plain
 * JSON completion, `usage: null` sends no usage at all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object (sent as JSON) or a string sent verbatim as the arguments text (for malformed-argument tests). */
  args: unknown;
  id?: string;
}

/** How a streamed reply's text is sent. */
export interface StreamPlan {
  /** Characters per chunk (default: the text in about 16 chunks). */
  chunkChars?: number;
  /** Once this many characters are sent, the rest waits until `until` settles (the call is still going on). */
  holdAfter?: { chars: number; until: Promise<unknown> };
  /** Once this many characters are sent (and a hold there is over), the connection is dropped without an end. */
  breakAfter?: number;
  /** Once this many characters are sent, the body ends cleanly, with no finish chunk (a proxy's cut answer). */
  endAfter?: number;
  /** Called once this many characters are sent (with `holdAfter`: before the hold). */
  onSent?: { chars: number; call: () => void };
}

/**
 * `usage: null`: the answer reports no usage (no usage chunk in a stream, no `usage` in a JSON body; OpenAI API only).
 * `unstreamed`: answered as one `application/json` completion even when the request asked for a stream.
 */
interface AnswerOptions {
  usage?: ScriptedUsage | null;
  stream?: StreamPlan;
  unstreamed?: boolean;
}

export type ScriptedReply =
  | ({ text: string } & AnswerOptions)
  | ({ toolCalls: ScriptedToolCall[]; text?: string } & AnswerOptions)
  | { status: number; message?: string; headers?: Record<string, string> }
  /** Keeps the request open until `release` resolves, then answers with its value (never, if it never resolves). */
  | { hold: Promise<ScriptedReply> };

export interface ScriptedUsage {
  input: number;
  output: number;
}

export interface RecordedRequest {
  api: 'openai' | 'anthropic';
  path: string;
  authorization: string | undefined;
  apiKeyHeader: string | undefined;
  body: Record<string, unknown>;
  /** True once the client closed the connection before the answer was sent (e.g. a cancelled call). */
  aborted: boolean;
}

/** A script answers the n-th request (0-based) for its model; past the end of an array the last reply repeats. */
export type Script = ScriptedReply[] | ((request: RecordedRequest, index: number) => ScriptedReply);

export interface ModelScript {
  /** The model name to put in a template (without the provider prefix). */
  model: string;
  requests: RecordedRequest[];
  /** Resolves once `count` requests for this model arrived (rejects after the deadline). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
}

export interface LlmServer {
  /** `http://127.0.0.1:<port>/v1`: the base URL for OPENAI_BASE_URL, ANTHROPIC_BASE_URL and LLM_BASE_URL. */
  baseUrl: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  script(model: string, script: Script): ModelScript;
  close(): Promise<void>;
}

const DEFAULT_USAGE: ScriptedUsage = { input: 11, output: 7 };

type Answer = { text?: string; toolCalls?: ScriptedToolCall[] } & AnswerOptions;

function openAiBody(model: string, reply: Answer, n: number) {
  const usage = reply.usage === undefined ? DEFAULT_USAGE : reply.usage;
  const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${n}_${i}`,
    type: 'function',
    function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) },
  }));
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000 + n,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
      },
    ],
    ...(usage
      ? {
          usage: {
            prompt_tokens: usage.input,
            completion_tokens: usage.output,
            total_tokens: usage.input + usage.output,
          },
        }
      : {}),
  };
}

function anthropicBody(model: string, reply: Answer, n: number) {
  const usage = reply.usage ?? DEFAULT_USAGE;
  const content: unknown[] = [];
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const [i, c] of (reply.toolCalls ?? []).entries()) {
    content.push({ type: 'tool_use', id: c.id ?? `toolu_${n}_${i}`, name: c.name, input: c.args });
  }
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

function errorBody(api: RecordedRequest['api'], status: number, message: string) {
  if (api === 'anthropic') {
    const type =
      status === 401
        ? 'authentication_error'
        : status === 429
          ? 'rate_limit_error'
          : status >= 500
            ? 'api_error'
            : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null } };
}

/** Writes one chunk, waiting while the socket's buffer is full (a 100 000-character answer is many chunks). */
async function writeChunk(res: http.ServerResponse, text: string): Promise<void> {
  if (res.destroyed) return;
  if (res.write(text)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** Sends the text in chunks as the plan says; false when the plan dropped the connection. */
async function streamText(res: http.ServerResponse, text: string, plan: StreamPlan, send: (piece: string) => string) {
  // By default about 16 chunks of at least 8 characters: streamed, and cheap for a long answer.
  const size = plan.chunkChars ?? Math.max(8, Math.ceil(text.length / 16));
  let sent = 0;
  let held = false;
  let told = false;
  while (sent < text.length) {
    const piece = text.slice(sent, sent + size);
    await writeChunk(res, send(piece));
    sent += piece.length;
    if (plan.onSent && !told && sent >= plan.onSent.chars) {
      told = true;
      plan.onSent.call();
    }
    if (plan.holdAfter && !held && sent >= plan.holdAfter.chars) {
      held = true;
      await plan.holdAfter.until;
    }
    if (plan.breakAfter !== undefined && sent >= plan.breakAfter) {
      res.destroy();
      return false;
    }
    if (plan.endAfter !== undefined && sent >= plan.endAfter) {
      res.end();
      return false;
    }
  }
  return true;
}

async function streamOpenAi(res: http.ServerResponse, model: string, reply: Answer, n: number): Promise<void> {
  const usage = reply.usage === undefined ? DEFAULT_USAGE : reply.usage;
  const base = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000 + n, model };
  const frame = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
  const choice = (delta: unknown, finish: string | null = null) =>
    frame({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  await writeChunk(res, choice({ role: 'assistant', content: '' }));
  const whole = await streamText(res, reply.text ?? '', reply.stream ?? {}, (piece) => choice({ content: piece }));
  if (!whole) return;
  const calls = reply.toolCalls ?? [];
  for (const [i, c] of calls.entries()) {
    const args = typeof c.args === 'string' ? c.args : JSON.stringify(c.args);
    const call = {
      index: i,
      id: c.id ?? `call_${n}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: args },
    };
    await writeChunk(res, choice({ tool_calls: [call] }));
  }
  await writeChunk(res, choice({}, calls.length ? 'tool_calls' : 'stop'));
  if (usage) {
    const tokens = {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    };
    await writeChunk(res, frame({ ...base, choices: [], usage: tokens }));
  }
  res.end('data: [DONE]\n\n');
}

async function streamAnthropic(res: http.ServerResponse, model: string, reply: Answer, n: number): Promise<void> {
  const usage = reply.usage ?? DEFAULT_USAGE;
  const frame = (body: { type: string } & Record<string, unknown>) =>
    `event: ${body.type}\ndata: ${JSON.stringify(body)}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const message = { id: `msg_${n}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null };
  await writeChunk(
    res,
    frame({ type: 'message_start', message: { ...message, usage: { input_tokens: usage.input, output_tokens: 0 } } }),
  );
  let index = 0;
  if (reply.text) {
    await writeChunk(res, frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    const delta = (text: string) => frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    if (!(await streamText(res, reply.text, reply.stream ?? {}, delta))) return;
    await writeChunk(res, frame({ type: 'content_block_stop', index }));
    index++;
  }
  for (const [i, c] of (reply.toolCalls ?? []).entries()) {
    const block = { type: 'tool_use', id: c.id ?? `toolu_${n}_${i}`, name: c.name, input: {} };
    const json = typeof c.args === 'string' ? c.args : JSON.stringify(c.args);
    await writeChunk(res, frame({ type: 'content_block_start', index, content_block: block }));
    const delta = { type: 'input_json_delta', partial_json: json };
    await writeChunk(res, frame({ type: 'content_block_delta', index, delta }));
    await writeChunk(res, frame({ type: 'content_block_stop', index }));
    index++;
  }
  const stop = reply.toolCalls?.length ? 'tool_use' : 'end_turn';
  await writeChunk(
    res,
    frame({
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  );
  res.end(frame({ type: 'message_stop' }));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the server; `close()` stops it and drops held connections. */
export async function startLlmServer(): Promise<LlmServer> {
  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, { script: Script; requests: RecordedRequest[]; waiters: (() => void)[] }>();
  let counter = 0;

  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = req.url ?? '';
      const api: RecordedRequest['api'] | null = path.endsWith('/chat/completions')
        ? 'openai'
        : path.endsWith('/messages')
          ? 'anthropic'
          : null;
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        if (res.writableEnded || res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      // What `npm run dev` probes to find a local server (devstack/local-llm.ts): the scripted models, OpenAI's shape.
      if (req.method === 'GET' && path.endsWith('/models')) {
        return send(200, { object: 'list', data: [...scripts.keys()].map((id) => ({ id, object: 'model' })) });
      }
      if (req.method !== 'POST' || api === null)
        return send(404, { error: { message: `no route ${req.method} ${path}` } });
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return send(400, errorBody(api, 400, 'request body is not JSON'));
      }
      const recorded: RecordedRequest = {
        api,
        path,
        authorization: req.headers.authorization,
        apiKeyHeader: req.headers['x-api-key'] as string | undefined,
        body,
        aborted: false,
      };
      res.on('close', () => {
        if (!res.writableFinished) recorded.aborted = true;
      });
      requests.push(recorded);
      const model = String(body.model);
      const entry = scripts.get(model);
      if (!entry) return send(404, errorBody(api, 404, `The model \`${model}\` does not exist`));
      const index = entry.requests.length;
      entry.requests.push(recorded);
      for (const wake of entry.waiters.splice(0)) wake();
      const n = ++counter;
      let reply: ScriptedReply | undefined =
        typeof entry.script === 'function'
          ? entry.script(recorded, index)
          : entry.script[Math.min(index, entry.script.length - 1)];
      while (reply && 'hold' in reply) reply = await reply.hold;
      if (!reply) return send(500, errorBody(api, 500, 'empty script'));
      if ('status' in reply)
        return send(
          reply.status,
          errorBody(api, reply.status, reply.message ?? `scripted ${reply.status}`),
          reply.headers,
        );
      if (body.stream === true && reply.unstreamed !== true) {
        return api === 'openai' ? streamOpenAi(res, model, reply, n) : streamAnthropic(res, model, reply, n);
      }
      return send(200, api === 'openai' ? openAiBody(model, reply, n) : anthropicBody(model, reply, n));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(model, script) {
      const entry = { script, requests: [] as RecordedRequest[], waiters: [] as (() => void)[] };
      scripts.set(model, entry);
      return {
        model,
        requests: entry.requests,
        async waitForRequests(count, timeoutMs = 30_000) {
          const deadline = Date.now() + timeoutMs;
          while (entry.requests.length < count) {
            const left = deadline - Date.now();
            if (left <= 0)
              throw new Error(`model ${model}: saw ${entry.requests.length} requests, waited for ${count}`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, left);
              entry.waiters.push(() => {
                clearTimeout(timer);
                resolve();
              });
            });
          }
        },
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
