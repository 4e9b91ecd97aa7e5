/**
 * `eval run`: the CI gate (issue #47 item 6). Creates an experiment over a dataset and a workflow (with per-step model
 * overrides), follows it to its end printing progress, prints each scorer's mean (and the comparison with a baseline
 * experiment), writes JUnit XML, and exits non-zero on a regression by the domain's rule. Exit codes: docs/cli.md.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Command } from 'commander';
import type { paths, Schemas } from '../../client';
import { junitXml, type ExperimentResults } from '../../domain/evals';
import type { ApiFlags, CliContext } from '../context';
import { CliError } from '../errors';
import { formatTable } from '../table';
import { wholeNumber, withApiFlags } from './api-flags';

/** A regression by the domain's rule with --fail-on-regression. */
export const EXIT_REGRESSION = 2;
/** The experiment ended otherwise than `completed` (budget spent, cancelled, failed). */
export const EXIT_NOT_COMPLETED = 3;

const RESULTS_MAX = 100_000;
const ENDED = ['completed', 'budget_exhausted', 'cancelled', 'failed'];
/** How often the experiment is read while it runs. */
const POLL_MS = 500;

type Experiment = Schemas['ExperimentDetail'];
type Result = Schemas['ExperimentResult'];
type CompareQuery = NonNullable<paths['/api/v1/experiments/{id}/compare']['get']['parameters']['query']>;

interface EvalFlags extends ApiFlags {
  dataset: string;
  workflow: string;
  datasetVersion?: string;
  model: string[];
  baseline?: string;
  scorers?: string;
  failOnRegression?: boolean;
  failOn?: string;
  threshold?: string;
  tolerance?: string;
  junit?: string;
  name?: string;
  concurrency?: string;
  repetitions?: string;
  maxTokens?: string;
  maxModelCalls?: string;
  mode?: string;
  toolCalls?: string;
}

const MODES = ['live', 'replay'] as const;
const TOOL_CALLS = ['recorded', 'live', 'error_on_miss'] as const;

