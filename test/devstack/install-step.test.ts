/**
 * What the dev stack's first start prints while it installs: pip run as root says nothing about root (the tools go
 * into folders of their own), and a tool's ANSI escapes (Maven 3.8 writes colour resets even in batch mode) are
 * stripped. Real pip installing a real wheel, offline; a real process writing escapes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runInstallStep } from '../../devstack/install-step';
import { which } from '../../devstack/install';

const python = which('python3') ?? which('python');

/** A wheel of one empty package, built here (a wheel is a zip with its metadata), so pip installs it offline. */
function buildWheel(dir: string): string {
  const script = `
import base64, hashlib, sys, zipfile
files = {'ncdemo/__init__.py': '', 'ncdemo-0.1.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: ncdemo\\nVersion: 0.1\\n',
         'ncdemo-0.1.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}
record = ''.join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b'=').decode()},{len(v)}\\n" for k, v in files.items())
files['ncdemo-0.1.dist-info/RECORD'] = record + 'ncdemo-0.1.dist-info/RECORD,,\\n'
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for k, v in files.items(): z.writestr(k, v)
`;
  const wheel = path.join(dir, 'ncdemo-0.1-py3-none-any.whl');
  execFileSync(python!, ['-c', script, wheel]);
  return wheel;
}

describe('install steps (devstack/install-step.ts)', () => {
  let dir: string;
  beforeAll(() => {
    if (!python)
      throw new Error('python3 is needed (npm run dev installs the Temporal CLI with it): apt-get install python3');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-install-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('install with pip without its running-as-root warning (as root or not), and the package lands in the target', () => {
    const wheel = buildWheel(dir);
    const target = path.join(dir, 'target');
    let printed = '';
    // The environment of a root shell as `npm run dev` gets it: nothing about pip in it.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PIP_')));
    const ok = runInstallStep(
      python!,
      ['-m', 'pip', 'install', '--quiet', '--no-index', '--target', target, wheel],
      (text) => (printed += text),
      env,
    );
    expect({ ok, printed }).toEqual({ ok: true, printed: '' });
    expect(fs.existsSync(path.join(target, 'ncdemo', '__init__.py'))).toBe(true);
  });

  it('passes on what a step prints without its ANSI escapes, and says when it failed', () => {
    let printed = '';
    const ok = runInstallStep(
      python!,
      [
        '-c',
        "import sys; print('\\x1b[0m\\x1b[0m\\x1b[1;31mERROR\\x1b[m fetch failed'); sys.stderr.write('\\x1b[33mwarn\\x1b[0m\\n'); sys.exit(3)",
      ],
      (text) => (printed += text),
    );
    expect(ok).toBe(false);
    expect(printed).toBe('ERROR fetch failed\nwarn\n');
  });
});
