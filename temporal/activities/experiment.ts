/**
 * The experiment workflow's activities (temporal/workflows/experiment.ts): read the plan, create each item's run the
 * one way runs are created (shared/runs/create-run.ts, with a run id derived from the experiment: a resumed
 * experiment finds the run it created), score an ended run with the experiment's scorers and store the result, and
 * record the end. Every one is idempotent: a retry or a resumed workflow writes what the first attempt wrote.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { countItemsAt, findItemAt, itemsCursor } from '../../db/dataset-items';
import { allResults, putExperimentResult, resultId } from '../../db/experiment-results';
import {
  endExperiment,
  findExperiment,
  markExperimentRunning,
  setExperimentProgress,
  type ExperimentDoc,
} from '../../db/experiments';
import { recordRunOutcome } from '../../db/run-end';
import { findRunRecord, loadedSnapshot, type RunDoc } from '../../db/runs';
import { transcriptsCollection } from '../../db/transcripts';
import { findWorkflowWithTemplates } from '../../db/workflow-with-templates';
import { compileScorers, scoreAll, type SampleUsage, type ScoringSample, type ToolCall } from '../../domain/evals';
import {
  DEFAULT_REPLAY_TOOL_CALLS,
  experimentRunId,
  planWindow,
  type ExperimentPlan,
  type ExperimentPlanRequest,
  type ExperimentStatus,
  type ExperimentUnit,
  type UnitOutcome,
} from '../../domain/experiment';
import type { JsonObject, JsonValue } from '../../domain/json';
import { replayDiff, type ReplayDiff } from '../../domain/replay';
import type { RunSnapshot } from '../../domain/run';
import { costOf, type ModelPrices } from '../../domain/usage';
import { compileUserSchema, describeInputErrors, UserSchemaError } from '../../domain/user-schema';
import { resolveOutputs } from '../../shared/run-view/outputs';
import { createRun, RunRefusedError } from '../../shared/runs/create-run';
import { overridesProblem, withOverrides } from '../../shared/runs/overrides';
import { replaySource } from '../../shared/runs/replay';
import { carryOutputs, logReusedSteps, withReusedSteps } from '../../shared/runs/reuse';
import { buildSnapshot } from '../../shared/runs/snapshot';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import { RetryableError } from '../failures';
import { classifyLlmError, LlmError } from '../llm/errors';
import { createLlmProvider } from '../llm/provider';
import { parseModelRef } from '../llm/model-ref';

/** A unit's run could not be created (the workflow changed since creation, the item's input no longer fits …). */
export type PreparedUnit = { ok: true; snapshot: RunSnapshot } | { ok: false; message: string };

/** A scorer's JSONata result is a boolean or a number: a small result bound is enough. */
const SCORER_RESULT_CHARS = 1_000;
/** One judge call, at most (a retry of the activity asks again). */
const JUDGE_TIMEOUT_MS = 120_000;

class Unbuildable extends Error {}