/** `--mode` and `--tool-calls` → the experiment's mode and replay options (checked here: a typo is exit 1). */
function modeOf(flags: EvalFlags): { mode?: 'live' | 'replay'; replay?: { tool_calls: (typeof TOOL_CALLS)[number] } } {
  const mode = flags.mode === undefined ? undefined : MODES.find((m) => m === flags.mode);
  if (flags.mode !== undefined && mode === undefined) throw new CliError('--mode: live or replay');
  if (flags.toolCalls === undefined) return mode ? { mode } : {};
  const toolCalls = TOOL_CALLS.find((t) => t === flags.toolCalls);
  if (toolCalls === undefined) throw new CliError('--tool-calls: recorded, live or error_on_miss');
  if (mode !== 'replay') throw new CliError('--tool-calls needs --mode replay');
  return { mode, replay: { tool_calls: toolCalls } };
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `--model step=provider:model` → overrides by step. */
function overridesOf(models: string[]): Record<string, { model: string }> | undefined {
  if (models.length === 0) return undefined;
  const out: Record<string, { model: string }> = {};
  for (const m of models) {
    const at = m.indexOf('=');
    if (at < 1 || at === m.length - 1) throw new CliError(`--model ${m}: write step=provider:model`);
    out[m.slice(0, at)] = { model: m.slice(at + 1) };
  }
  return out;
}

async function scorersOf(file: string | undefined): Promise<unknown[]> {
  // Without a file: the whole output must equal the item's expected value.
  if (file === undefined) return [{ kind: 'exact' }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliError(`--scorers ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!Array.isArray(parsed)) throw new CliError(`--scorers ${file}: a JSON array of scorer declarations`);
  return parsed as unknown[];
}

function versionOf(value: string): number {
  const n = Number(value);
  if (!/^\d{1,9}$/.test(value) || !Number.isInteger(n)) throw new CliError('--dataset-version: a whole number from 0');
  return n;
}

/** A flag's number from 0 to 1, written as the API takes it (`0.05`, not `5%` or `.05`). */
function fraction(flag: string, value: string): number {
  if (!/^[01](\.[0-9]{1,9})?$/.test(value) || Number(value) > 1) {
    throw new CliError(`${flag}: a decimal number from 0 to 1, e.g. 0.05`);
  }
  return Number(value);
}

const fixed = (n: number | null | undefined) => (n === null || n === undefined ? '-' : n.toFixed(3));

export function registerEvalCommands(program: Command, ctx: CliContext): void {
  const evalCmd = program.command('eval').description('evaluations: experiments over datasets, the CI gate');

  withApiFlags(evalCmd.command('run'))
    .description('run an experiment to its end, print its scores, gate on a regression against a baseline')
    .requiredOption('--dataset <dataset-id>', 'the dataset (ds_…)')
    .requiredOption('--workflow <workflow-id>', 'the workflow each item runs (wf_…)')
    .option('--dataset-version <n>', 'the dataset version (default: the latest)')
    .option('--model <step=provider:model>', 'run agent step `step` with this model (repeatable)', collect, [])
    .option('--baseline <experiment-id>', 'compare with this experiment (same dataset)')
    .option('--scorers <file.json>', 'a JSON array of scorer declarations (default: exact match with expected)')
    .option('--fail-on-regression', `exit ${EXIT_REGRESSION} when the comparison with --baseline regresses`)
    .option('--fail-on <rule>', 'mean (default) or any_item: what counts as a regression')
    .option('--threshold <x>', "a scorer's mean dropping by more than x (0–1) regresses (default 0.05)")
    .option('--tolerance <x>', 'an item score moving by at most x (0–1) is unchanged (default 0)')
    .option('--junit <out.xml>', 'write the results as JUnit XML')
    .option('--name <name>', 'the experiment’s name')
    .option('--concurrency <n>', 'runs at once (default 4)')
    .option('--repetitions <n>', 'runs per item (default 1)')
    .option('--max-tokens <n>', 'the budget: tokens')
    .option('--max-model-calls <n>', 'the budget: model calls')
    .option('--mode <mode>', 'live (default) or replay: unchanged steps answered from each item’s recorded run')
    .option(
      '--tool-calls <answer>',
      'replay: recorded (default), live or error_on_miss for tool calls of changed steps',
    )
    .action(async (flags: EvalFlags) => {
      if (flags.failOnRegression && flags.baseline === undefined) {
        throw new CliError('--fail-on-regression needs --baseline <experiment-id>');
      }
      if (flags.failOn !== undefined && flags.failOn !== 'mean' && flags.failOn !== 'any_item') {
        throw new CliError('--fail-on: mean or any_item');
      }
      const mode = modeOf(flags);
      const threshold = flags.threshold !== undefined ? fraction('--threshold', flags.threshold) : undefined;
      const tolerance = flags.tolerance !== undefined ? fraction('--tolerance', flags.tolerance) : undefined;
      if ((threshold !== undefined || tolerance !== undefined) && flags.baseline === undefined) {
        throw new CliError('--threshold and --tolerance need --baseline <experiment-id>');
      }
      const api = ctx.api(flags);
      const overrides = overridesOf(flags.model);
      const budget = {
        ...(flags.maxTokens ? { max_tokens: wholeNumber('--max-tokens', flags.maxTokens, 1e12) } : {}),
        ...(flags.maxModelCalls ? { max_model_calls: wholeNumber('--max-model-calls', flags.maxModelCalls, 1e9) } : {}),
      };
      const body = {
        dataset_id: flags.dataset,
        workflow_id: flags.workflow,
        scorers: (await scorersOf(flags.scorers)) as Schemas['ExperimentDetail']['scorers'],
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        ...(flags.datasetVersion !== undefined ? { dataset_version: versionOf(flags.datasetVersion) } : {}),
        ...(overrides ? { overrides } : {}),
        ...mode,
        ...(flags.concurrency ? { concurrency: wholeNumber('--concurrency', flags.concurrency, 16) } : {}),
        ...(flags.repetitions ? { repetitions: wholeNumber('--repetitions', flags.repetitions, 10) } : {}),
        ...(Object.keys(budget).length > 0 ? { budget } : {}),
      };
      const created = (
        await api.unwrap('POST /experiments', api.http.POST('/api/v1/experiments', { body: body as never }))
      ).data;
      ctx.io.out(`experiment ${created.id}: ${created.progress.total} runs`);
      const id = created.id;
      let exp: Experiment;
      let shown = -1;
      for (;;) {
        exp = (
          await api.unwrap('GET /experiments/…', api.http.GET('/api/v1/experiments/{id}', { params: { path: { id } } }))
        ).data;
        if (exp.progress.done !== shown) {
          shown = exp.progress.done;
          ctx.io.out(`${exp.status}\t${exp.progress.done}/${exp.progress.total}`);
        }
        if (ENDED.includes(exp.status)) break;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const results = await api.list(
        'GET /experiments/…/results',
        (page) => api.http.GET('/api/v1/experiments/{id}/results', { params: { path: { id }, query: page } }),
        RESULTS_MAX,
      );
      ctx.io.out(`${exp.status}${exp.message ? `: ${exp.message}` : ''}`);
      ctx.io.out(`spent: ${exp.spend.tokens} tokens, ${exp.spend.model_calls} model calls`);
      for (const line of formatTable(
        ['SCORER', 'MEAN', 'SD', 'PASS RATE', 'N'],
        exp.summary.map((s) => [s.name, fixed(s.mean), fixed(s.sd), fixed(s.pass_rate), String(s.n)]),
      ))
        ctx.io.out(line);

      let regressed = false;
      if (flags.baseline !== undefined) {
        const query: CompareQuery = {
          baseline: flags.baseline,
          ...(flags.failOn === 'mean' || flags.failOn === 'any_item' ? { fail_on: flags.failOn } : {}),
          ...(threshold !== undefined ? { regression_threshold: threshold } : {}),
          ...(tolerance !== undefined ? { tolerance } : {}),
        };
        const cmp = (
          await api.unwrap(
            'GET /experiments/…/compare',
            api.http.GET('/api/v1/experiments/{id}/compare', { params: { path: { id }, query } }),
          )
        ).data;
        ctx.io.out(`against ${flags.baseline}:`);
        for (const line of formatTable(
          ['SCORER', 'BASELINE', 'NOW', 'DELTA'],
          cmp.scorers.map((s) => [s.name, fixed(s.baseline?.mean), fixed(s.candidate?.mean), fixed(s.delta)]),
        ))
          ctx.io.out(line);
        const counts = cmp.counts;
        ctx.io.out(
          `items: ${counts.improved} improved, ${counts.regressed} regressed, ${counts.mixed} mixed, ` +
            `${counts.unchanged} unchanged`,
        );
        regressed = cmp.regression.regressed;
        ctx.io.out(regressed ? `REGRESSION: ${cmp.regression.reasons.join('; ')}` : 'no regression');
      }
      if (flags.junit !== undefined) {
        await writeFile(flags.junit, junitXml([resultsOf(exp, results)], { now: new Date(), hostname: hostname() }));
        ctx.io.out(`wrote ${flags.junit}`);
      }
      if (regressed && flags.failOnRegression) ctx.exitCode = EXIT_REGRESSION;
      else if (exp.status !== 'completed') ctx.exitCode = EXIT_NOT_COMPLETED;
    });
}

function resultsOf(exp: Experiment, results: Result[]): ExperimentResults {
  return {
    experiment_id: exp.id,
    name: exp.name,
    started_at: exp.created_at,
    items: results.map((r) => ({
      item_id: r.item_id,
      repetition: r.repetition,
      scores: r.scores,
      usage: r.usage,
      latency_ms: r.latency_ms,
      ...(r.error !== null ? { error: r.error } : {}),
    })),
  };
}
