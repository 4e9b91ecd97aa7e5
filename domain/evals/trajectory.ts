/**
 * The `trajectory` scorer: did the agent make the tool calls it should have? Expected calls are matched to the calls
 * made — in order (the longest common subsequence) or in any order (a maximum bipartite matching, so one loose
 * expectation cannot steal the call a stricter one needed) — and the score is F1 of the match (recall for `subset`,
 * where extra calls are allowed and so cost nothing). The reason names the calls matched, missed and extra.
 */
import { canonicalJson, type JsonValue } from '../json';
import type { CompiledScorer } from './compile';
import { cannotScore, fmt, verdict } from './result';
import type { ScoreResult, ScoringSample, ToolCall } from './sample';

/** Most calls of a run a trajectory scorer looks at (matching costs expected × actual). */
export const MAX_TRAJECTORY_CALLS = 2_000;

type Of<K extends CompiledScorer['kind']> = Extract<CompiledScorer, { kind: K }>;
type ExpectedCall = Of<'trajectory'>['config']['expected'][number];

export interface TrajectoryMatch {
  /** Pairs [expected index, actual index], in expected order. */
  matched: [number, number][];
  /** Expected calls with no partner. */
  missed: number[];
  /** Actual calls with no partner. */
  extra: number[];
  precision: number;
  recall: number;
  f1: number;
}

function argumentsMatch(expected: ExpectedCall, actual: ToolCall, mode: 'exact' | 'partial'): boolean {
  if (expected.arguments === undefined) return true;
  if (mode === 'exact') return canonicalJson(expected.arguments) === canonicalJson(actual.arguments);
  const args: JsonValue = actual.arguments;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return false;
  return Object.entries(expected.arguments).every(
    ([key, value]) => Object.hasOwn(args, key) && canonicalJson(args[key]) === canonicalJson(value),
  );
}

/** Matches `expected` against `actual` calls; `ordered` keeps both orders, otherwise any pairing is allowed. */
export function matchTrajectory(
  expected: ExpectedCall[],
  actual: ToolCall[],
  ordered: boolean,
  args: 'exact' | 'partial',
): TrajectoryMatch {
  // Decided once per pair: the matchings below ask again and again.
  const table = expected.map((e) => actual.map((a) => e.name === a.name && argumentsMatch(e, a, args)));
  const fits = (e: number, a: number) => table[e]![a]!;
  const pairs = ordered
    ? longestCommonSubsequence(expected.length, actual.length, fits)
    : bipartite(expected.length, actual.length, fits);
  const usedE = new Set(pairs.map(([e]) => e));
  const usedA = new Set(pairs.map(([, a]) => a));
  const precision = actual.length === 0 ? 0 : pairs.length / actual.length;
  const recall = expected.length === 0 ? 1 : pairs.length / expected.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return {
    matched: pairs,
    missed: expected.map((_, i) => i).filter((i) => !usedE.has(i)),
    extra: actual.map((_, i) => i).filter((i) => !usedA.has(i)),
    precision,
    recall,
    f1,
  };
}

/** The longest common subsequence by DP over n × m cells; ties keep the earlier expected calls matched. */
function longestCommonSubsequence(n: number, m: number, fits: (e: number, a: number) => boolean): [number, number][] {
  // len[e][a]: LCS of expected[e..] and actual[a..].
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let e = n - 1; e >= 0; e--) {
    for (let a = m - 1; a >= 0; a--) {
      len[e]![a] = fits(e, a) ? len[e + 1]![a + 1]! + 1 : Math.max(len[e + 1]![a]!, len[e]![a + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  for (let e = 0, a = 0; e < n && a < m;) {
    if (fits(e, a) && len[e]![a] === len[e + 1]![a + 1]! + 1) {
      pairs.push([e, a]);
      e++;
      a++;
    } else if (len[e]![a + 1]! >= len[e + 1]![a]!) a++;
    else e++;
  }
  return pairs;
}

/** Maximum bipartite matching (augmenting paths); each expected call tries the earliest free actual call first. */
function bipartite(n: number, m: number, fits: (e: number, a: number) => boolean): [number, number][] {
  const owner = new Array<number>(m).fill(-1);
  const augment = (e: number, seen: boolean[]): boolean => {
    for (let a = 0; a < m; a++) {
      if (seen[a] || !fits(e, a)) continue;
      seen[a] = true;
      if (owner[a] === -1 || augment(owner[a]!, seen)) {
        owner[a] = e;
        return true;
      }
    }
    return false;
  };
  for (let e = 0; e < n; e++) augment(e, new Array<boolean>(m).fill(false));
  const pairs: [number, number][] = [];
  owner.forEach((e, a) => {
    if (e >= 0) pairs.push([e, a]);
  });
  return pairs.sort((x, y) => x[0] - y[0]);
}

function listed(names: string[]): string {
  const shown = names.slice(0, 8).join(', ');
  return names.length > 8 ? `${shown} … (+${names.length - 8})` : shown;
}

export function scoreTrajectory(scorer: Of<'trajectory'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  if (sample.trajectory.length > MAX_TRAJECTORY_CALLS) {
    return cannotScore(name, `the run made ${sample.trajectory.length} tool calls (at most ${MAX_TRAJECTORY_CALLS})`);
  }
  const result = matchTrajectory(
    config.expected,
    sample.trajectory,
    config.match === 'ordered',
    config.arguments_match,
  );
  const score = config.match === 'subset' ? result.recall : result.f1;
  const pass = score >= config.pass_threshold;
  const parts = [`${result.matched.length}/${config.expected.length} expected calls matched`];
  if (result.matched.length > 0) parts[0] += ` (${listed(result.matched.map(([e]) => config.expected[e]!.name))})`;
  if (result.missed.length > 0) {
    const missed = result.missed.map((e) => config.expected[e]!.name);
    const extraNames = new Set(result.extra.map((a) => sample.trajectory[a]!.name));
    const otherArgs = missed.filter((n) => extraNames.has(n));
    const order = config.match === 'ordered' && otherArgs.length > 0 ? 'other arguments or order' : 'other arguments';
    const hint = otherArgs.length > 0 ? ` (${listed([...new Set(otherArgs)])} called with ${order})` : '';
    parts.push(`missed: ${listed(missed)}${hint}`);
  }
  if (result.extra.length > 0) {
    const extra = `extra: ${listed(result.extra.map((a) => sample.trajectory[a]!.name))}`;
    parts.push(config.match === 'subset' ? `${extra} (allowed)` : extra);
  }
  parts.push(`precision ${fmt(result.precision)}, recall ${fmt(result.recall)}, F1 ${fmt(result.f1)}`);
  return verdict(name, score, pass, parts.join('; '));
}
