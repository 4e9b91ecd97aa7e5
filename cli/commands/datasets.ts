/**
 * `datasets list|get|create|delete|add-from-runs|import|export`: versioned sets of items for evaluations, through
 * the API with the key. An import reads a JSONL file and sends it whole (the API names a bad line by its number and
 * writes nothing); an export writes a version's JSONL to a file or stdout.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { DatasetItem, DatasetView } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { CliError } from '../errors';
import { printList } from '../table';
import { wholeNumber, withApiFlags } from './api-flags';

const DATASETS_MAX = 1000;
const ITEMS_SHOWN_MAX = 10_000;
const ENDED = ['completed', 'failed', 'cancelled', 'timed_out'] as const;
type Ended = (typeof ENDED)[number];

/** A value in one short cell. */
const brief = (value: unknown, width = 60) => {
  const text = value === null || value === undefined ? '-' : JSON.stringify(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
};

/** `--version N` as a number (0 and up), or undefined. */
function versionFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError('--version: a whole number from 0');
  return n;
}

export function registerDatasetCommands(program: Command, ctx: CliContext): void {
  const datasets = program
    .command('datasets')
    .description('datasets of items for evaluations, through the API (--api-key or STEPWISE_API_KEY)');

  const summary = (d: DatasetView) =>
    `${d.id}\t${d.name}\tversion ${d.version}\t${d.item_count} items\t${d.workflow_id ?? '-'}`;

  withApiFlags(datasets.command('list'))
    .description('your datasets, newest first')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const list = await api.list(
        'GET /datasets',
        (page) => api.http.GET('/api/v1/datasets', { params: { query: page } }),
        DATASETS_MAX,
      );
      printList(ctx.io, list, {
        json: flags.json,
        empty: 'no datasets; make one with: npm run cli -- datasets create <name>',
        header: ['DATASET', 'NAME', 'VERSION', 'ITEMS', 'WORKFLOW'],
        row: (d) => [d.id, d.name, String(d.version), String(d.item_count), d.workflow_id ?? '-'],
      });
    });

  withApiFlags(datasets.command('get'))
    .description('one dataset, then its items at a version (default the latest)')
    .argument('<dataset-id>', 'the dataset (ds_…)')
    .option('--version <n>', 'the version to show the items of')
    .option('--json', 'the items as JSON lines (after the dataset line)')
    .action(async (id: string, flags: ApiFlags & { version?: string; json?: boolean }) => {
      const version = versionFlag(flags.version);
      const api = ctx.api(flags);
      const answer = api.http.GET('/api/v1/datasets/{id}', { params: { path: { id } } });
      const dataset = (await api.unwrap('GET /datasets/…', answer)).data;
      ctx.io.out(flags.json ? JSON.stringify(dataset) : summary(dataset));
      const items = await api.list(
        'GET /datasets/…/items',
        (page) =>
          api.http.GET('/api/v1/datasets/{id}/items', {
            params: { path: { id }, query: { ...page, ...(version !== undefined ? { version } : {}) } },
          }),
        ITEMS_SHOWN_MAX,
      );
      printList(ctx.io, items, {
        json: flags.json,
        empty: `no items in version ${version ?? dataset.version}`,
        header: ['ITEM', 'SINCE', 'SOURCE RUN', 'INPUT', 'EXPECTED'],
        row: (i: DatasetItem) => [
          i.id,
          `v${i.added_in}`,
          i.source_run_id ?? '-',
          brief(i.input),
          brief(i.expected, 40),
        ],
      });
    });

  withApiFlags(datasets.command('create'))
    .description('a new dataset: prints its id')
    .argument('<name>', 'unique among your datasets')
    .option('--description <text>', 'what it is for')
    .option('--workflow <workflow-id>', "the workflow it is for: items' inputs must satisfy its input_schema")
    .action(async (name: string, flags: ApiFlags & { description?: string; workflow?: string }) => {
      const api = ctx.api(flags);
      const body = {
        name,
        ...(flags.description !== undefined ? { description: flags.description } : {}),
        ...(flags.workflow !== undefined ? { workflow_id: flags.workflow } : {}),
      };
      const dataset = (await api.unwrap('POST /datasets', api.http.POST('/api/v1/datasets', { body }))).data;
      ctx.io.out(summary(dataset));
    });

  withApiFlags(datasets.command('delete'))
    .description('delete a dataset with every version of its items')
    .argument('<dataset-id>', 'the dataset (ds_…)')
    .action(async (id: string, flags: ApiFlags) => {
      const api = ctx.api(flags);
      await api.unwrap('DELETE /datasets/…', api.http.DELETE('/api/v1/datasets/{id}', { params: { path: { id } } }));
      ctx.io.out(`${id}\tdeleted`);
    });

  withApiFlags(datasets.command('add-from-runs'))
    .description(
      'add ended runs as items (input, outputs as expected, the run id): by id, or the newest runs a search finds',
    )
    .argument('<dataset-id>', 'the dataset (ds_…)')
    .argument('[run-ids...]', 'runs to add (run_…); without them, a search by the flags below')
    .option('--workflow <workflow-id>', 'search: runs of this workflow')
    .option('--status <statuses>', `search: ${ENDED.join(', ')} (comma-separated; default completed)`)
    .option('--limit <n>', 'search: the newest n runs (default 50, at most 200)')
    .option('--q <text>', 'search: text the workflow name contains')
    .action(
      async (
        id: string,
        runIds: string[],
        flags: ApiFlags & { workflow?: string; status?: string; limit?: string; q?: string },
      ) => {
        const searching = [flags.workflow, flags.status, flags.limit, flags.q].some((f) => f !== undefined);
        if (runIds.length > 0 && searching) {
          throw new CliError('give run ids, or search flags (--workflow, --status, --limit, --q), not both');
        }
        const statuses = flags.status?.split(',').map((s) => s.trim());
        const bad = statuses?.find((s) => !(ENDED as readonly string[]).includes(s));
        if (bad !== undefined) throw new CliError(`--status: "${bad}" is not one of ${ENDED.join(', ')}`);
        const search = {
          ...(flags.workflow !== undefined ? { workflow_id: flags.workflow } : {}),
          ...(statuses ? { status: statuses as Ended[] } : {}),
          ...(flags.limit !== undefined ? { limit: wholeNumber('--limit', flags.limit, 200) } : {}),
          ...(flags.q !== undefined ? { q: flags.q } : {}),
        };
        const api = ctx.api(flags);
        const answer = api.http.POST('/api/v1/datasets/{id}/items/from-runs', {
          params: { path: { id } },
          body: runIds.length > 0 ? { run_ids: runIds } : { search },
        });
        const change = (await api.unwrap('POST /datasets/…/items/from-runs', answer)).data;
        ctx.io.out(`${id}\tversion ${change.version}\t+${change.added} items\t${change.item_count} items`);
        for (const item of change.items) ctx.io.out(`${item.id}\t${item.source_run_id ?? '-'}`);
      },
    );

  withApiFlags(datasets.command('import'))
    .description('add the items of a JSONL file (one {"input", "expected"?, "metadata"?} per line) as one version')
    .argument('<dataset-id>', 'the dataset (ds_…)')
    .argument('<file>', 'the JSONL file')
    .action(async (id: string, file: string, flags: ApiFlags) => {
      let jsonl: string;
      try {
        jsonl = await readFile(file, 'utf8');
      } catch (err) {
        throw new CliError(`${file}: cannot read it (${(err as Error).message})`);
      }
      const api = ctx.api(flags);
      const answer = api.http.POST('/api/v1/datasets/{id}/items/import', { params: { path: { id } }, body: { jsonl } });
      const change = (await api.unwrap('POST /datasets/…/items/import', answer)).data;
      ctx.io.out(`${id}\tversion ${change.version}\t+${change.added} items\t${change.item_count} items`);
    });

  withApiFlags(datasets.command('export'))
    .description('the items of a version (default the latest) as JSONL, to stdout or --out')
    .argument('<dataset-id>', 'the dataset (ds_…)')
    .option('--version <n>', 'the version to export')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (id: string, flags: ApiFlags & { version?: string; out?: string }) => {
      const version = versionFlag(flags.version);
      const api = ctx.api(flags);
      const { data, error, response } = await api.http.GET('/api/v1/datasets/{id}/items/export', {
        params: { path: { id }, query: version !== undefined ? { version } : {} },
        parseAs: 'text',
      });
      if (!response.ok || data === undefined) throw api.refusal(response, error, 'GET /datasets/…/items/export');
      if (flags.out !== undefined) {
        await writeFile(flags.out, data);
        const lines = data === '' ? 0 : data.trimEnd().split('\n').length;
        ctx.io.err(`${lines} items of version ${response.headers.get('X-Dataset-Version') ?? '?'} → ${flags.out}`);
      } else {
        for (const line of data.split('\n')) if (line !== '') ctx.io.out(line);
      }
    });
}
