/**
 * The README's shell examples are meant to run as pasted, one after the other: every `$VAR` they use is assigned
 * earlier (or is the reader's own, `KEY`: the demo key `npm run dev` prints), every tool they call is listed where the
 * examples begin, and an execution id in a URL path is percent-encoded (`#` would end the path, curl globs `[…]`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/run-node';

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

/** Variables the reader sets themselves, as the README says where they first appear. */
const READER_SET = new Set(['KEY']);
/** Commands of the shell itself or of this project's own setup (the quick start installs them). */
const NOT_TOOLS = new Set(['echo', 'printf', 'export', 'cd', 'npm', 'node', 'docker']);

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

const blocks = shellBlocks(readme);

describe('README shell examples', () => {
  it('are found', () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it("use only variables assigned earlier in the README (or the reader's KEY)", () => {
    const assigned = new Set(READER_SET);
    const unassigned: string[] = [];
    for (const block of blocks) {
      for (const [offset, line] of expanded(block.code).split('\n').entries()) {
        // Assignments on a line count for what follows them on it (`ID=msg_1; TS=…; … "$ID"`).
        const tokens = [...line.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Z_][A-Z0-9_]*)=|\$([A-Z_][A-Z0-9_]*)/g)];
        for (const m of tokens) {
          if (m[1]) assigned.add(m[1]);
          else if (m[2] && !assigned.has(m[2])) unassigned.push(`README.md:${block.line + offset} $${m[2]}`);
        }
      }
    }
    expect(unassigned).toEqual([]);
  });

  it('call only tools the README lists where the examples begin', () => {
    const listed = /\*\*Tools the examples use\.\*\*([^\n]*(?:\n(?!\n)[^\n]*)*)/.exec(readme)?.[1] ?? '';
    expect(listed).not.toBe('');
    const tools = new Set<string>();
    for (const block of blocks) {
      // Each command of a line (continuation lines joined): its start, after a pipe, `;`, `&&`, `||` or in `$(…)`.
      const code = expanded(block.code).replace(/\\\n/g, ' ');
      for (const m of code.matchAll(/(?:^|\||;|&&|\$\()\s*(?:[A-Z_][A-Z0-9_]*=[^\s$]*\s+)*([a-z][\w-]*)/gm)) {
        if (!NOT_TOOLS.has(m[1]!)) tools.add(m[1]!);
      }
    }
    expect(tools.size).toBeGreaterThan(3);
    expect([...tools].filter((t) => !listed.includes(`\`${t}\``))).toEqual([]);
  });

  it('percent-encode execution ids in URL paths, as the README says to', () => {
    const raw = blocks.flatMap((b) =>
      b.code.split('\n').flatMap((l, i) => (/\/steps\/[^/\s"?]*[#[\]]/.test(l) ? [`README.md:${b.line + i}`] : [])),
    );
    expect(raw).toEqual([]);
    expect(readme).toMatch(/percent-encoded[^.]*`ask%232`/);
  });
});
