/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (`npm run bench -- --profile <dir>`): self time by function and
 * by package or source folder, heaviest first. `tsx bench/profile-summary.ts <file.cpuprofile | folder> [top=25]`;
 * given a folder (one per process: its threads each write a profile), the profile with the most busy time is read.
 */
import path from 'node:path';
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/@temporalio/worker/lib/x.js` → `@temporalio/worker`; `/repo/db/runs.ts` → `db/`. */
function area(url: string): string {
  if (!url) return '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return 'node:internal';
  const own = /\/(api|db|temporal|runtime|bench|devstack)\/(?:([^/]+)\/)?/.exec(url);
  if (own) return own[2] && !own[2].includes('.') ? `${own[1]}/${own[2]}/` : `${own[1]}/`;
  return url.split('/').slice(-2).join('/');
}

function busiest(file: string): Profile {
  if (!fs.statSync(file).isDirectory()) return JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const profiles = fs
    .readdirSync(file)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(file, f), 'utf8')) as Profile);
  const busy = (p: Profile) => {
    const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
    return p.samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : (p.timeDeltas[i] ?? 0)), 0);
  };
  const best = profiles.sort((a, b) => busy(b) - busy(a))[0];
  if (!best) throw new Error(`no .cpuprofile in ${file}`);
  return best;
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [top]');
  const top = Number(topArg ?? 25);
  const profile = busiest(file);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byArea.set(area(url), (byArea.get(area(url)) ?? 0) + us);
  }
  const print = (title: string, m: Map<string, number>) => {
    process.stdout.write(`\n${title} (total ${(total / 1000).toFixed(0)} ms sampled)\n`);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}\n`,
      );
    }
  };
  print('self time by area', byArea);
  print('self time by function', byFunction);
}

main();
