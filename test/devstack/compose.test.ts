/**
 * Docker cannot run here, so the compose file is checked statically: it must be valid against the Compose
 * Specification's JSON schema (the copy the dclint package ships), and it must give the API and the worker every
 * setting config.ts needs to reach the other containers — derived from config.ts and the search-attribute contract,
 * not from a hand-kept list.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { configSchema, loadConfig, type Config } from '../../config';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';
import { repoRoot } from '../helpers/run-node';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
interface ComposeFile {
  services: Record<string, Service>;
}

const composeText = fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8');
// `merge: true`: the file shares the common environment through a YAML merge key (<<), as Compose resolves it.
const compose = parse(composeText, { merge: true }) as ComposeFile;

function composeSchemaValidator(): ValidateFunction {
  const schemaFile = path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
  const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8')) as Record<string, unknown>;
  // The spec's schema names its draft-07 meta-schema without the trailing '#'; Ajv knows draft-07 under its own id.
  delete schema.$schema;
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

/** Values a user puts in .env for the variables the file requires (`${VAR:?message}`). */
const REQUIRED_SAMPLES: Record<string, string> = {
  PAYLOAD_CODEC_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  CODEC_ACCESS_TOKEN: 'c'.repeat(64),
};

/**
 * Compose's `${VAR:-default}` as `docker compose` would resolve it with VAR unset, and `${VAR:?message}` (required:
 * Compose stops with the message when unset) with the sample a user would have set.
 */
function interpolate(value: string): string {
  return value
    .replace(/\$\{(\w+):?\?[^}]*\}/g, (_m, name: string) => {
      const sample = REQUIRED_SAMPLES[name];
      if (sample === undefined) throw new Error(`no sample value for the required variable ${name}`);
      return sample;
    })
    .replace(/\$\{\w+(?::?-([^}]*))?\}/g, (_m, fallback: string | undefined) => fallback ?? '');
}

/** Names of the variables the file requires the user to set. */
function requiredVariables(value: string): string[] {
  return [...value.matchAll(/\$\{(\w+):?\?[^}]*\}/g)].map((m) => m[1]!);
}

function envOf(service: string): Record<string, string> {
  const env = compose.services[service]?.environment ?? {};
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v))]));
}

/** The service whose image is `image:<tag>` (or whose name is `name`), so renaming a service does not hide it. */
function serviceByImage(imagePrefix: string): [string, Service] {
  const found = Object.entries(compose.services).find(([, s]) => s.image?.startsWith(imagePrefix));
  if (!found) throw new Error(`no service runs an image ${imagePrefix}*`);
  return found;
}

function publishedContainerPorts(service: Service): number[] {
  return (service.ports ?? []).map((p) => Number(String(p).split(':').pop()));
}