export function createExperimentActivities(deps: { db: Db; config: Config; expressions: ExpressionEvaluator }) {
  const experiment = async (id: string): Promise<ExperimentDoc> => {
    const doc = await findExperiment(deps.db, id);
    if (!doc) throw new Error(`experiment ${id} not found`);
    return doc;
  };

  /**
   * The run's snapshot: the workflow as it is now, the overrides applied, the item's input checked; in mode `replay`
   * with the recorded run's outputs of the steps that did not change (and the run's steps marked as taken over).
   */
  const prepare = async (
    exp: ExperimentDoc,
    unit: ExperimentUnit,
    runId: string,
    now: Date,
  ): Promise<{ snapshot: RunSnapshot; steps?: (doc: RunDoc) => RunDoc['steps'] }> => {
    const item = await findItemAt(deps.db, exp.dataset_id, unit.item_id, exp.dataset_version);
    if (!item) throw new Unbuildable(`item ${unit.item_id} is not in version ${exp.dataset_version} of the dataset`);
    const found = await findWorkflowWithTemplates(deps.db, exp.owner_id, exp.workflow_id);
    if (!found) throw new Unbuildable(`the workflow ${exp.workflow_id} no longer exists`);
    const { workflow, templates } = found;
    const input = JSON.parse(item.input_json) as JsonObject;
    const problem = inputProblem(workflow.config.input_schema, input);
    if (problem)
      throw new Unbuildable(`item ${unit.item_id}: the workflow's input_schema refuses its input: ${problem}`);
    const loaded = await loadSnapshotSources(
      deps.db,
      exp.owner_id,
      workflow,
      deps.config.SUBWORKFLOW_MAX_DEPTH,
      templates,
    );
    if (!loaded.ok) throw new Unbuildable(loaded.problem);
    const built = buildSnapshot({ runId, workflow, sources: loaded.sources, input, config: deps.config, now });
    const overrides = exp.overrides ?? undefined;
    const wrong = overridesProblem(built.steps, overrides, 'the workflow');
    if (wrong) throw new Unbuildable(wrong);
    const snapshot: RunSnapshot = { ...built, steps: withOverrides(built.steps, overrides) };
    if (exp.mode !== 'replay') return { snapshot };
    const source = await replaySource(deps.db, exp.owner_id, item, snapshot.steps);
    if (!source.ok) throw new Unbuildable(source.problem);
    const { run, plan } = source;
    snapshot.rerun = {
      run_id: run._id,
      from_step: plan.executed[0]?.step_id ?? '',
      reused_json: await carryOutputs(deps.db, run, plan.reused, runId),
      tool_calls: exp.replay?.tool_calls ?? DEFAULT_REPLAY_TOOL_CALLS,
    };
    return { snapshot, steps: (doc) => withReusedSteps(doc, run, new Set(plan.reused)) };
  };

  return {
    async planExperiment(req: ExperimentPlanRequest): Promise<ExperimentPlan> {
      const exp = await experiment(req.experiment_id);
      await markExperimentRunning(deps.db, req.experiment_id);
      const unitsPerExecution = deps.config.EXPERIMENT_UNITS_PER_EXECUTION;
      const itemCount = await countItemsAt(deps.db, exp.dataset_id, exp.dataset_version);
      const window = planWindow(req.next_unit, unitsPerExecution, exp.repetitions, itemCount);
      const itemIds: string[] = [];
      if (window.count > 0) {
        const rows = itemsCursor(deps.db, exp.dataset_id, exp.dataset_version)
          .skip(window.first)
          .limit(window.count)
          .project<{ item_id: string }>({ item_id: 1 });
        for await (const row of rows) itemIds.push(row.item_id);
      }
      return {
        item_count: itemCount,
        first_item: window.first,
        item_ids: itemIds,
        repetitions: exp.repetitions,
        concurrency: exp.concurrency,
        budget: exp.budget,
        units_per_execution: unitsPerExecution,
      };
    },

    async prepareExperimentRun(unit: ExperimentUnit & { temporal_run_id: string }): Promise<PreparedUnit> {
      const exp = await experiment(unit.experiment_id);
      const runId = experimentRunId(unit.experiment_id, unit.index, unit.repetition);
      try {
        const { doc, created } = await createRun(deps, {
          ownerId: exp.owner_id,
          runId,
          prepare: async (id, now) => {
            const prepared = await prepare(exp, unit, id, now);
            return {
              snapshot: prepared.snapshot,
              adjust: (d: RunDoc) => ({
                ...d,
                experiment_id: exp._id,
                temporal: { ...d.temporal, run_id: unit.temporal_run_id },
                ...(prepared.steps ? { steps: prepared.steps(d) } : {}),
              }),
            };
          },
          // A replayed item's event log opens with the steps taken over from its record.
          beforeStart: (doc) => logReusedSteps(deps.db, doc),
          // The record stays (a started execution is its own); it is ended as failed below.
          onRefused: 'keep',
        });
        return { ok: true, snapshot: created ? doc.snapshot : loadedSnapshot(doc) };
      } catch (err) {
        if (err instanceof Unbuildable) return { ok: false, message: err.message };
        if (err instanceof RunRefusedError) {
          await recordRunOutcome(deps.db, runId, {
            status: 'failed',
            error: { step_id: null, reason: err.reason, message: err.message },
          });
          return { ok: false, message: err.message };
        }
        throw err;
      }
    },

    /** Scores a unit's ended run (or records why it has none) and stores the result; answers the total spend. */
    async scoreExperimentUnit(req: ExperimentUnit & { error?: string | undefined }): Promise<UnitOutcome> {
      const exp = await experiment(req.experiment_id);
      const runId = experimentRunId(req.experiment_id, req.index, req.repetition);
      const run = await findRunRecord(deps.db, exp.owner_id, runId);
      const item = await findItemAt(deps.db, exp.dataset_id, req.item_id, exp.dataset_version);
      const compiled = compileScorers(exp.scorers);
      if (!compiled.ok) throw new Error(`experiment ${exp._id}: its scorers no longer compile`);
      const prices = deps.config.MODEL_PRICES;
      const sample = run
        ? await sampleOf(deps.db, run, item?.expected_json ?? null, prices)
        : emptySample(item?.input_json);
      // The judge's model calls: made here, counted in the item's usage (so against the experiment's budget).
      const judged: SampleUsage = { input_tokens: 0, output_tokens: 0, llm_calls: 0, cost: 0 };
      const scores = await scoreAll(compiled.scorers, sample, {
        evaluateExpression: (expression, data) =>
          deps.expressions.evaluate(expression, data, { maxResultChars: SCORER_RESULT_CHARS }),
        judge: async (request) => {
          const provider = createLlmProvider(deps.config, request.model, { timeoutMs: JUDGE_TIMEOUT_MS });
          try {
            const answer = await provider.generate({
              system: request.system,
              messages: [{ role: 'user', text: request.user }],
              tools: [],
              temperature: 0,
            });
            judged.input_tokens += answer.usage.input_tokens;
            judged.output_tokens += answer.usage.output_tokens;
            judged.llm_calls += 1;
            judged.cost = addCost(judged.cost, costOf(prices, request.model, answer.usage));
            return answer.text;
          } catch (err) {
            throw err instanceof LlmError ? err : classifyLlmError(err, parseModelRef(request.model).provider);
          }
        },
        isTransient: (err) => err instanceof RetryableError || (err instanceof LlmError && err.retryable),
      });
      const cost = addCost(sample.usage.cost, judged.cost);
      const usage: SampleUsage = {
        input_tokens: sample.usage.input_tokens + judged.input_tokens,
        output_tokens: sample.usage.output_tokens + judged.output_tokens,
        llm_calls: sample.usage.llm_calls + judged.llm_calls,
        ...(cost !== undefined ? { cost } : {}),
      };
      const runError = run?.error
        ? `${run.error.step_id ? `step ${run.error.step_id}: ` : ''}${run.error.message}`
        : null;
      await putExperimentResult(deps.db, {
        _id: resultId(exp._id, req.index, req.repetition),
        experiment_id: exp._id,
        owner_id: exp.owner_id,
        item_id: req.item_id,
        index: req.index,
        repetition: req.repetition,
        run_id: runId,
        run_status: run && (run.status !== 'queued' || !req.error) ? run.status : 'not_started',
        scores,
        usage,
        judge_usage: withoutUnknownCost(judged),
        latency_ms: sample.latency_ms,
        output_json: run ? JSON.stringify(sample.output) : null,
        error: runError ?? req.error ?? (run && run.status !== 'completed' ? `the run ended ${run.status}` : null),
        replay_json: exp.mode === 'replay' && run ? await replayDiffOf(deps.db, run) : null,
        created_at: new Date(),
      });
      const results = await allResults(deps.db, exp._id);
      const spend = {
        tokens: results.reduce((n, r) => n + r.usage.input_tokens + r.usage.output_tokens, 0),
        model_calls: results.reduce((n, r) => n + r.usage.llm_calls, 0),
      };
      await setExperimentProgress(deps.db, exp._id, results.length, spend);
      return { spend };
    },

    async finishExperiment(req: { experiment_id: string; status: ExperimentStatus; message: string | null }) {
      await endExperiment(deps.db, req.experiment_id, req.status, req.message);
    },
  };
}

