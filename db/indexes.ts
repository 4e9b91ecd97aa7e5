/**
 * Every index the service relies on, created idempotently at start. Unique indexes stand in for transactions
 * (the embedded server and a standalone mongod have none): a duplicate insert fails with code 11000 and the
 * caller treats it as "already exists".
 */
import type { Db, IndexDescription } from 'mongodb';
import { findDuplicateTemplateNames, templatesCollection, type DuplicateTemplateName } from './templates';
import { isDuplicateKey } from './duplicate-key';

/**
 * One owner's template names are unique: definitions as code (`agents apply`) and steps naming their template
 * (`template: "<name>"`) find templates by name. System templates (owner_id null) are unique by name among
 * themselves, so a legacy one moving to its stable id sets its name aside first (db/system-templates.ts). No
 * field that some documents lack is in the key: the embedded test server answers a duplicate on a null key part
 * with an error that has no code. Built apart from the others (see ensureIndexes) because a database holding
 * duplicates from before cannot have it.
 */
export const TEMPLATE_NAME_INDEX: IndexDescription = {
  key: { owner_id: 1, name: 1 },
  unique: true,
  name: 'owner_name_unique',
};

/** What ensureIndexes could not build. */
export interface IndexReport {
  /**
   * Template names held twice by one owner (stored before names were unique): TEMPLATE_NAME_INDEX is not built until
   * every one is renamed or deleted. Writes still refuse new duplicates (by a read first, without the index's guard
   * against two writes at once). The API logs them at start.
   */
  duplicateTemplateNames: DuplicateTemplateName[];
}

