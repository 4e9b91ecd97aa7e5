/**
 * The shell examples of the README, docs/api.md and docs/evals.md are meant to run as pasted, one after the other, each file on
 * its own: every `$VAR` they use is assigned earlier in the same file (or is the reader's own, `KEY`: the demo key
 * `npm run dev` prints), every tool they call is listed where the file's examples begin, and an execution id in a URL
 * path is percent-encoded (`#` would end the path, curl globs `[…]`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/run-node';

/** The files whose examples run in order, and the fewest shell blocks each holds (so a lost example is noticed). */
const FILES: [file: string, minBlocks: number][] = [
  ['README.md', 5],
  ['docs/api.md', 9],
  ['docs/evals.md', 6],
];
/**
 * Variables the reader sets themselves, as each file says where they first appear: `KEY` (docs/api.md), and the
 * `export` lines `npm run dev` prints (the README).
 */
const READER_SET = new Set(['KEY', 'STEPWISE_URL', 'STEPWISE_API_KEY']);
/** Commands of the shell itself or of this project's own setup (the quick start installs them). */
const NOT_TOOLS = new Set(['echo', 'printf', 'export', 'cd', 'npm', 'node', 'npx', 'docker', 'cat', 'unset']);
/** Shell keywords and builtins a helper function of the examples uses. */
const SHELL_WORDS = new Set(['local', 'return', 'if', 'then', 'else', 'fi', 'until', 'while', 'for', 'do', 'done']);

interface Block {
  line: number;
  code: string;
}

function shellBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1] !== '```') i++;
    blocks.push({ line: start + 1, code: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

/** The code the shell expands: quoted heredoc bodies, single-quoted strings and comments removed. */
function expanded(code: string): string {
  return code
    .replace(/<<'(\w+)'\n[\s\S]*?\n\1(?=\n|$)/g, '')
    .replace(/'[^'\n]*'/g, "''")
    .replace(/\$\{(\w+)[^}]*\}/g, '$$$1')
    .replace(/(^|\s)#.*$/gm, '$1');
}

/** `$VAR`s used before any line of the file assigned them. */
function unassignedVariables(file: string, blocks: Block[]): string[] {
  const assigned = new Set(READER_SET);
  const unassigned: string[] = [];
  for (const block of blocks) {
    for (const [offset, line] of expanded(block.code).split('\n').entries()) {
      // Assignments on a line count for what follows them on it (`ID=msg_1; TS=…; … "$ID"`).
      const tokens = [...line.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Z_][A-Z0-9_]*)=|\$([A-Z_][A-Z0-9_]*)/g)];
      for (const m of tokens) {
        if (m[1]) assigned.add(m[1]);
        else if (m[2] && !assigned.has(m[2])) unassigned.push(`${file}:${block.line + offset} $${m[2]}`);
      }
    }
  }
  return unassigned;
}

/**
 * Each command of a line (continuation lines joined): its start, after a pipe, `;`, `&&`, `||` or in `$(…)`; not the
 * shell's own words, not a function the examples define (`sw() {`), not what a double-quoted string without a command
 * substitution holds (a jq filter's `| select(…)`).
 */
function toolsCalled(blocks: Block[]): Set<string> {
  const tools = new Set<string>();
  const defined = new Set(blocks.flatMap((b) => [...b.code.matchAll(/^(\w+)\(\) \{/gm)].map((m) => m[1]!)));
  for (const block of blocks) {
    const code = expanded(block.code)
      .replace(/\\\n/g, ' ')
      .replace(/"(?:[^"\\]|\\.)*"/g, (quoted) => (quoted.includes('$(') ? quoted : '""'));
    for (const m of code.matchAll(/(?:^|\||;|&&|\$\()\s*(?:[A-Za-z_]\w*=[^\s$]*\s+)*([a-z][\w-]*)(?![\w-]*=)/gm)) {
      const word = m[1]!;
      if (!NOT_TOOLS.has(word) && !SHELL_WORDS.has(word) && !defined.has(word)) tools.add(word);
    }
  }
  return tools;
}

describe.each(FILES)('shell examples of %s', (file, minBlocks) => {
  const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
  const blocks = shellBlocks(text);

  it('are found', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(minBlocks);
  });

  it("use only variables assigned earlier in the file (or the reader's KEY)", () => {
    expect(unassignedVariables(file, blocks)).toEqual([]);
  });

  it('call only tools the file lists where its examples begin', () => {
    const listed = /\*\*Tools the examples use\.\*\*([^\n]*(?:\n(?!\n)[^\n]*)*)/.exec(text)?.[1] ?? '';
    expect(listed).not.toBe('');
    const tools = toolsCalled(blocks);
    expect(tools.has('curl')).toBe(true);
    expect([...tools].filter((t) => !listed.includes(`\`${t}\``))).toEqual([]);
  });

  it('percent-encode execution ids in URL paths', () => {
    const raw = blocks.flatMap((b) =>
      b.code.split('\n').flatMap((l, i) => (/\/steps\/[^/\s"?]*[#[\]]/.test(l) ? [`${file}:${b.line + i}`] : [])),
    );
    expect(raw).toEqual([]);
  });
});

it('the README stays short enough to read in one sitting (at most 250 lines)', () => {
  expect(fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
});

describe('the checks themselves', () => {
  it('catch a variable used before it is assigned, and a tool nobody listed', () => {
    const blocks = shellBlocks('```sh\ncurl "$API/x" | grep y\nAPI=http://h\n```\n');
    expect(unassignedVariables('t.md', blocks)).toEqual(['t.md:2 $API']);
    expect([...toolsCalled(blocks)]).toEqual(['curl', 'grep']);
  });

  it("count neither the examples' own functions, shell words nor a jq filter's words as tools", () => {
    const blocks = shellBlocks(
      '```sh\nf() { local x; x=$(curl -s u | jq ".[] | select(.a)") || return; }\nf | sed s\n```\n',
    );
    expect([...toolsCalled(blocks)]).toEqual(['curl', 'jq', 'sed']);
  });

  it('docs/api.md says how to encode an execution id', () => {
    const api = fs.readFileSync(path.join(repoRoot, 'docs/api.md'), 'utf8');
    expect(api).toMatch(/percent-encoded[^.]*`ask%232`/);
  });
});
