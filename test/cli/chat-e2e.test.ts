/**
 * `stepwise chat` as a person and as a script use it, against the real stack (API, worker, Temporal, the database),
 * a scripted model and an MCP server with a destructive tool. At a terminal (the CLI run in a pseudo-terminal by a
 * small Python driver, test/cli/pty-driver.py): the reply's text shows while the model still writes it, a tool call
 * waits for an approval typed inline, Ctrl-C cancels the running turn and the chat goes on, Ctrl-D ends it with the
 * thread id, and resuming the thread shows its recent conversation. With stdin and stdout piped: the lines of stdin
 * are the messages (and the approval's answer), stdout is plain lines with no control sequences; a message sent
 * after another client answered is refused as stale, never answered twice. And `threads
 * create|list|get|messages|fork|delete`, in-process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { runCli } from '../../cli/run';
import { loadConfig } from '../../config';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { insertTemplate } from '../helpers/workflows';
import type { Script } from '../helpers/llm-server';
import { startFailureServer, type FailureServer } from '../mcp/mcp-test-servers';

const ROOT = path.resolve(__dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const DRIVER = path.join(__dirname, 'pty-driver.py');

/** What a terminal shows, without its control sequences (colours, readline's redraws) and carriage returns. */
// eslint-disable-next-line no-control-regex -- the sequences are what is removed
const visible = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** The CLI in a pseudo-terminal: `send` types keys, `expect` waits for text to show after what was matched before. */
class Terminal {
  private output = '';
  private seen = 0;
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly listeners = new Set<() => void>();
  readonly exit: Promise<number>;

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.proc = spawn('python3', [DRIVER, TSX, 'cli/index.ts', ...args], { cwd: ROOT, env });
    let exited!: (code: number) => void;
    this.exit = new Promise((resolve) => (exited = resolve));
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as { data?: string; exit?: number };
      if (msg.data !== undefined) this.output += msg.data;
      if (msg.exit !== undefined) exited(msg.exit);
      for (const l of this.listeners) l();
    });
  }

  get screen(): string {
    return visible(this.output);
  }

  send(keys: string): void {
    this.proc.stdin.write(`${JSON.stringify({ send: keys })}\n`);
  }

  /** Resolves with the match once `pattern` shows after the previous match; fails after 60 s with the screen. */
  expect(pattern: RegExp, ms = 60_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const rest = this.screen.slice(this.seen);
        const match = pattern.exec(rest);
        if (!match) return false;
        this.seen += match.index + match[0].length;
        this.listeners.delete(listener);
        clearTimeout(timer);
        resolve(match);
        return true;
      };
      const listener = () => void check();
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`${pattern} did not show within ${ms} ms; the terminal shows:\n${this.screen}`));
      }, ms);
      this.listeners.add(listener);
      check();
    });
  }

  kill(): void {
    this.proc.stdin.write(`${JSON.stringify({ kill: true })}\n`);
  }
}