export const INDEXES: Record<string, IndexDescription[]> = {
  users: [{ key: { name: 1 }, unique: true, name: 'name_unique' }],
  api_keys: [
    { key: { hash: 1 }, unique: true, name: 'hash_unique' },
    { key: { user_id: 1, created_at: -1 }, name: 'by_user' },
  ],
  agent_templates: [
    { key: { owner_id: 1, _id: 1 }, name: 'by_owner' },
    // GET /api/v1/agents: owner_id in [null, caller] ordered by (created_at, _id).
    { key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'by_owner_created' },
    // Steps naming their template (`template: "<name>"`): names in [...], visible to the caller.
    { key: { name: 1 }, name: 'by_name' },
    // Sparse, not partial: the embedded test server ignores partialFilterExpression on unique indexes (every user
    // template would collide on a missing system_key); only system templates carry the field.
    { key: { system_key: 1 }, unique: true, sparse: true, name: 'system_key_unique' },
  ],
  workflows: [{ key: { owner_id: 1, _id: 1 }, name: 'by_owner' }],
  // Claims of run-start idempotency keys (db/idempotency.ts): unique by _id; expired by TTL.
  idempotency_keys: [{ key: { expires_at: 1 }, expireAfterSeconds: 0, name: 'expires_ttl' }],
  runs: [
    { key: { owner_id: 1, workflow_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_workflow_created' },
    // Run search (db/run-search.ts): equality fields, then the newest-first sort. The status one also serves
    // USER_MAX_CONCURRENT_RUNS (owner_id + status).
    { key: { owner_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_created' },
    { key: { owner_id: 1, status: 1, created_at: -1, _id: -1 }, name: 'by_owner_status_created' },
    // The worker's reconciler (db/run-reconcile.ts): open runs quiet since, and completed runs ended since, a time.
    { key: { status: 1, updated_at: 1, _id: 1 }, name: 'by_status_updated' },
    // A thread's turns (db/threads.ts), found when the thread is deleted; only turn runs carry the field.
    { key: { thread_id: 1, thread_turn: 1 }, sparse: true, name: 'by_thread' },
  ],
  // Threads (db/threads.ts): listed per owner, newest first; found by _id + owner.
  threads: [{ key: { owner_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_created' }],
  // A thread's conversation (db/thread-messages.ts): `_id` is (thread, turn, pos) in order; read and paged per thread.
  // Its summaries (compaction): the latest one before a turn, by index, however long the thread.
  thread_messages: [
    { key: { thread_id: 1, _id: 1 }, name: 'by_thread' },
    { key: { thread_id: 1, role: 1, _id: 1 }, name: 'by_thread_role' },
  ],
  // A thread's memory versions (db/thread-memory.ts): `_id` is (thread, version); an agent's change found by its call.
  thread_memory_versions: [{ key: { thread_id: 1, call: 1 }, name: 'by_thread_call' }],
  blobs: [{ key: { run_id: 1 }, name: 'by_run' }],
  // Map items and loop iterations of a run, listed per step in order (db/step-executions.ts).
  step_executions: [{ key: { run_id: 1, step_id: 1, position: 1 }, name: 'by_run_step_position' }],
  // The approvals inbox (db/approvals.ts): an owner's waiting approvals, oldest first; a run's, when it ends.
  approvals: [
    { key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'by_owner_created' },
    // Steps naming their template (`template: "<name>"`): names in [...], visible to the caller.
    { key: { name: 1 }, name: 'by_name' },
    { key: { run_id: 1 }, name: 'by_run' },
  ],
  // Inbound webhooks (db/hooks.ts): found by _id; listed per workflow, oldest first.
  hooks: [{ key: { owner_id: 1, workflow_id: 1, created_at: 1, _id: 1 }, name: 'by_owner_workflow_created' }],
  // MCP servers (db/mcp-servers.ts): names unique per owner (tool names are namespaced by them); listed oldest first.
  mcp_servers: [
    { key: { owner_id: 1, name: 1 }, unique: true, name: 'owner_name_unique' },
    { key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'by_owner_created' },
  ],
  // Schedules (db/schedules.ts): found by _id + owner; listed per workflow, oldest first; counted per owner.
  schedules: [{ key: { owner_id: 1, workflow_id: 1, created_at: 1, _id: 1 }, name: 'by_owner_workflow_created' }],
  // The run event log (db/run-events.ts): read by _id (`<run>/<seq>`); the key makes each happening unique.
  // Live text (agent.text.delta / .void) carries `expires_at`, no other event does: sparse, so the index holds only
  // those. The embedded test server accepts TTL indexes but never expires documents; MongoDB does.
  run_events: [
    { key: { key: 1 }, unique: true, name: 'key_unique' },
    { key: { expires_at: 1 }, expireAfterSeconds: 0, sparse: true, name: 'expires_ttl' },
  ],
  // Completion webhook deliveries of a run (db/webhook-deliveries.ts), read by the status endpoint once it ended.
  webhook_deliveries: [{ key: { run_id: 1, created_at: 1, _id: 1 }, name: 'by_run' }],
  transcripts: [{ key: { run_id: 1, step_id: 1, seq: 1 }, unique: true, name: 'run_step_seq_unique' }],
  // Tokens per user and UTC day (db/usage.ts): one document per (owner, day) and one per model call, each written by
  // _id; both expired by TTL. The usage view (db/usage-report.ts) reads a range of an owner's days.
  usage: [
    { key: { expires_at: 1 }, expireAfterSeconds: 0, name: 'expires_ttl' },
    { key: { owner_id: 1, day: 1 }, name: 'by_owner_day' },
  ],
  usage_calls: [
    { key: { expires_at: 1 }, expireAfterSeconds: 0, name: 'expires_ttl' },
    { key: { owner_id: 1, day: 1 }, name: 'by_owner_day' },
  ],
  // Datasets (db/datasets.ts): names unique per owner; listed newest first.
  datasets: [
    { key: { owner_id: 1, name: 1 }, unique: true, name: 'owner_name_unique' },
    { key: { owner_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_created' },
  ],
  // Item rows across versions (db/dataset-items.ts): a version's list in order; one item's rows; a change's rows.
  dataset_items: [
    { key: { dataset_id: 1, created_at: 1, _id: 1 }, name: 'by_dataset_created' },
    { key: { dataset_id: 1, item_id: 1 }, name: 'by_dataset_item' },
    { key: { dataset_id: 1, added_in: 1 }, name: 'by_dataset_added' },
    { key: { dataset_id: 1, removed_in: 1 }, name: 'by_dataset_removed' },
  ],
  // Experiments (db/experiments.ts): listed per owner, newest first. Results (db/experiment-results.ts): _id order.
  experiments: [{ key: { owner_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_created' }],
  experiment_results: [{ key: { experiment_id: 1, _id: 1 }, name: 'by_experiment' }],
  // A dataset's versions (db/dataset-versions.ts), newest first by _id (`<dataset>@<version, 10 digits>`).
  dataset_versions: [{ key: { dataset_id: 1, _id: -1 }, name: 'by_dataset' }],
  // rate-limiter-flexible counters (api/middleware/rate-limit.ts): one document per key and window, expired by TTL.
  rate_limits: [
    { key: { key: 1 }, unique: true, name: 'key_unique' },
    { key: { expire: -1 }, expireAfterSeconds: 0, name: 'expire_ttl' },
  ],
};

export async function ensureIndexes(db: Db): Promise<IndexReport> {
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    await db.collection(collection).createIndexes(indexes);
  }
  return { duplicateTemplateNames: await ensureTemplateNameIndex(db) };
}

/** Builds TEMPLATE_NAME_INDEX, or lists the duplicates that prevent it. */
async function ensureTemplateNameIndex(db: Db): Promise<DuplicateTemplateName[]> {
  try {
    await templatesCollection(db).createIndexes([TEMPLATE_NAME_INDEX]);
    return [];
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const duplicates = await findDuplicateTemplateNames(db);
    // Renamed since the build failed: the next attempt (the caller retries failures) builds it.
    if (duplicates.length === 0) throw err;
    return duplicates;
  }
}
