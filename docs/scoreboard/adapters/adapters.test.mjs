// The scoreboard's Node adapters over stand-in libraries (node --test): what
// they add to a library's answer (unit conversion, the injected draw, the
// framing of decisions RK-380 and RK-381) and nothing else. The stand-ins
// export the names the real libraries export and answer fixed values, so each
// expectation below is worked out by hand from them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// talk runs ADAPTER over DIR with the request lines and returns its answers.
function talk(adapter, dir, lines) {
  const run = spawnSync(process.execPath, [path.join(here, adapter), dir], {
    input: lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l)) + '\n').join(''),
    encoding: 'utf8',
    timeout: 20000,
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

function standIn(files) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rk-adapter-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  writeFileSync(path.join(dir, 'package.json'), '{"type":"commonjs"}\n');
  return dir;
}

// A stand-in for the JS SDK's compiled src/retry.ts: a delay of
// 1000 ms · attempt · (0.5 + Math.random()), Infinity for {"inf": true}.
const jsSdk = standIn({
  'retry.js': `
exports.parseDurationToMs = (v) => { if (v === 'bad') throw new Error('Invalid ISO 8601 duration: bad'); return 0.9999996; };
exports.mergeWithDefaults = (p) => ({ given: p === undefined ? 'undefined' : p });
exports.computeBackoff = (n, merged) => merged.given.inf ? Infinity : 1000 * n * (0.5 + Math.random());
exports.isNonRetryable = (t, pats) => pats.includes(t);
`,
});

test('js sdk: the draw is the request rand, milliseconds become rounded nanoseconds', () => {
  const got = talk('ojs_js_sdk.mjs', jsSdk, [
    { id: 1, op: 'delay', attempt: 3, rand: 0.25 },
    { id: 2, op: 'delay', attempt: 1 },
    { id: 3, op: 'parse_duration', value: 'PT1S' },
  ]);
  assert.deepEqual(got[0], { id: 1, delay_ns: 2250000000 }); // 1000 · 3 · 0.75 ms
  // without rand the library's own Math.random draws: [500, 1500) ms
  assert.ok(got[1].delay_ns >= 500e6 && got[1].delay_ns < 1500e6, JSON.stringify(got[1]));
  assert.deepEqual(got[2], { id: 3, ns: 1000000 }); // 0.9999996 ms rounds (not truncates) to 1000000 ns
});

test('js sdk: null policy is the default, a non-object policy and a thrown error are policy errors', () => {
  const got = talk('ojs_js_sdk.mjs', jsSdk, [
    { id: 1, op: 'validate', policy: null },
    { id: 2, op: 'validate', policy: [] },
    { id: 3, op: 'parse_duration', value: 'bad' },
    { id: 4, op: 'delay', policy: 5, attempt: 0 },
    { id: 5, op: 'delay', attempt: 0 },
  ]);
  assert.deepEqual(got[0], { id: 1, effective: { given: 'undefined' } });
  assert.equal(got[1].error.type, 'validation.retry_policy_invalid');
  assert.deepEqual(got[2].error, { type: 'validation.retry_policy_invalid', message: 'Invalid ISO 8601 duration: bad' });
  assert.equal(got[3].error.type, 'validation.retry_policy_invalid'); // the policy is checked first
  assert.equal(got[4].error.type, 'validation.invalid_request');
});

test('js sdk: a non-finite answer is an error, never JSON null; an unreadable line gets id 0', () => {
  const got = talk('ojs_js_sdk.mjs', jsSdk, [
    { id: 1, op: 'delay', policy: { inf: true }, attempt: 1 },
    'not json',
    { id: 2, op: 'match', patterns: ['a.b'], error_type: 'a.b' },
    { id: 3, op: 'decide', attempt: 1 },
  ]);
  assert.equal(got[0].error.type, 'adapter.unencodable');
  assert.deepEqual(got[1], { id: 0, error: { type: 'validation.invalid_request', message: 'not a JSON object' } });
  assert.deepEqual(got[2], { id: 2, match: true });
  assert.deepEqual(got[3], { id: 3, unsupported: true });
});

// A stand-in for the playground's compiled ui/src/engine: a schedule of
// 1000 ms · n per retry that stops after two retries; a validator that
// refuses {"bad": 1}.
const playground = standIn({
  'src/engine/retry.js': `
exports.mergeRetryPolicy = (p) => ({ given: p === undefined ? 'undefined' : p });
exports.computeRetrySchedule = (p, strategy, failed, seed) =>
  failed.slice(0, 2).map((n) => ({ retryNumber: n, finalDelay: strategy === 'exponential' && Number.isInteger(seed) ? 1000 * n : -1 }));
`,
  'src/engine/duration.js': 'exports.parseDuration = () => 1500;\n',
  'src/engine/constants.js': 'exports.DEFAULT_JOB = { type: "email.send", retry: { max_attempts: 3 } };\n',
  'src/engine/validator.js': `
exports.validateJob = (job) => job.retry && job.retry.bad
  ? { valid: false, errors: [{ path: '/retry', message: 'must NOT have additional properties', params: { additionalProperty: 'bad' } }] }
  : { valid: !('retry' in job) || typeof job.retry === 'object', errors: [] };
`,
});

test('playground: the schedule answers the delays it has, a later attempt is unsupported', () => {
  const got = talk('ojs_playground.mjs', playground, [
    { id: 1, op: 'hello' },
    { id: 2, op: 'delay', attempt: 2 },
    { id: 3, op: 'delay', attempt: 3 },
    { id: 4, op: 'parse_duration', value: 'PT1.5S' },
  ]);
  assert.equal(got[0].jitter, 'opaque');
  assert.equal(got[0].resolution_ns, 1000000);
  assert.deepEqual(got[1], { id: 2, delay_ns: 2000000000 });
  assert.deepEqual(got[2], { id: 3, unsupported: true });
  assert.deepEqual(got[3], { id: 4, ns: 1500000000 });
});

test('playground: validate is the validator on the default job, then the merge', () => {
  const got = talk('ojs_playground.mjs', playground, [
    { id: 1, op: 'validate', policy: { bad: 1 } },
    { id: 2, op: 'validate' },
    { id: 3, op: 'validate', policy: { max_attempts: 5 } },
  ]);
  assert.equal(got[0].error.type, 'validation.retry_policy_invalid');
  assert.match(got[0].error.message, /\/retry: must NOT have additional properties .*"bad"/);
  assert.deepEqual(got[1], { id: 2, effective: { given: 'undefined' } });
  assert.deepEqual(got[2], { id: 3, effective: { given: { max_attempts: 5 } } });
});
