'use strict';
// Open Job Spec retry policy in standard-library Node.js (18 or later).
//
// An independent implementation of the OJS retry policy (ojs-retry.md,
// 1.0.0-rc.1) with retrykit's resolutions of the spec's open questions
// (docs/decisions.md). It is the library behind adapter.js and a template
// for JavaScript implementations. Section 2.1 of PROTOCOL.md explains why it
// brings its own JSON parser: JSON.parse turns integers above 2^53 into
// doubles, keeps only the last of duplicate keys and forgets how a number
// was written (3 and 3.0, 1e400 and Infinity).
//
// Units: durations and delays are BigInt nanoseconds. `attempt` is the
// 1-based number of the attempt that just failed.

const MAX_NS = (1n << 63n) - 1n;
const SECOND = 1_000_000_000n;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;
const DAY = 24n * HOUR;
const MONTH = 730n * HOUR; // RK-07: a twelfth of a 365-day year
const YEAR = 365n * DAY;

const STRATEGIES = ['none', 'linear', 'exponential', 'polynomial'];
const ON_EXHAUSTION = ['discard', 'dead_letter'];
const FIELDS = ['max_attempts', 'initial_interval', 'backoff_coefficient', 'max_interval',
  'jitter', 'non_retryable_errors', 'on_exhaustion', 'backoff_strategy'];

const POLICY_INVALID = 'validation.retry_policy_invalid';
const PATTERN_INVALID = 'validation.pattern_invalid';
const REQUEST_INVALID = 'validation.invalid_request';

// OJSError is every rejection; `type` is the OJS error type string.
class OJSError extends Error {
  constructor(type, message) {
    super(message);
    this.type = type;
  }
}

// ---------------------------------------------------------------------------
// Strict JSON: objects keep every pair (duplicates included), numbers keep
// their text.

// Num is a JSON number as written.
class Num {
  constructor(text) { this.text = text; }
}

// Obj is a JSON object as its ordered [key, value] pairs.
class Obj {
  constructor(pairs) { this.pairs = pairs; }
  get(key) {
    let v;
    for (const [k, x] of this.pairs) if (k === key) v = x;
    return v;
  }
  has(key) { return this.pairs.some(([k]) => k === key); }
}

const MAX_DEPTH = 512;

// parseJSON reads one JSON text into null, booleans, strings, arrays, Num
// and Obj values. It throws SyntaxError on anything else.
function parseJSON(text) {
  let i = 0;
  const fail = (msg) => { throw new SyntaxError(`${msg} at offset ${i}`); };
  const ws = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const numRE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const value = (depth) => {
    if (depth > MAX_DEPTH) fail('nested too deeply');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const pairs = [];
      ws();
      if (text[i] === '}') { i++; return new Obj(pairs); }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key');
        const k = string();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        pairs.push([k, value(depth + 1)]);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return new Obj(pairs); }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    numRE.lastIndex = i;
    const m = numRE.exec(text);
    if (m === null) fail('unexpected character');
    i += m[0].length;
    return new Num(m[0]);
  };
  const string = () => {
    i++; // opening quote
    let out = '';
    let start = i;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) { out += text.slice(start, i); i++; return out; }
      if (c < 0x20) fail('control character in string');
      if (c !== 0x5c) { i++; continue; }
      out += text.slice(start, i);
      const e = text[i + 1];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
      if (simple !== undefined) { out += simple; i += 2; } else if (e === 'u') {
        const h = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) fail('bad \\u escape');
        out += String.fromCharCode(parseInt(h, 16));
        i += 6;
      } else fail('bad escape');
      start = i;
    }
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('trailing data');
  return v;
}

// Exact numbers: a JSON number text as a ratio of BigInts (den > 0), with
// a bound on the exponent so that 1e999999999 costs nothing.
function ratio(text) {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  const frac = m[3] || '';
  let exp = (m[4] ? Number(m[4]) : 0) - frac.length;
  let num = BigInt(m[2] + frac);
  if (m[1] === '-') num = -num;
  if (num === 0n) return { num: 0n, den: 1n, huge: false, tiny: false };
  if (exp > 400) return { num, den: 1n, huge: true, tiny: false };
  if (exp < -400) return { num, den: 1n, huge: false, tiny: true };
  if (exp >= 0) return { num: num * 10n ** BigInt(exp), den: 1n, huge: false, tiny: false };
  return { num, den: 10n ** BigInt(-exp), huge: false, tiny: false };
}

// ---------------------------------------------------------------------------
// Durations (RK-03, RK-07, RK-11, RK-12)

