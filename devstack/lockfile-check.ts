/**
 * What makes package-lock.json complete: every optional dependency of every locked package has its own entry, whatever
 * the platform. `npm ci` refuses a lockfile that lacks one (see devstack/lockfile.ts); test/lockfile.test.ts checks it.
 */

export interface LockEntry {
  version?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  license?: string;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  engines?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface Lockfile {
  packages: Record<string, LockEntry>;
  [key: string]: unknown;
}

export interface MissingEntry {
  /** The lock key of the package that declares the optional dependency. */
  parent: string;
  name: string;
  version: string;
}

/** Where node would find `name` from the package at lock key `from`: its own node_modules, then each ancestor's. */
function resolves(lock: Lockfile, from: string, name: string): boolean {
  let base = from;
  for (;;) {
    if (lock.packages[`${base ? `${base}/` : ''}node_modules/${name}`]) return true;
    if (!base) return false;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

export function missingOptionalEntries(lock: Lockfile): MissingEntry[] {
  const missing: MissingEntry[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      if (!resolves(lock, key, name)) missing.push({ parent: key, name, version });
    }
  }
  return missing;
}

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
// Name fragment → npm `cpu`; longest first so `arm64` is not read as `arm`.
const CPUS: [string, string][] = [
  ['arm64', 'arm64'],
  ['x64', 'x64'],
  ['ia32', 'ia32'],
  ['ppc64', 'ppc64'],
  ['s390x', 's390x'],
  ['riscv64', 'riscv64'],
  ['loong64', 'loong64'],
  ['wasm32', 'wasm32'],
  ['arm', 'arm'],
];

/** os/cpu/libc as a platform package's name states them (`@swc/core-linux-arm64-musl` → linux, arm64, musl). */
export function platformOf(name: string): { os?: string[]; cpu?: string[]; libc?: string[] } {
  const parts = (name.split('/').pop() ?? name).split('-');
  const os = OSES.find((candidate) => parts.includes(candidate));
  const cpu = CPUS.find(([fragment]) => parts.includes(fragment))?.[1];
  const tail = parts.slice(-1)[0] ?? '';
  const libc =
    os === 'linux' ? (tail.startsWith('musl') ? 'musl' : tail.startsWith('gnu') ? 'glibc' : undefined) : undefined;
  return {
    ...(os ? { os: [os] } : {}),
    ...(cpu ? { cpu: [cpu] } : {}),
    ...(libc ? { libc: [libc] } : {}),
  };
}