describe('stepwise chat', () => {
  let g: GraphStack;
  let mcp: FailureServer;
  let env: NodeJS.ProcessEnv;
  let ops: { id: string; name: string };
  const holds: (() => void)[] = [];

  beforeAll(async () => {
    mcp = await startFailureServer();
    g = await startGraphStack({ EVENTS_POLL_MS: '50', HTTP_ALLOWED_HOSTS: mcp.host });
    const url = await g.api.listen();
    env = { ...process.env, STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key, FORCE_COLOR: '0' };
    const res = await g.api.http
      .post('/api/v1/mcp-servers')
      .set(g.user.auth)
      .send({ name: uniqueId('ops'), url: mcp.url, allowed_tools: ['wipe'] });
    expect(res.status).toBe(201);
    ops = res.body.data;
  }, 60_000);
  afterAll(async () => {
    for (const release of holds) release();
    await g?.stop();
    await mcp?.close();
  });

  /** An agent template on a fresh scripted model, with the MCP server's destructive `wipe`. */
  const template = async (script: Script) => {
    const model = g.llm.script(uniqueId('chat-'), script);
    const tpl = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('chat buddy '),
      default_prompt: 'You are a friendly assistant.',
      model: `openai:${model.model}`,
      mcp_tools: [{ server_id: ops.id }],
    });
    return { tpl, model };
  };
  const hold = () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    holds.push(release);
    return { released, release };
  };

  it('at a terminal: live text, an approval typed inline, Ctrl-C cancels the turn, Ctrl-D ends; resume shows it', async () => {
    const greeting = hold();
    const story = hold();
    const { tpl, model } = await template([
      {
        text: 'Hello Ada! Nice to meet you.',
        stream: { chunkChars: 4, holdAfter: { chars: 12, until: greeting.released } },
      },
      { toolCalls: [{ name: `${ops.name}__wipe`, args: { target: 'staging' } }] },
      { text: 'Wiped staging.' },
      {
        text: 'Once upon a time, a long story.',
        stream: { chunkChars: 4, holdAfter: { chars: 16, until: story.released } },
      },
    ]);
    const term = new Terminal(['chat', tpl.name, '--title', 'pty chat'], env);
    const [, threadId] = await term.expect(/New thread (thr_\S+) with /);
    await term.expect(/you> $/);

    // Live text: the first part shows while the model server still holds the rest of the answer.
    term.send('Hi, I am Ada\r');
    await term.expect(/agent> Hello Ada!/);
    expect(model.requests).toHaveLength(1);
    expect(term.screen).not.toContain('Nice to meet');
    greeting.release();
    await term.expect(/Nice to meet you\.\n/);
    await term.expect(/you> $/);

    // An approval asked inline; the decision goes through the approvals API and the tool call is made.
    term.send('Please wipe staging\r');
    await term.expect(/· \S+__wipe needs your approval: .*"target":"staging"/);
    await term.expect(/approve\? \[y\/n\] $/);
    expect(mcp.callsOf('wipe')).toHaveLength(0);
    term.send('y\r');
    await term.expect(/· \S+__wipe ok: /);
    await term.expect(/agent> Wiped staging\.\n/);
    expect(mcp.callsOf('wipe').map((c) => c.args)).toEqual([{ target: 'staging' }]);
    await term.expect(/you> $/);

    // Ctrl-C during a turn cancels the turn, not the chat.
    term.send('Tell me a long story\r');
    await term.expect(/agent> Once upon a ti/);
    term.send('\x03');
    await term.expect(/cancelling turn 3/);
    await term.expect(/turn 3 cancelled/);
    await term.expect(/you> $/);

    // Ctrl-D at the prompt ends the chat and says how to resume it.
    term.send('\x04');
    await term.expect(new RegExp(`Resume it with: npm run cli -- chat ${threadId}`));
    expect(await term.exit).toBe(0);
    story.release();

    // Resumed: the recent conversation first, then the prompt; Ctrl-C at the prompt ends the chat.
    const again = new Terminal(['chat', threadId!], env);
    await again.expect(new RegExp(`Thread ${threadId} with ${tpl.name}: pty chat`));
    await again.expect(/you> Hi, I am Ada\nagent> Hello Ada! Nice to meet you\.\n/);
    await again.expect(/you> Please wipe staging\n/);
    // The approval in its place, with the decision: after the call was asked for, before its result.
    await again.expect(/ {2}\? approval of \S+__wipe\(\{"target":"staging"\}\): approved by \S+\n {2}· \S+__wipe\(/);
    await again.expect(/agent> Wiped staging\.\n/);
    await again.expect(/you> Tell me a long story\n {2}\(turn 3 cancelled/);
    await again.expect(/you> $/);
    again.send('\x03');
    await again.expect(new RegExp(`Resume it with: npm run cli -- chat ${threadId}`));
    expect(await again.exit).toBe(0);
    expect(model.requests).toHaveLength(4);
  }, 180_000);

  it('piped: the lines of stdin are the messages and the approval, stdout is plain lines', async () => {
    const { tpl } = await template([
      { text: 'Hello!' },
      { toolCalls: [{ name: `${ops.name}__wipe`, args: { target: 'prod' } }] },
      { text: 'Wiped prod.' },
    ]);
    const proc = spawn(TSX, ['cli/index.ts', 'chat', tpl._id], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdin.end('Hi\nPlease wipe prod\ny\n');
    const code = await new Promise<number | null>((resolve) => proc.on('close', resolve));
    expect({ code, stderr }).toMatchObject({ code: 0 });
    const wipe = `${ops.name}__wipe`;
    expect(stdout.trimEnd().split('\n')).toEqual([
      'you> Hi',
      'agent> Hello!',
      'you> Please wipe prod',
      expect.stringMatching(new RegExp(`^ {2}· ${wipe} needs your approval: .*"target":"prod"`)),
      'approve? [y/n]',
      `  · ${wipe} approved`,
      expect.stringMatching(new RegExp(`^ {2}· ${wipe} ok: `)),
      'agent> Wiped prod.',
    ]);
    expect(stdout).not.toContain('\x1b');
    expect(stderr).toMatch(/^New thread thr_\S+ with /);
    expect(stderr).toMatch(/Resume it with: npm run cli -- chat thr_\S+\n$/);
    expect(mcp.callsOf('wipe').map((c) => c.args)).toContainEqual({ target: 'prod' });
  }, 120_000);

  it('piped: a message after another client answered is refused (stale), not answered twice', async () => {
    const { tpl } = await template([{ text: 'First answer.' }, { text: 'Second answer.' }, { text: 'Third.' }]);
    const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl._id });
    const threadId = created.body.data.id as string;
    const first = await g.api.http
      .post(`/api/v1/threads/${threadId}/messages?wait=30`)
      .set(g.user.auth)
      .send({ text: 'Before the chat' });
    expect(first.status).toBe(200);
    const proc = spawn(TSX, ['cli/index.ts', 'chat', threadId], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const opened = new Promise<void>((resolve) =>
      proc.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes(`Thread ${threadId} with`)) resolve();
      }),
    );
    await opened;
    // Another client talks in the thread after the chat read it.
    const other = await g.api.http
      .post(`/api/v1/threads/${threadId}/messages?wait=30`)
      .set(g.user.auth)
      .send({ text: 'From elsewhere' });
    expect(other.status).toBe(200);
    proc.stdin.end('Hello from the chat\n');
    const code = await new Promise<number | null>((resolve) => proc.on('close', resolve));
    expect(code).toBe(1);
    expect(stdout.trimEnd().split('\n')).toEqual([
      'you> Before the chat',
      'agent> First answer.',
      'you> Hello from the chat',
    ]);
    expect(stderr).toMatch(/not sent: .*\(HTTP 409 stale_after\)/);
    expect(stderr).toContain(`the thread moved on (another client): npm run cli -- threads messages ${threadId}`);
    const thread = await g.api.http.get(`/api/v1/threads/${threadId}`).set(g.user.auth);
    expect(thread.body.data.turns).toBe(2);
  }, 120_000);
});

