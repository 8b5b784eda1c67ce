// The line framing of conformance/PROTOCOL.md (protocol 1) shared by the
// scoreboard's Node adapters (ojs_js_sdk.mjs, ojs_playground.mjs), standard
// library only. It holds no retry logic: each adapter's answer function
// calls the library it drives.
//
// Requests are read with JSON.parse, the reader the libraries themselves get
// their policies from (decisions RK-334: duplicate keys and integers above
// 2^53 are the library's to own). JSON.stringify would write an infinite or
// NaN number as null, a silent wrong value, so an answer holding one is sent
// as an adapter.unencodable error instead.

import readline from 'node:readline';
import { createRequire } from 'node:module';
import path from 'node:path';

/** invalid is the rejection of a policy or a duration. */
export function invalid(message) {
  return { error: { type: 'validation.retry_policy_invalid', message } };
}

/** badRequest is the rejection of a request the op cannot answer. */
export function badRequest(message) {
  return { error: { type: 'validation.invalid_request', message } };
}

/** loadFrom requires the compiled CommonJS file `file` from directory `dir`. */
export function loadFrom(dir, file) {
  return createRequire(import.meta.url)(path.resolve(dir, file));
}

/** nsOfMs converts milliseconds to nanoseconds, rounded to the nearest. */
export function nsOfMs(ms) {
  return Math.round(ms * 1e6);
}

/**
 * policyArg is the request's policy as a TypeScript caller can pass it:
 * absent or null is the default policy (RK-09), undefined to the library;
 * a value that is not an object is refused (the library's parameter type,
 * a partial RetryPolicy, does not admit it).
 */
export function policyArg(req) {
  const p = req.policy;
  if (p === undefined || p === null) return undefined;
  if (typeof p !== 'object' || Array.isArray(p)) throw new TypeError('policy is not an object');
  return p;
}

/** attemptOf reads `attempt`: a whole number >= 1, or null. */
export function attemptOf(req) {
  const a = req.attempt;
  return Number.isInteger(a) && a >= 1 ? a : null;
}

function finiteOnly(_key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('non-finite');
  return value;
}

/**
 * serve answers every request line on standard input with answer(request),
 * which returns the answer's fields (its id is added here); an exception
 * thrown by answer is the library's rejection of the policy.
 */
export function serve(answer) {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    let req;
    try {
      req = JSON.parse(line);
    } catch {
      req = undefined;
    }
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      process.stdout.write(JSON.stringify({ id: 0, ...badRequest('not a JSON object') }) + '\n');
      return;
    }
    let out;
    try {
      out = answer(req);
    } catch (e) {
      out = invalid(e instanceof Error ? e.message : String(e));
    }
    let text;
    try {
      text = JSON.stringify({ id: req.id, ...out }, finiteOnly);
    } catch {
      text = JSON.stringify({
        id: req.id,
        error: { type: 'adapter.unencodable', message: "the library's answer holds a non-finite number" },
      });
    }
    process.stdout.write(text + '\n');
  });
}
