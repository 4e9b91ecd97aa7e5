/**
 * Runs JSONata where a runaway cannot hurt anything else: in a small pool of separate node processes (child.js),
 * each with its own heap limit, killed by this side's timer when an evaluation outlives its time limit, and replaced.
 *
 * Why processes, not worker threads: JSONata checks its time limit only between evaluation steps, so one built-in
 * call (a backtracking regex, `$pad("", 5e8)`) holds whatever thread it runs on; and a worker thread's
 * `resourceLimits` do not contain a single allocation larger than the limit — V8 then aborts the whole process
 * (reproduced with `'x'.repeat(1e8).split('')` under a 64 MB limit). A child process dies alone.
 *
 * The worker process creates one evaluator at start (temporal/main.ts) and passes it down to actions and tools;
 * `close()` on shutdown.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { JsonValue } from '../../domain/json';
import { NonRetryableError, RetryableError } from '../failures';
import type { EvaluationLimits, EvaluatorOptions } from './limits';

export interface ExpressionEvaluator {
  /**
   * Evaluates a JSONata `expression` over `data`; resolves to plain JSON (null when nothing is selected, functions
   * dropped). A bad expression or a limit hit rejects with `expression_error` (NonRetryableError); no free evaluator
   * in time or a closed pool rejects retryably.
   */
  evaluate(expression: string, data: JsonValue, limits?: Partial<EvaluationLimits>): Promise<JsonValue>;
  /** Ends every evaluator process; pending evaluations fail retryably. */
  close(): Promise<void>;
}

/** The only things that cross into the evaluator: the expression, the data and the limits. */
interface Request {
  id: number;
  expression: string;
  data: JsonValue;
  limits: EvaluationLimits;
}

type Reply =
  | { ready: true }
  | { id: number; ok: true; json: string }
  | { id: number; ok: false; message: string; limit?: 'time' | 'memory' | 'size' | 'regex' };

interface Job {
  request: Request;
  resolve(value: JsonValue): void;
  reject(err: Error): void;
  queueTimer?: NodeJS.Timeout;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  /** Out of the pool: killed, exited or failed; its exit only needs to be awaited. */
  retired: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
  exited: Promise<void>;
}

const CHILD_SCRIPT = path.join(__dirname, 'child.js');

function expressionError(message: string, limit?: string): NonRetryableError {
  return new NonRetryableError('expression_error', `expression: ${message}`, limit ? { details: { limit } } : {});
}

export function createExpressionEvaluator(options: EvaluatorOptions): ExpressionEvaluator {
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): void {
    const child = fork(CHILD_SCRIPT, [], {
      // No inherited flags (no tsx loader, no inspector), no environment (no secrets), no eval-like code generation.
      execArgv: [`--max-old-space-size=${options.memoryMb}`, '--disallow-code-generation-from-strings'],
      env: {},
      // stderr ignored: an out-of-memory child prints V8's report there, which says nothing the error does not.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'advanced',
    });
    const slot: Slot = {
      child,
      ready: false,
      retired: false,
      // 'error' too: a child that failed to spawn never emits 'exit'.
      exited: new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.on('error', () => resolve());
      }),
    };
    slots.add(slot);
    // An idle pool does not keep the process alive; a running evaluation's timer does.
    child.unref();
    child.channel?.unref();
    const startTimer = setTimeout(() => child.kill('SIGKILL'), options.startTimeoutMs);
    startTimer.unref();
    child.on('message', (reply: Reply) => {
      if ('ready' in reply) {
        clearTimeout(startTimer);
        slot.ready = true;
        pump();
      } else {
        onReply(slot, reply);
      }
    });
    const onGone = () => {
      clearTimeout(startTimer);
      onExit(slot);
    };
    child.once('exit', onGone);
    // `on`, not `once`: a second 'error' (a failed kill or send) without a listener would crash the worker.
    child.on('error', onGone);
  }

  function retire(slot: Slot): void {
    slot.retired = true;
    slots.delete(slot);
    clearTimeout(slot.timer);
    if (slot.child.exitCode === null && slot.child.signalCode === null) slot.child.kill('SIGKILL');
  }

  function onExit(slot: Slot): void {
    if (slot.retired) return pump();
    const wasReady = slot.ready;
    const job = slot.job;
    retire(slot);
    if (job) {
      // JavaScript errors are answered, not fatal: an evaluator that dies mid-evaluation ran out of heap (V8 aborts).
      job.reject(expressionError(`stopped: it needs more memory than the limit (${options.memoryMb} MB)`, 'memory'));
    } else if (!wasReady) {
      // Failing to start is not the expressions' fault; do not respawn in a loop, let the callers retry later.
      for (const queued of queue.splice(0)) {
        clearTimeout(queued.queueTimer);
        queued.reject(new RetryableError('internal', 'the expression evaluator could not start'));
      }
    }
    pump();
  }

  function onReply(slot: Slot, reply: Exclude<Reply, { ready: true }>): void {
    const job = slot.job;
    // An answer that lost the race against the timer (its caller already heard "time limit").
    if (slot.retired || !job || job.request.id !== reply.id) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    if (reply.ok) {
      job.resolve(JSON.parse(reply.json) as JsonValue);
    } else {
      job.reject(expressionError(reply.message, reply.limit));
    }
    pump();
  }

  function dispatch(slot: Slot, job: Job): void {
    clearTimeout(job.queueTimer);
    slot.job = job;
    const { timeoutMs } = job.request.limits;
    // The hard limit: JSONata's own check cannot interrupt a built-in call, killing the process can.
    slot.timer = setTimeout(() => {
      retire(slot);
      job.reject(expressionError(`took longer than the time limit (${timeoutMs} ms)`, 'time'));
      pump();
    }, timeoutMs);
    slot.child.send(job.request, (err) => {
      if (!err || slot.job !== job) return;
      retire(slot);
      job.reject(new RetryableError('internal', 'the expression evaluator stopped unexpectedly', { cause: err }));
      pump();
    });
  }

  function pump(): void {
    if (closed) return;
    for (const slot of slots) {
      const job = slot.ready && !slot.job ? queue.shift() : undefined;
      if (job) dispatch(slot, job);
    }
    let starting = [...slots].filter((s) => !s.ready).length;
    while (queue.length > starting && slots.size < options.processes) {
      spawn();
      starting++;
    }
  }

  return {
    evaluate(expression, data, limits) {
      if (closed) return Promise.reject(new RetryableError('internal', 'the expression evaluator is closed'));
      return new Promise<JsonValue>((resolve, reject) => {
        const request: Request = { id: nextId++, expression, data, limits: { ...options.limits, ...limits } };
        const job: Job = { request, resolve, reject };
        job.queueTimer = setTimeout(() => {
          const i = queue.indexOf(job);
          if (i < 0) return;
          queue.splice(i, 1);
          reject(new RetryableError('timeout', `no expression evaluator was free within ${options.queueTimeoutMs} ms`));
        }, options.queueTimeoutMs);
        queue.push(job);
        pump();
      });
    },

    async close() {
      closed = true;
      for (const job of queue.splice(0)) {
        clearTimeout(job.queueTimer);
        job.reject(new RetryableError('internal', 'the expression evaluator was closed'));
      }
      const all = [...slots];
      for (const slot of all) {
        const job = slot.job;
        retire(slot);
        job?.reject(new RetryableError('internal', 'the expression evaluator was closed'));
      }
      await Promise.all(all.map((s) => s.exited));
    },
  };
}