/** Settings whose default points at this machine (127.0.0.1/localhost) and so cannot work between containers. */
const loopbackDefaults = (() => {
  const defaults = loadConfig({});
  return (Object.keys(configSchema.shape) as (keyof Config)[]).filter((key) => {
    const value = defaults[key];
    return !key.startsWith('DEV_') && typeof value === 'string' && /127\.0\.0\.1|localhost/.test(value);
  });
})();

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    const validate = composeSchemaValidator();
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema check bites: a misspelt key and a bad depends_on condition are refused', () => {
    const validate = composeSchemaValidator();
    const broken = parse(composeText, { merge: true }) as ComposeFile & {
      services: Record<string, Record<string, unknown>>;
    };
    broken.services.api!.helthcheck = broken.services.api!.healthcheck;
    (broken.services.worker!.depends_on as Record<string, { condition: string }>).mongodb!.condition = 'when_ready';
    expect(validate(broken)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('\n');
    expect(paths).toContain('/services/api');
    expect(paths).toContain('/services/worker/depends_on');
  });

  it('has MongoDB, Temporal with its Web UI, an SMTP catcher, the API and the worker, each with a health check', () => {
    const [, mongo] = serviceByImage('mongo:');
    const [, temporal] = serviceByImage('temporalio/temporal:');
    const [, mail] = serviceByImage('axllent/mailpit:');
    expect(mongo.image).toBe('mongo:7');
    expect(temporal.command?.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(temporal.command).not.toContain('--headless');
    for (const name of ['api', 'worker']) {
      expect(compose.services[name]?.build).toBeDefined();
    }
    const unchecked = Object.entries(compose.services).filter(([, s]) => (s.healthcheck?.test?.length ?? 0) < 2);
    expect(unchecked.map(([name]) => name)).toEqual([]);
    expect(publishedContainerPorts(mail)).toContain(1025);
  });

  it('registers every search attribute of the workflow contract on the Temporal server', () => {
    const [, temporal] = serviceByImage('temporalio/temporal:');
    const args = temporal.command ?? [];
    const registered = args.flatMap((arg, i) => (args[i - 1] === '--search-attribute' ? [arg] : []));
    expect(registered.sort()).toEqual(
      Object.entries(SEARCH_ATTRIBUTES)
        .map(([n, t]) => `${n}=${t}`)
        .sort(),
    );
    // Reachable from the other containers and from the host: all interfaces, the gRPC and UI ports published.
    expect(args[args.indexOf('--ip') + 1]).toBe('0.0.0.0');
    const grpc = Number(args[args.indexOf('--port') + 1]);
    const ui = Number(args[args.indexOf('--ui-port') + 1]);
    expect(publishedContainerPorts(temporal)).toEqual(expect.arrayContaining([grpc, ui]));
  });

  describe.each(['api', 'worker'])('the %s service', (name) => {
    const service = () => compose.services[name]!;

    it('sets only real config.ts variables, and config.ts accepts them all', () => {
      const env = envOf(name);
      expect(Object.keys(env).filter((k) => !(k in configSchema.shape))).toEqual([]);
      expect(() => loadConfig(env)).not.toThrow();
    });

    it('overrides every setting whose default points at this machine, and points it at the right container', () => {
      const env = envOf(name);
      const config = loadConfig(env);
      expect(loopbackDefaults.length).toBeGreaterThanOrEqual(4);
      expect(loopbackDefaults.filter((key) => !(key in env))).toEqual([]);

      const [mongoName, mongo] = serviceByImage('mongo:');
      const mongoUrl = new URL(config.MONGODB_URI);
      expect(mongoUrl.hostname).toBe(mongoName);
      expect(publishedContainerPorts(mongo)).toContain(Number(mongoUrl.port || 27017));

      const [temporalName, temporal] = serviceByImage('temporalio/temporal:');
      const args = temporal.command ?? [];
      expect(config.TEMPORAL_ADDRESS).toBe(`${temporalName}:${args[args.indexOf('--port') + 1]}`);
      expect(new URL(config.TEMPORAL_UI_URL).port).toBe(args[args.indexOf('--ui-port') + 1]);

      const [mailName] = serviceByImage('axllent/mailpit:');
      const smtp = new URL(config.SMTP_URL);
      expect(smtp.hostname).toBe(mailName);
      expect(smtp.port).toBe('1025');

      // Listening on all interfaces, or the published port would reach nothing.
      expect(config.API_HOST).toBe('0.0.0.0');
      for (const dep of [mongoName, temporalName])
        expect(service().depends_on?.[dep]?.condition).toBe('service_healthy');
    });
  });

  it('encrypts payloads: the API and the worker get PAYLOAD_CODEC_KEYS, required (no plaintext fallback)', () => {
    for (const name of ['api', 'worker']) {
      const raw = String(compose.services[name]?.environment?.PAYLOAD_CODEC_KEYS ?? '');
      expect(requiredVariables(raw)).toEqual(['PAYLOAD_CODEC_KEYS']);
      expect(loadConfig(envOf(name)).PAYLOAD_CODEC_KEYS).toHaveLength(1);
    }
    // And production really refuses to start without them (the reason they are required here).
    const { PAYLOAD_CODEC_KEYS: _keys, ...withoutKeys } = envOf('api');
    expect(() => loadConfig(withoutKeys)).toThrow(/PAYLOAD_CODEC_KEYS: required in production/);
  });

  it("points the Web UI at the API's codec endpoint, with the token the API checks", () => {
    const [, temporal] = serviceByImage('temporalio/temporal:');
    const args = temporal.command ?? [];
    expect(args).toContain('--ui-codec-endpoint');
    const raw = args[args.indexOf('--ui-codec-endpoint') + 1]!;
    expect(requiredVariables(raw)).toEqual(['CODEC_ACCESS_TOKEN']);
    const endpoint = new URL(interpolate(raw));
    const api = loadConfig(envOf('api'));
    // The browser calls it: the API's port as published on the host, and the token the API is configured with.
    expect(publishedContainerPorts(compose.services.api!)).toContain(Number(endpoint.port));
    expect(endpoint.port).toBe(String(api.API_PORT));
    expect(endpoint.pathname).toBe(`/codec/${api.CODEC_ACCESS_TOKEN}`);
    expect(requiredVariables(String(compose.services.api?.environment?.CODEC_ACCESS_TOKEN))).toEqual([
      'CODEC_ACCESS_TOKEN',
    ]);
    // The UI hands that URL, token included, to whoever opens it: published on the host's loopback only.
    const uiPort = args[args.indexOf('--ui-port') + 1];
    expect((temporal.ports ?? []).filter((p) => String(p).endsWith(`:${uiPort}`))).toEqual([
      `127.0.0.1:${uiPort}:${uiPort}`,
    ]);
    // The worker never serves the codec: it does not get the token.
    expect(envOf('worker').CODEC_ACCESS_TOKEN).toBeUndefined();
  });

  it('publishes the API port and health-checks its /readyz', () => {
    const config = loadConfig(envOf('api'));
    const api = compose.services.api!;
    expect(publishedContainerPorts(api)).toContain(config.API_PORT);
    expect(api.healthcheck?.test.join(' ')).toContain(`:${config.API_PORT}/readyz`);
  });

  it('gives the worker its health port, health-checks it, and points it at the bundle the image builds', () => {
    const config = loadConfig(envOf('worker'));
    const worker = compose.services.worker!;
    expect(config.WORKER_HEALTH_PORT).toEqual(expect.any(Number));
    expect(worker.healthcheck?.test.join(' ')).toContain(`:${config.WORKER_HEALTH_PORT}/readyz`);
    expect(worker.command?.join(' ')).toContain('temporal/main.ts');
    expect(compose.services.worker!.depends_on?.[serviceByImage('axllent/mailpit:')[0]]?.condition).toBe(
      'service_healthy',
    );

    const dockerfile = fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/RUN npm run build:workflows/);
    const bundle = /^ENV WORKFLOW_BUNDLE_PATH=(\S+)$/m.exec(dockerfile)?.[1];
    expect(bundle).toBeDefined();
    expect(config.WORKFLOW_BUNDLE_PATH).toBe(bundle);
  });
});