describe('stepwise threads', () => {
  let g: GraphStack;
  let config: ReturnType<typeof loadConfig>;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
    config = loadConfig({ STEPWISE_URL: await g.api.listen(), STEPWISE_API_KEY: g.user.key });
  }, 60_000);
  afterAll(() => g?.stop());

  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };

  it('create, list, get, messages, fork, delete', async () => {
    const model = g.llm.script(uniqueId('threads-cli-'), [{ text: 'Pack light.' }]);
    const tpl = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('packer '),
      default_prompt: 'You help pack.',
      model: `openai:${model.model}`,
    });
    const created = await cli('threads', 'create', tpl.name, '--title', 'Lisbon trip');
    expect(created.code).toBe(0);
    const id = created.out[0]!;
    expect(id).toMatch(/^thr_/);
    const sent = await g.api.http
      .post(`/api/v1/threads/${id}/messages?wait=30`)
      .set(g.user.auth)
      .send({ text: 'What to pack?' });
    expect(sent.status).toBe(200);

    const list = await cli('threads', 'list', '--search', 'lisbon');
    expect(list.out[0]).toMatch(/^THREAD\s+TITLE\s+TEMPLATE\s+TURNS\s+RUNNING\s+UPDATED\s+TOKENS$/);
    expect(list.out.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${id}\\s+Lisbon trip\\s+${tpl.name}\\s+1\\s+-`)),
    ]);
    const get = await cli('threads', 'get', id);
    expect(get.out[0]).toBe(`${id}  Lisbon trip  ${tpl.name} (${tpl._id})`);
    expect(get.out[1]).toMatch(/^turns 1 {2}messages 2 {2}running - {2}queued 0 {2}tokens \d+$/);
    expect((await cli('threads', 'messages', id)).out).toEqual(['you> What to pack?', 'agent> Pack light.']);

    const fork = await cli('threads', 'fork', id, '--at', 'm1.0', '--title', 'Take two');
    expect(fork.code).toBe(0);
    expect(fork.out[0]).toMatch(/^thr_/);
    expect((await cli('threads', 'messages', fork.out[0]!)).out).toEqual(['you> What to pack?']);
    const json = await cli('threads', 'messages', id, '--json');
    expect(json.out.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['m1.0', sent.body.data.reply.id]);

    expect((await cli('threads', 'delete', id)).out).toEqual([`deleted ${id}`]);
    const gone = await cli('threads', 'get', id);
    expect(gone.code).toBe(1);
    expect(gone.err.join('\n')).toMatch(/HTTP 404/);
  }, 90_000);
});
