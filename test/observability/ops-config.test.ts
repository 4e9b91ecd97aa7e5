/**
 * The monitoring stack of docker-compose.yml, checked without Docker: the Prometheus config and its alert rules by
 * Prometheus's own `promtool`, every dashboard query parsed by promtool as PromQL, the dashboard's structure, and
 * the wiring between the files (scrape targets are the compose services' real ports, Grafana's data sources and
 * the trace endpoint point at services that exist). Whether the queried metrics exist is checked against a real
 * run's scrape in metrics.test.ts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { configSchema } from '../../config';
import { ensurePromtool } from '../../devstack/promtool';
import { repoRoot } from '../helpers/run-node';

const ops = path.join(repoRoot, 'ops');
const read = (...parts: string[]) => fs.readFileSync(path.join(ops, ...parts), 'utf8');

interface Target {
  refId: string;
  expr?: string;
  query?: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid?: string };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string }[] };
}
interface Service {
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
}

const dashboard = JSON.parse(read('grafana', 'dashboards', 'stepwise.json')) as Dashboard;
const compose = parse(fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};

function promtool(): string {
  const found = ensurePromtool(() => undefined);
  if ('problem' in found) throw new Error(found.problem);
  return found.path;
}

function run(args: string[]): { status: number | null; output: string } {
  const res = spawnSync(promtool(), args, { encoding: 'utf8' });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

/** The panel queries as Prometheus would run them: Grafana's `$__rate_interval` becomes a plain range. */
function dashboardQueries(): { panel: string; expr: string }[] {
  return dashboard.panels
    .filter((p) => p.type === 'timeseries')
    .flatMap((p) =>
      (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr!.replaceAll('$__rate_interval', '5m') })),
    );
}

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-ops-'));
}

describe('monitoring configuration', () => {
  it('the Prometheus config and its alert rules pass promtool check config', () => {
    const res = run(['check', 'config', path.join(ops, 'prometheus', 'prometheus.yml')]);
    expect(res).toMatchObject({ status: 0 });
    expect(res.output).toMatch(/alerts\.yml/);
  });

  it('the check bites: a broken alert expression is refused', () => {
    const dir = tmpDir();
    fs.copyFileSync(path.join(ops, 'prometheus', 'prometheus.yml'), path.join(dir, 'prometheus.yml'));
    fs.writeFileSync(path.join(dir, 'alerts.yml'), read('prometheus', 'alerts.yml').replace('== 0', '=== 0'));
    const res = run(['check', 'config', path.join(dir, 'prometheus.yml')]);
    expect(res.status).not.toBe(0);
    expect(res.output).toMatch(/parse error|unexpected/);
  });

  it('every dashboard query is valid PromQL (parsed by promtool as recording rules)', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(15);
    const rules = {
      groups: [{ name: 'dashboard', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) }],
    };
    const file = path.join(tmpDir(), 'dashboard-rules.yml');
    fs.writeFileSync(file, stringify(rules));
    const res = run(['check', 'rules', file]);
    expect({ status: res.status, output: res.output }).toMatchObject({ status: 0 });
    // And a malformed query would have been caught.
    fs.writeFileSync(file, stringify({ groups: [{ name: 'x', rules: [{ record: 'x:y', expr: 'sum(rate(x[5m])' }] }] }));
    expect(run(['check', 'rules', file]).status).not.toBe(0);
  });

  it('the dashboard is well-formed: unique ids and refIds, on the 24-column grid, on the provisioned data source', () => {
    const sources = parse(read('grafana', 'provisioning', 'datasources', 'datasources.yml')) as {
      datasources: { uid: string; type: string; url: string }[];
    };
    const prometheusUid = sources.datasources.find((d) => d.type === 'prometheus')?.uid;
    const jaegerUid = sources.datasources.find((d) => d.type === 'jaeger')?.uid;
    expect({ prometheusUid, jaegerUid }).toEqual({ prometheusUid: expect.any(String), jaegerUid: expect.any(String) });
    // Metric panels query Prometheus; the trace panel shows the trace whose id is pasted into its variable.
    const expected: Record<string, string | undefined> = { timeseries: prometheusUid, traces: jaegerUid };
    expect(dashboard).toMatchObject({ uid: expect.any(String), title: 'Stepwise', schemaVersion: expect.any(Number) });
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect({ panel: p.title, uid: p.datasource?.uid }).toEqual({ panel: p.title, uid: expected[p.type] });
      for (const t of p.targets ?? []) expect(t.datasource?.uid).toBe(p.datasource?.uid);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(refIds.length).toBeGreaterThan(0);
      expect(new Set(refIds).size).toBe(refIds.length);
    }
    // Runs, steps, models, workers and the API each have their row.
    expect(dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual([
      'Runs',
      'Steps',
      'Models and tools',
      'Temporal workers',
      'API',
      'Trace of a run',
    ]);
    const traces = dashboard.panels.find((p) => p.type === 'traces');
    expect(traces?.targets?.[0]?.query).toBe('${trace_id}');
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['trace_id']);
  });

  it('compose wires it together: scrape targets are the services’ real ports, data sources and traces reach services', () => {
    const prom = parse(read('prometheus', 'prometheus.yml')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const targets = prom.scrape_configs.flatMap((j) => j.static_configs.flatMap((s) => s.targets));
    // Each variable parsed by config.ts's own schema (the whole environment needs compose's interpolation).
    type Key = 'API_PORT' | 'WORKER_HEALTH_PORT' | 'WORKER_TEMPORAL_METRICS_PORT' | 'OTEL_EXPORTER_OTLP_ENDPOINT';
    const setting = (service: string, key: Key) =>
      configSchema.shape[key].parse(compose.services[service]?.environment?.[key]);
    expect(targets.sort()).toEqual(
      [
        `api:${setting('api', 'API_PORT')}`,
        `worker:${setting('worker', 'WORKER_HEALTH_PORT')}`,
        `worker:${setting('worker', 'WORKER_TEMPORAL_METRICS_PORT')}`,
      ].sort(),
    );

    const mounts = (name: string) => compose.services[name]?.volumes ?? [];
    expect(mounts('prometheus')).toContain('./ops/prometheus:/etc/prometheus:ro');
    expect(mounts('grafana')).toEqual(
      expect.arrayContaining([
        './ops/grafana/provisioning:/etc/grafana/provisioning:ro',
        './ops/grafana/dashboards:/var/lib/grafana/dashboards:ro',
      ]),
    );
    const provider = parse(read('grafana', 'provisioning', 'dashboards', 'dashboards.yml')) as {
      providers: { options: { path: string } }[];
    };
    expect(provider.providers[0]?.options.path).toBe('/var/lib/grafana/dashboards');

    const sources = parse(read('grafana', 'provisioning', 'datasources', 'datasources.yml')) as {
      datasources: { url: string }[];
    };
    for (const { url } of sources.datasources) expect(Object.keys(compose.services)).toContain(new URL(url).hostname);

    // Both processes trace to the jaeger service's OTLP/HTTP port.
    for (const service of ['api', 'worker']) {
      const endpoint = new URL(String(setting(service, 'OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://unset'));
      expect({ host: endpoint.hostname, port: endpoint.port }).toEqual({ host: 'jaeger', port: '4318' });
    }
    expect(compose.services.jaeger?.environment?.COLLECTOR_OTLP_ENABLED).toBe('true');
  });
});