describe('Dockerfile and .dockerignore', () => {
  it('keep local state, installed modules and secrets out of the image', () => {
    const ignored = fs.readFileSync(path.join(repoRoot, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.stepwise', '.env', '.git']));
  });

  it('copies every top-level source the API, the worker and the CLI import', () => {
    const dockerfile = fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json']));
    const needed = topLevelSources(['api/server.ts', 'temporal/main.ts', 'temporal/build-bundle.ts', 'cli/index.ts']);
    expect(needed).toEqual(expect.arrayContaining(['api', 'config.ts', 'db', 'domain', 'shared', 'temporal']));
    expect(needed.filter((d) => !copied.includes(d))).toEqual([]);
  });
});

/** Top-level files and folders reached by following relative imports from the entrypoints. */
function topLevelSources(entrypoints: string[]): string[] {
  const seen = new Set<string>();
  const queue = entrypoints.map((e) => path.join(repoRoot, e));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = fs.readFileSync(file, 'utf8');
    for (const [, spec] of source.matchAll(/(?:from|import|require\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const base = path.resolve(path.dirname(file), spec!);
      const resolved = [`${base}.ts`, path.join(base, 'index.ts'), base].find(
        (c) => fs.existsSync(c) && fs.statSync(c).isFile(),
      );
      if (resolved) queue.push(resolved);
    }
  }
  return [...new Set([...seen].map((f) => path.relative(repoRoot, f).split(path.sep)[0]!))].sort();
}