const DURATION_RE = /^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:\.([0-9]+))?S)?)?$/;
const UNIT = [YEAR, MONTH, DAY, null, HOUR, MINUTE, SECOND];

// parseDuration parses an OJS duration into BigInt nanoseconds.
function parseDuration(text) {
  const bad = (reason) => new OJSError(POLICY_INVALID, `invalid duration ${show(text)}: ${reason}`);
  if (typeof text !== 'string') throw bad('must be a string');
  if (text.length > 256) throw bad('longer than 256 bytes');
  const g = DURATION_RE.exec(text);
  if (g === null) throw bad('does not match P[nY][nM][nD][T[nH][nM][n[.f]S]]');
  if (g[4] !== undefined && g[5] === undefined && g[6] === undefined && g[7] === undefined) {
    throw bad('"T" must be followed by a time component');
  }
  let total = 0n;
  let seen = false;
  for (const k of [0, 1, 2, 4, 5, 6]) {
    const digits = g[k + 1];
    if (digits === undefined) continue;
    seen = true;
    const sig = digits.replace(/^0+/, '');
    if (sig.length > 21) throw bad('exceeds the largest duration (about 292 years)');
    if (sig) total += BigInt(sig) * UNIT[k];
  }
  if (!seen) throw bad('has no component');
  const frac = g[8];
  if (frac !== undefined) {
    let ns = BigInt((frac.slice(0, 9) + '000000000').slice(0, 9));
    if (frac.length > 9 && frac[9] >= '5') ns += 1n; // half up on the first dropped digit
    total += ns;
  }
  if (total > MAX_NS) throw bad('exceeds the largest duration (about 292 years)');
  return total;
}

// formatDuration writes the canonical form: "PT0S", "PT0.5S", "PT1H30M".
function formatDuration(ns) {
  if (ns === 0n) return 'PT0S';
  const h = ns / HOUR;
  let rest = ns % HOUR;
  const mi = rest / MINUTE;
  rest %= MINUTE;
  const s = rest / SECOND;
  const frac = rest % SECOND;
  let out = 'PT';
  if (h) out += `${h}H`;
  if (mi) out += `${mi}M`;
  if (frac) out += `${s}.${frac.toString().padStart(9, '0').replace(/0+$/, '')}S`;
  else if (s) out += `${s}S`;
  return out;
}

// ---------------------------------------------------------------------------
// Matching (section 6.2, RK-15)

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// patternProblem returns why p is not a valid non_retryable_errors entry, or "".
function patternProblem(p) {
  if (typeof p !== 'string') return `must be a string, got ${typeName(p)}`;
  if (p === '') return 'must not be empty';
  if (p === '.*') return '".*" needs a non-empty prefix';
  if (LONE_SURROGATE.test(p)) return 'must be valid UTF-8';
  return '';
}

// Matcher tests error types against a validated pattern list.
class Matcher {
  constructor(patterns) {
    this.exact = new Set();
    this.prefixes = [];
    patterns.forEach((p, i) => {
      const why = patternProblem(p);
      if (why) throw new OJSError(PATTERN_INVALID, `non_retryable_errors[${i}]: ${why}`);
      if (p.endsWith('.*')) this.prefixes.push(p.slice(0, -1)); // keeps the dot
      else this.exact.add(p);
    });
  }
  match(errorType) {
    return this.exact.has(errorType) || this.prefixes.some((pre) => errorType.startsWith(pre));
  }
}

// ---------------------------------------------------------------------------
// Policy

// floatRatio returns a finite double as an exact ratio of BigInts.
function floatRatio(x) {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const bits = dv.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e;
  if (exp === 0) e = -1074; else { mant |= 1n << 52n; e = exp - 1075; }
  return e >= 0 ? { num: mant << BigInt(e), den: 1n } : { num: mant, den: 1n << BigInt(-e) };
}

const BELOW_ONE = { num: (1n << 53n) - 1n, den: 1n << 53n }; // largest double below 1

class Policy {
  constructor(f) {
    this.maxAttempts = f.maxAttempts ?? 3n;
    this.initial = f.initial ?? SECOND;
    this.coefficient = f.coefficient ?? 2; // a double
    this.coefficientText = f.coefficientText ?? '2.0';
    this.max = f.max ?? 5n * MINUTE;
    this.jitter = f.jitter ?? true;
    this.patterns = f.patterns ?? [];
    this.onExhaustion = f.onExhaustion ?? 'discard';
    this.strategy = f.strategy ?? 'exponential';
    this.matcher = new Matcher(this.patterns);
    this.cint = Number.isInteger(this.coefficient) ? BigInt(this.coefficient) : null;
    Object.freeze(this);
  }