function inputProblem(schema: JsonObject | undefined, input: JsonObject): string | undefined {
  if (!schema) return undefined;
  try {
    const validate = compileUserSchema(schema);
    return validate(input) ? undefined : describeInputErrors(validate.errors).join('; ');
  } catch (err) {
    return err instanceof UserSchemaError ? err.message : 'the input schema does not compile';
  }
}

/** What the scorers read of a run: its input, its outputs by step, the item's expected value, tool calls, usage. */
async function sampleOf(
  db: Db,
  run: RunDoc,
  expectedJson: string | null,
  prices: ModelPrices,
): Promise<ScoringSample> {
  const outputs = await resolveOutputs(db, run);
  const output: JsonObject = {};
  for (const step of run.steps) {
    const out = outputs.get(step.id);
    if ((step.status === 'completed' || step.status === 'failed') && out !== undefined) output[step.id] = out.value;
  }
  const usage: SampleUsage = { input_tokens: 0, output_tokens: 0, llm_calls: 0, cost: 0 };
  const models = new Map(loadedSnapshot(run).steps.map((s) => [s.id, s.kind === 'agent' ? s.model : undefined]));
  for (const step of run.steps) {
    usage.input_tokens += step.usage.input_tokens;
    usage.output_tokens += step.usage.output_tokens;
    usage.llm_calls += step.usage.llm_calls;
    if (step.usage.llm_calls === 0) continue;
    // An agent step's calls are its model's; a sub-workflow's are of models this run's snapshot does not name.
    const model = models.get(step.id);
    usage.cost = addCost(usage.cost, model === undefined ? undefined : costOf(prices, model, step.usage));
  }
  const start = run.started_at ?? run.created_at;
  const end = run.completed_at ?? new Date();
  return {
    input: run.input,
    output,
    ...(expectedJson !== null ? { expected: JSON.parse(expectedJson) as JsonValue } : {}),
    trajectory: await trajectoryOf(db, run),
    usage: withoutUnknownCost(usage),
    latency_ms: Math.max(0, end.getTime() - start.getTime()),
  };
}

