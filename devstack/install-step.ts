/**
 * One step of an install (pip, Maven, javac), its output passed on clean. pip's running-as-root warning is turned
 * off: the tools go into folders of their own under .stepwise/tools (or a virtualenv), never into the system's
 * site-packages the warning is about. ANSI escapes are stripped: Maven 3.8 writes colour resets (`ESC[0m`) even in
 * batch mode with colour off and its output on a pipe, and they show as garbage in logs and CI.
 */
import { spawnSync } from 'node:child_process';

// eslint-disable-next-line no-control-regex -- the escape character is what this matches
const ANSI_ESCAPE = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/** The environment of an install step: the caller's, with pip's root warning and version check off. */
export function installStepEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...base, PIP_ROOT_USER_ACTION: 'ignore', PIP_DISABLE_PIP_VERSION_CHECK: '1', NO_COLOR: '1' };
}

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_ESCAPE, '');
}

/**
 * Runs `command` with `args`, writes what it printed (stdout, then stderr) through `write` once it ends, without ANSI
 * escapes and only when there is more than whitespace; true when it exited 0. The steps run quiet (`-q`), so holding
 * their output until the end hides no progress.
 */
export function runInstallStep(
  command: string,
  args: string[],
  write: (text: string) => void = (text) => process.stderr.write(text),
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const res = spawnSync(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: installStepEnv(env),
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const output of [res.stdout, res.stderr]) {
    const clean = stripAnsi(output ?? '');
    if (clean.trim() !== '') write(clean.endsWith('\n') ? clean : `${clean}\n`);
  }
  if (res.error) write(`${command}: ${res.error.message}\n`);
  return res.status === 0;
}