  // effective returns the effective policy as JSON text, all eight fields.
  effective() {
    return `{"max_attempts":${this.maxAttempts},"initial_interval":"${formatDuration(this.initial)}",` +
      `"backoff_coefficient":${this.coefficientText},"max_interval":"${formatDuration(this.max)}",` +
      `"jitter":${this.jitter},"non_retryable_errors":${JSON.stringify(this.patterns)},` +
      `"on_exhaustion":"${this.onExhaustion}","backoff_strategy":"${this.strategy}"}`;
  }

  // base is the delay after attempt n (BigInt >= 1) capped at max_interval,
  // before jitter: exact for integral coefficients, the power in float64
  // otherwise; it never overflows (RK-17).
  base(n) {
    const i = this.initial;
    const m = this.max;
    switch (this.strategy) {
      case 'none':
        return i;
      case 'linear': {
        const d = i * n;
        return d >= m ? m : d;
      }
      case 'polynomial': {
        if (n === 1n) return i;
        if (this.cint !== null) {
          let d = i;
          for (let k = 0n; k < this.cint; k++) { // at most 63 rounds: n >= 2
            d *= n;
            if (d >= m) return m;
          }
          return d;
        }
        const lg = Math.log2(Number(i)) + this.coefficient * Math.log2(Number(n));
        if (lg > 63.5) return m;
        return floatTimes(i, m, Math.pow(Number(n), this.coefficient));
      }
      default: { // exponential
        if (this.cint !== null) {
          if (this.cint === 1n) return i;
          let d = i;
          for (let k = 1n; k < n; k++) { // at most 63 rounds: C >= 2
            d *= this.cint;
            if (d >= m) return m;
          }
          return d;
        }
        if (n === 1n) return i;
        const e = Number(n - 1n);
        const lg = Math.log2(Number(i)) + e * Math.log2(this.coefficient);
        if (lg > 63.5) return m;
        return floatTimes(i, m, Math.pow(this.coefficient, e));
      }
    }
  }

  // delay is the final delay after attempt n with draw r ({num, den} in
  // [0, 1)): min(trunc(base·(0.5 + r)), max_interval), exactly.
  delay(n, r) {
    const d = this.base(n);
    if (!this.jitter) return d;
    const j = (d * (r.den + 2n * r.num)) / (2n * r.den);
    return j > this.max ? this.max : j;
  }

  // decide returns [action, delay or null] after attempt n failed.
  decide(n, errorType, code, r) {
    if (code === null || code === '' || code === 'RETRY') {
      // fall through to the policy
    } else if (code === 'DISCARD' || code === 'FAIL') {
      return ['discard', null];
    } else if (code === 'DEAD_LETTER') {
      return ['dead_letter', null];
    } else {
      throw new OJSError(REQUEST_INVALID, `unknown handler code ${show(code)}`);
    }
    const last = this.maxAttempts > 1n ? this.maxAttempts : 1n;
    if (this.matcher.match(errorType) || n >= last) return [this.onExhaustion, null];
    return ['retry', this.delay(n, r)];
  }
}

// floatTimes returns min(trunc(i·p), m) for a double p >= 1, exactly.
function floatTimes(i, m, p) {
  if (!Number.isFinite(p)) return m;
  const { num, den } = floatRatio(p);
  const d = (i * num) / den;
  return d >= m ? m : d;
}

const DEFAULT_POLICY = new Policy({});

function typeName(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Obj) return 'object';
  if (v instanceof Num) return 'number';
  return typeof v;
}

function show(v) {
  let s;
  if (v instanceof Num) s = v.text;
  else if (v instanceof Obj) s = '{object}';
  else if (Array.isArray(v)) s = '[array]';
  else if (v === undefined) s = 'nothing';
  else s = JSON.stringify(v);
  return s.length > 70 ? s.slice(0, 60) + '...' : s;
}

