/**
 * Loaded first in each of the worker's workflow threads (./workflow-threads.ts adds it to their execArgv). Temporal's
 * sandbox installs a V8 promise hook there that records a source-mapped stack trace for every promise a workflow
 * creates, only to answer the `__stack_trace` query. This leaves the hook out: the SDK then runs as it does on runtimes
 * without promise hooks (the query answers "stack traces are not enabled"); errors keep their source-mapped stacks.
 * Plain CommonJS: it runs before any loader, in a thread.
 */
'use strict';
const { isMainThread } = require('node:worker_threads');

if (!isMainThread) {
  try {
    const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared');
    globalHandlers.setPromiseHook = () => undefined;
  } catch {
    // An SDK that moved its internals: the hook stays (slower, not wrong); test/temporal/workflow-stack-traces.test.ts
    // says so.
  }
}
