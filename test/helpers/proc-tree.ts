/** Linux process table reads (/proc) for tests that must prove no process was left behind. */
import fs from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** R, S, D, Z (zombie: exited, waiting to be reaped), … */
  state: string;
}

/** Every process visible now. */
export function processTable(): ProcInfo[] {
  const table: ProcInfo[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readStat(Number(entry));
    if (info) table.push(info);
  }
  return table;
}

function readStat(pid: number): ProcInfo | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone between readdir and read
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
  const [state = '?', ppid = '0', pgid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(ppid), pgid: Number(pgid), state };
}

/** `root` and all its descendants (children, grandchildren…) as they are now. */
export function processTree(root: number): ProcInfo[] {
  const table = processTable();
  const found: ProcInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const info = table.find((p) => p.pid === pid);
    if (!info) continue;
    found.push(info);
    for (const child of table) if (child.ppid === pid) queue.push(child.pid);
  }
  return found;
}

/** Live (non-zombie) processes that are one of `pids` or belong to one of the process groups `pgids`. */
export function survivors(pids: number[], pgids: number[]): ProcInfo[] {
  return processTable().filter((p) => p.state !== 'Z' && (pids.includes(p.pid) || pgids.includes(p.pgid)));
}
