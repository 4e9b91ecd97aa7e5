/**
 * The body of one expression evaluator process (forked by evaluator.ts). Plain CommonJS on purpose: it runs with a
 * bare `node` (no TypeScript loader) under tsx, jest and the Docker image alike.
 *
 * It receives only `{ id, expression, data, limits }` over IPC and answers `{ id, ok, json }` or
 * `{ id, ok: false, limit, message }`. What it cannot bound itself (a built-in call that never returns, a heap that
 * outgrows --max-old-space-size) the parent bounds by killing this process, which is why it is a process and not a
 * thread: a single oversized allocation in a worker thread aborts the whole host process.
 */
'use strict';

const jsonata = require('jsonata');
const { RE2JS } = require('re2js');

/** A limit of ours was hit; `limit` says which kind (the parent reports it). */
class LimitError extends Error {
  constructor(limit, message) {
    super(message);
    this.limit = limit;
  }
}

/**
 * JSONata's `RegexEngine`: constructed with the RegExp its parser built from a `/…/` literal, used through
 * `lastIndex` + `exec` like a global RegExp. Backed by RE2 (linear time), so `/(a+)+$/` cannot backtrack.
 */
class Re2RegExp {
  constructor(regexp) {
    try {
      this.re2 = RE2JS.compile(RE2JS.translateRegExp(regexp));
    } catch (err) {
      // Backreferences, lookarounds…: features that need backtracking are exactly the ones RE2 leaves out.
      throw new LimitError('regex', `regular expression /${regexp.source}/ is not supported (${err.message})`);
    }
    this.lastIndex = 0;
  }

  exec(str) {
    if (this.lastIndex > str.length) {
      this.lastIndex = 0;
      return null;
    }
    const m = this.re2.matcher(str);
    if (!m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const match = [m.group(0)];
    for (let i = 1; i <= m.groupCount(); i++) match.push(m.group(i) ?? undefined);
    match.index = m.start();
    match.input = str;
    this.lastIndex = m.end();
    return match;
  }
}

/** Built-ins whose result size is decided by a small argument get a check before they allocate. */
let builtins;
async function loadBuiltins() {
  const names = ['pad', 'join', 'string'];
  const found = await Promise.all(names.map((n) => jsonata(`$${n}`).evaluate(null)));
  builtins = Object.fromEntries(names.map((n, i) => [n, found[i]]));
}

function tooLong(what, chars, max) {
  return new LimitError('size', `${what} of ${chars} characters is above the size limit (${max} characters)`);
}

function registerCapped(expr, limits) {
  const max = limits.maxStringChars;
  const { pad, join, string } = builtins;
  expr.registerFunction(
    'pad',
    function (str, width, char) {
      const w = Math.abs(Math.trunc(width));
      if (w > max) throw tooLong('$pad width', w, max);
      return pad.implementation.call(this, str, width, char);
    },
    pad.signature.definition,
  );
  expr.registerFunction(
    'join',
    function (strs, separator) {
      if (Array.isArray(strs)) {
        let total = (strs.length - 1) * (typeof separator === 'string' ? separator.length : 0);
        for (const s of strs) total += typeof s === 'string' ? s.length : 0;
        if (total > max) throw tooLong('$join result', total, max);
      }
      return join.implementation.call(this, strs, separator);
    },
    join.signature.definition,
  );
  expr.registerFunction(
    'string',
    function (...args) {
      const result = string.implementation.apply(this, args);
      if (typeof result === 'string' && result.length > max) throw tooLong('$string result', result.length, max);
      return result;
    },
    string.signature.definition,
  );
}

/** JSONata functions are objects flagged like this; they have no JSON form (and may be circular). */
function isJsonataFunction(value) {
  if (typeof value === 'function') return true;
  if (typeof value !== 'object' || value === null) return false;
  return value._jsonata_lambda === true || value._jsonata_function === true;
}

/**
 * Rough JSON size of `value`, stopping as soon as it passes `max`: every node counts at least 1, so this walk is
 * bounded by `max` even for a result that shares sub-arrays (which JSON.stringify would expand exponentially).
 * String lengths are O(1) even for the concatenation ropes a `&` loop builds, so nothing is flattened here.
 */
function checkResultSize(value, max) {
  let total = 0;
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    total += 1;
    if (typeof v === 'string') total += v.length + 2;
    else if (typeof v === 'number') total += 8;
    else if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (typeof v === 'object' && v !== null && !isJsonataFunction(v)) {
      for (const key of Object.keys(v)) {
        total += key.length + 3;
        stack.push(v[key]);
      }
    }
    if (total > max) throw new LimitError('size', `the result is above the size limit (${max} characters)`);
  }
}

const ERROR_HINTS = {
  D1011: 'nested too deeply',
  D2014: 'a range is above the sequence limit',
  D2015: 'a sequence is above the sequence limit',
};

function describe(err) {
  if (err instanceof LimitError) return { limit: err.limit, message: err.message };
  if (typeof err === 'object' && err !== null) {
    if (err.code === 'D1012') return { limit: 'time', message: `took longer than the time limit (${err.value} ms)` };
    const hint = typeof err.code === 'string' ? ERROR_HINTS[err.code] : undefined;
    const sizeCode = err.code === 'D2014' || err.code === 'D2015';
    const msg = hint ?? (typeof err.message === 'string' ? err.message : 'invalid expression');
    const pos = typeof err.position === 'number' ? ` (at ${err.position})` : '';
    // "Invalid string length" / "Invalid array length": V8's own size ceilings, reached by a doubling loop.
    const limit = sizeCode || err instanceof RangeError ? 'size' : undefined;
    return { limit, message: `${msg}${pos}` };
  }
  return { message: String(err) };
}

async function evaluate({ expression, data, limits }) {
  const expr = jsonata(expression, {
    RegexEngine: Re2RegExp,
    // JSONata's own check (between steps) ends ordinary loops gracefully; the parent's timer ends the rest.
    timeout: limits.timeoutMs,
    stack: limits.maxDepth,
    sequence: limits.maxSequence,
  });
  registerCapped(expr, limits);
  const result = await expr.evaluate(data);
  if (result === undefined) return 'null';
  checkResultSize(result, limits.maxResultChars);
  // JSONata sequences carry extra properties and may contain functions: keep only what JSON can carry.
  const json = JSON.stringify(result, (_key, value) => (isJsonataFunction(value) ? undefined : value));
  if (json === undefined) return 'null';
  if (json.length > limits.maxResultChars) {
    throw new LimitError('size', `the result is above the size limit (${limits.maxResultChars} characters)`);
  }
  return json;
}

process.on('message', (msg) => {
  evaluate(msg).then(
    (json) => process.send({ id: msg.id, ok: true, json }),
    (err) => process.send({ id: msg.id, ok: false, ...describe(err) }),
  );
});
// The parent went away (even by SIGKILL): nothing left to answer to.
process.on('disconnect', () => process.exit(0));

loadBuiltins().then(
  () => process.send({ ready: true }),
  (err) => {
    process.stderr.write(`expression evaluator failed to start: ${String(err)}\n`);
    process.exit(1);
  },
);
