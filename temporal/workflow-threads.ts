/**
 * Workflow threads without Temporal's per-promise stack traces (WORKFLOW_STACK_TRACES=false, the default).
 *
 * The SDK runs workflows in worker threads and installs a V8 promise hook in each: every promise a workflow creates
 * gets a captured, source-mapped stack trace, kept only so that the `__stack_trace` query (the Web UI's "Stack Trace"
 * tab) can show where a workflow waits. Profiled, that hook was a third of the workflow thread's busy time and about a
 * quarter of the worker's CPU per run (README, Benchmarks). Stepwise's workflow code is the engine, not the user's:
 * where a run waits is what its status and events say. The SDK has no option for the hook, so the workflow threads
 * start with a preload (./workflow-thread-preload.cjs) that leaves it out; WORKFLOW_STACK_TRACES=true keeps it.
 */
import path from 'node:path';
import workerThreads from 'node:worker_threads';

const PRELOAD = path.join(__dirname, 'workflow-thread-preload.cjs');
/** The SDK's workflow thread entry (`@temporalio/worker/lib/workflow/workflow-worker-thread.js`). */
const WORKFLOW_THREAD = /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]workflow-worker-thread\.js$/;

let installed = false;

/**
 * From now on, the workflow threads this process starts load the preload first; other threads are untouched.
 * Idempotent; call it before the first Worker.create.
 */
export function startWorkflowThreadsWithoutStackTraces(): void {
  if (installed) return;
  installed = true;
  const Original = workerThreads.Worker;
  class WorkflowThreadAware extends Original {
    constructor(filename: string | URL, options: workerThreads.WorkerOptions = {}) {
      const isWorkflowThread = typeof filename === 'string' && WORKFLOW_THREAD.test(filename);
      super(
        filename,
        isWorkflowThread
          ? { ...options, execArgv: [...(options.execArgv ?? process.execArgv), '--require', PRELOAD] }
          : options,
      );
    }
  }
  workerThreads.Worker = WorkflowThreadAware;
}