// policyFromValue validates a parsed policy (Obj, null or undefined for the
// default) and merges it over the defaults (section 8). Every problem is
// collected into one error naming each field.
function policyFromValue(value) {
  if (value === null || value === undefined) return DEFAULT_POLICY; // RK-09
  if (!(value instanceof Obj)) {
    throw new OJSError(POLICY_INVALID, `retry policy invalid: policy must be a JSON object, got ${typeName(value)}`);
  }
  const errs = [];
  const fields = new Map();
  const dups = [];
  for (const [k, v] of value.pairs) {
    if (fields.has(k)) {
      if (!dups.includes(k)) dups.push(k);
      continue;
    }
    fields.set(k, v);
  }
  for (const k of dups) errs.push([k, 'duplicate key']); // RK-08
  for (const k of fields.keys()) if (!FIELDS.includes(k)) errs.push([k || '""', 'unknown field']); // RK-02
  const f = {};
  if (fields.has('max_attempts')) { // RK-10: an integral value, 0 <= v <= 2^63-1
    const v = fields.get('max_attempts');
    let iv = null;
    if (v instanceof Num) {
      const r = ratio(v.text);
      if (r.huge) iv = r.num > 0n ? MAX_NS + 1n : -1n;
      else if (!r.tiny && r.num % r.den === 0n) iv = r.num / r.den;
      else if (r.tiny && r.num === 0n) iv = 0n;
    }
    if (iv === null || iv < 0n) errs.push(['max_attempts', `must be a non-negative integer, got ${show(v)}`]);
    else if (iv > MAX_NS) errs.push(['max_attempts', `must be at most ${MAX_NS}, got ${show(v)}`]);
    else f.maxAttempts = iv;
  }
  const durations = {};
  for (const name of ['initial_interval', 'max_interval']) {
    if (!fields.has(name)) continue;
    try {
      const d = parseDuration(fields.get(name));
      if (name === 'initial_interval' && d <= 0n) { errs.push([name, 'must be greater than zero']); continue; }
      durations[name] = d;
    } catch (e) {
      errs.push([name, e.message]);
    }
  }
  const iBad = fields.has('initial_interval') && durations.initial_interval === undefined;
  const mBad = fields.has('max_interval') && durations.max_interval === undefined;
  if (!iBad && !mBad) {
    const ei = durations.initial_interval ?? DEFAULT_POLICY.initial;
    const em = durations.max_interval ?? DEFAULT_POLICY.max;
    if (em < ei) {
      errs.push(['max_interval', `must be >= initial_interval (${formatDuration(em)} < ${formatDuration(ei)})`]);
    } else {
      f.initial = durations.initial_interval;
      f.max = durations.max_interval;
    }
  }
  if (fields.has('backoff_coefficient')) { // RK-14: finite and >= 1, for every strategy
    const v = fields.get('backoff_coefficient');
    if (!(v instanceof Num)) {
      errs.push(['backoff_coefficient', `must be a number, got ${typeName(v)}`]);
    } else {
      const c = Number(v.text);
      if (!Number.isFinite(c)) errs.push(['backoff_coefficient', `must be a finite number, got ${show(v)}`]);
      else if (c < 1) errs.push(['backoff_coefficient', `must be >= 1.0, got ${show(v)}`]);
      else { f.coefficient = c; f.coefficientText = v.text; }
    }
  }
  if (fields.has('jitter')) {
    const v = fields.get('jitter');
    if (typeof v !== 'boolean') errs.push(['jitter', `must be a boolean, got ${typeName(v)}`]);
    else f.jitter = v;
  }
  if (fields.has('non_retryable_errors')) {
    const v = fields.get('non_retryable_errors');
    if (!Array.isArray(v)) {
      errs.push(['non_retryable_errors', `must be an array of strings, got ${typeName(v)}`]);
    } else {
      let ok = true;
      v.forEach((p, i) => {
        const why = patternProblem(p);
        if (why) { errs.push([`non_retryable_errors[${i}]`, why]); ok = false; }
      });
      if (ok) f.patterns = v;
    }
  }
  for (const [name, allowed, key] of [['on_exhaustion', ON_EXHAUSTION, 'onExhaustion'], ['backoff_strategy', STRATEGIES, 'strategy']]) {
    if (!fields.has(name)) continue;
    const v = fields.get(name);
    if (typeof v !== 'string' || !allowed.includes(v)) {
      errs.push([name, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${show(v)}`]);
    } else f[key] = v;
  }
  if (errs.length > 0) {
    throw new OJSError(POLICY_INVALID, 'retry policy invalid: ' + errs.map(([k, r]) => `${k}: ${r}`).join('; '));
  }
  return new Policy(f);
}

// parsePolicy parses policy JSON text; empty text or null is the default.
function parsePolicy(text) {
  if (text.trim() === '') return DEFAULT_POLICY;
  let v;
  try {
    v = parseJSON(text);
  } catch (e) {
    throw new OJSError(POLICY_INVALID, `retry policy invalid: not valid JSON: ${e.message}`);
  }
  return policyFromValue(v);
}

module.exports = {
  MAX_NS, POLICY_INVALID, PATTERN_INVALID, REQUEST_INVALID, BELOW_ONE, DEFAULT_POLICY,
  OJSError, Num, Obj, parseJSON, ratio, parseDuration, formatDuration, Matcher, Policy,
  policyFromValue, parsePolicy, typeName, show,
};