/** A sum of costs that stays unknown (undefined) once one part is: a model without a price in MODEL_PRICES. */
function addCost(sum: number | undefined, part: number | undefined): number | undefined {
  return sum === undefined || part === undefined ? undefined : sum + part;
}

function withoutUnknownCost(usage: SampleUsage): SampleUsage {
  const { cost, ...tokens } = usage;
  return cost === undefined ? tokens : usage;
}

/** Every tool call of the run's agent steps, in the snapshot's step order, each step's in the order made. */
async function trajectoryOf(db: Db, run: RunDoc): Promise<ToolCall[]> {
  const entries = await transcriptsCollection(db)
    .find({ run_id: run._id, kind: 'tool' })
    .sort({ step_id: 1, seq: 1 })
    .toArray();
  const order = new Map(run.steps.map((s, i) => [s.id, i]));
  entries.sort((a, b) => (order.get(a.step_id) ?? 0) - (order.get(b.step_id) ?? 0) || a.seq - b.seq);
  return entries.flatMap((e) => (e.kind === 'tool' ? [{ name: e.name, arguments: e.args, result: e.output }] : []));
}

/**
 * A replayed item's run against the run it replays, as JSON text: which steps were taken over, and what the executed
 * ones changed.
 */
async function replayDiffOf(db: Db, run: RunDoc): Promise<string | null> {
  const sourceId = run.snapshot.rerun?.run_id;
  if (sourceId === undefined) return null;
  const source = await findRunRecord(db, run.owner_id, sourceId);
  const outputs = await resolveOutputs(db, run);
  const recorded = new Map<string, JsonValue>();
  if (source) for (const [id, out] of await resolveOutputs(db, source)) recorded.set(id, out.value);
  const diff: ReplayDiff = replayDiff(
    sourceId,
    run.steps.map((s) => ({
      id: s.id,
      status: s.status,
      replayed: s.reused_from_run_id !== undefined,
      output: outputs.get(s.id)?.value,
    })),
    recorded,
  );
  return JSON.stringify(diff);
}

function emptySample(inputJson: string | undefined): ScoringSample {
  return {
    input: inputJson ? (JSON.parse(inputJson) as JsonValue) : null,
    output: null,
    trajectory: [],
    usage: { input_tokens: 0, output_tokens: 0, llm_calls: 0 },
    latency_ms: 0,
  };
}
