/**
 * Child processes of the dev stack and the test suite: spawned in their own process group, logged to a file,
 * awaited on a printed line or an open port, and stopped with SIGTERM then SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Managed {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** SIGTERM the process group, SIGKILL after `graceMs`. Resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function startProcess(opts: StartOptions): Managed {
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a');
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', out, out],
    // Own process group: stopping it stops whatever the child started too (tsx, java, temporal's UI server).
    detached: true,
  });
  fs.closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${opts.name} (${opts.command})`);
  const pid = child.pid;
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // Grandchildren that ignored SIGTERM must not outlive us.
      signalGroup(pid, 'SIGKILL');
    })();
    return stopping;
  };
  return { name: opts.name, pid, logFile: opts.logFile, child, stop, exited };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Waits until `predicate` holds, polling every `intervalMs`; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  predicate: () => Promise<boolean> | boolean,
  { timeoutMs = 60_000, intervalMs = 100 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Resolves when the log file (from `fromOffset` on) matches `pattern`; rejects if the process exits first. */
export async function waitForLog(
  proc: Managed,
  pattern: RegExp,
  { timeoutMs = 60_000, fromOffset = 0 } = {},
): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  let exitCode: number | null | undefined;
  void proc.exited.then((c) => (exitCode = c));
  await waitFor(
    `${proc.name} to print ${pattern}`,
    () => {
      if (exitCode !== undefined) throw new Error(`${proc.name} exited (code ${exitCode}); see ${proc.logFile}`);
      match = fs.readFileSync(proc.logFile, 'utf8').slice(fromOffset).match(pattern);
      return match !== null;
    },
    { timeoutMs },
  );
  return match!;
}

export function isPortOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * A port the OS says is free right now on 127.0.0.1, held back from other processes' "any free port" for a while.
 *
 * Linux hands out ports for bind(:0) at random, so a port merely closed again can go to the next process that asks,
 * such as the Temporal dev server picking its internal ports, before the server meant for it binds it. So the port
 * is left in TIME_WAIT (a connection to it, closed from the listening side first): the OS skips it for bind(:0) for
 * about a minute, while a server binding it by number (every server here sets SO_REUSEADDR) still can. The Temporal
 * CLI picks its own ports the same way.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((accepted) => accepted.destroy());
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      const client = net.connect({ port, host: '127.0.0.1' });
      client.once('error', reject);
      // The listening side closed first, so its end of the connection is the one left in TIME_WAIT.
      client.once('end', () => {
        client.destroy();
        server.close(() => resolve(port));
      });
      client.resume();
    });
  });
}

/**
 * True when nothing listens on `port` at `host`: checked by binding it (a connect test misses a listener bound to
 * another interface, e.g. 0.0.0.0 versus 127.0.0.1 behaves differently per OS).
 */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
