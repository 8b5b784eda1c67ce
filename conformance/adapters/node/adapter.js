#!/usr/bin/env node
'use strict';
// Conformance adapter (protocol v1) for the ojs_retry.js library, standard
// library only.
//
// Reads one JSON request per line on stdin and writes one JSON answer per
// line on stdout. See README.md and ../../PROTOCOL.md (section 2.1 for the
// JSON traps this file avoids). To adapt it to another JavaScript library,
// replace the bodies of the op functions; keep the framing (strict request
// parsing, id echo, error answers, never crashing).

const readline = require('node:readline');
const lib = require('./ojs_retry.js');

const { Num, Obj, OJSError, POLICY_INVALID, REQUEST_INVALID } = lib;

let IMPLEMENTATION = 'ojs-retry-node';
const VERSION = '0.1.0';
const OPS = ['parse_duration', 'validate', 'delay', 'match', 'decide'];
const MAX_NS = lib.MAX_NS;

const bad = (msg) => new OJSError(REQUEST_INVALID, msg);

// attemptOf reads `attempt`: an integer written as such, exact to 64 bits;
// larger values saturate (PROTOCOL.md 3.4).
function attemptOf(req) {
  const v = req.get('attempt');
  if (!(v instanceof Num) || !/^-?[0-9]+$/.test(v.text)) throw bad(`attempt must be an integer, got ${lib.show(v)}`);
  let n = BigInt(v.text);
  if (n > MAX_NS) n = MAX_NS;
  if (n < 1n) throw bad(`attempt must be at least 1, got ${v.text}`);
  return n;
}

// randOf reads `rand` as an exact ratio clamped into [0, 1), or null.
function randOf(req) {
  const v = req.get('rand');
  if (v === undefined || v === null) return null;
  if (!(v instanceof Num)) throw bad(`rand must be a number, got ${lib.typeName(v)}`);
  const r = lib.ratio(v.text);
  if (r.num <= 0n || r.tiny) return { num: 0n, den: 1n };
  if (r.huge || r.num >= r.den) return lib.BELOW_ONE;
  return { num: r.num, den: r.den };
}

// ownDraw is a uniform draw from [0, 1) when the request has no rand.
function ownDraw() {
  const bits = (BigInt(Math.floor(Math.random() * 2 ** 26)) << 27n) | BigInt(Math.floor(Math.random() * 2 ** 27));
  return { num: bits, den: 1n << 53n };
}

function policyOf(req) {
  if (req.has('profile')) throw bad('profiles are not supported');
  return lib.policyFromValue(req.get('policy'));
}

const ops = {
  hello: () => ({
    protocol: 1, implementation: IMPLEMENTATION, version: VERSION, ops: OPS,
    resolution_ns: 1, jitter: 'injectable',
  }),
  parse_duration: (req) => ({ ns: lib.parseDuration(req.get('value')) }),
  validate: (req) => ({ effective: raw(policyOf(req).effective()) }),
  delay: (req) => {
    const p = policyOf(req);
    const n = attemptOf(req);
    return { delay_ns: p.delay(n, randOf(req) ?? ownDraw()) };
  },
  match: (req) => {
    const pats = req.get('patterns');
    if (!Array.isArray(pats) || pats.some((p) => typeof p !== 'string')) throw bad('patterns must be an array of strings');
    const et = req.get('error_type');
    if (typeof et !== 'string') throw bad('error_type must be a string');
    return { match: new lib.Matcher(pats).match(et) };
  },
  decide: (req) => {
    const p = policyOf(req);
    const n = attemptOf(req);
    const err = req.get('error');
    let type = '';
    let code = null;
    if (err !== undefined && err !== null) {
      if (!(err instanceof Obj)) throw bad('error must be an object');
      const t = err.get('type');
      const c = err.get('code');
      if (t !== undefined && t !== null && typeof t !== 'string') throw bad('error.type must be a string');
      if (c !== undefined && c !== null && typeof c !== 'string') throw bad(`unknown handler code ${lib.show(c)}`);
      type = t ?? '';
      code = c ?? null;
    }
    const [action, delay] = p.decide(n, type, code, randOf(req) ?? ownDraw());
    return delay === null ? { action } : { action, delay_ns: delay };
  },
};

// Raw JSON text inside an answer (the effective policy).
class Raw {
  constructor(text) { this.text = text; }
}
const raw = (t) => new Raw(t);

// encode writes an answer: BigInts as integers, Raw verbatim.
function encode(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return '[' + v.map(encode).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + encode(x)).join(',') + '}';
  }
  return JSON.stringify(v);
}

function errorAnswer(id, type, message) {
  return { id, error: { type, message } };
}

// idOf echoes the request's id: an integer below 2^53 as a number.
function idOf(req) {
  const v = req.get('id');
  if (v instanceof Num && /^[0-9]{1,16}$/.test(v.text)) return BigInt(v.text);
  return 0n;
}

const ID_RE = /^\s*\{\s*"id"\s*:\s*([0-9]{1,16})\s*,\s*"op"\s*:\s*"([a-z_]{1,32})"/;

// handleLine answers one request line (null for a blank line).
function handleLine(line) {
  if (line.trim() === '') return null;
  let req;
  try {
    req = lib.parseJSON(line);
  } catch (e) {
    // The runner splices policies verbatim: when the line still starts
    // with an id and a policy op, the policy is what broke it.
    const m = ID_RE.exec(line);
    if (m === null) return errorAnswer(0n, REQUEST_INVALID, `request is not JSON: ${e.message}`);
    const type = ['validate', 'delay', 'decide'].includes(m[2]) ? POLICY_INVALID : REQUEST_INVALID;
    return errorAnswer(BigInt(m[1]), type, `request is not JSON: ${e.message}`);
  }
  if (!(req instanceof Obj)) return errorAnswer(0n, REQUEST_INVALID, 'request must be a JSON object');
  const id = idOf(req);
  const op = req.get('op');
  const fn = typeof op === 'string' && Object.hasOwn(ops, op) ? ops[op] : null;
  if (fn === null) return { id, unsupported: true };
  try {
    return { id, ...fn(req) };
  } catch (e) {
    if (e instanceof OJSError) return errorAnswer(id, e.type, e.message);
    return errorAnswer(id, REQUEST_INVALID, `internal error: ${e && e.message}`); // never crash
  }
}

function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  rl.on('line', (line) => {
    let out;
    try {
      const ans = handleLine(line);
      if (ans === null) return;
      out = encode(ans);
    } catch (e) {
      out = encode(errorAnswer(0n, REQUEST_INVALID, 'internal error'));
    }
    process.stdout.write(out + '\n');
  });
  rl.on('close', () => process.exitCode = 0);
  process.stdout.on('error', () => process.exit(0)); // the reader went away
}

module.exports = { handleLine, encode, ops, setImplementation: (n) => { IMPLEMENTATION = n; } };

if (require.main === module) main();
