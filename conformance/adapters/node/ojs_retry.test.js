'use strict';
// Unit tests: expectations taken by hand from the spec's tables and the RK
// decisions. Run with: node --test conformance/adapters/node/
const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('./ojs_retry.js');
const { handleLine, encode } = require('./adapter.js');

const S = 1_000_000_000n;
const half = { num: 1n, den: 2n };
const answer = (line) => JSON.parse(encode(handleLine(line)));

test('durations (section 4, RK-03, RK-07, RK-11, RK-12)', () => {
  assert.equal(lib.parseDuration('PT0.5S'), S / 2n);
  assert.equal(lib.parseDuration('PT1H30M'), 5400n * S);
  assert.equal(lib.parseDuration('P1D'), 86400n * S);
  assert.equal(lib.parseDuration('P1M'), 730n * 3600n * S); // RK-07
  assert.equal(lib.parseDuration('PT0.0000000005S'), 1n); // half up
  assert.equal(lib.parseDuration('PT2562047H47M16.854775807S'), lib.MAX_NS);
  for (const bad of ['P', 'PT', 'P1DT', '', 'P1W', 'pt1s', 'PT1,5S', 'PT1.5M', 'PT2562047H47M16.854775808S']) {
    assert.throws(() => lib.parseDuration(bad), { type: lib.POLICY_INVALID }, bad);
  }
  assert.equal(lib.formatDuration(S / 2n), 'PT0.5S');
  assert.equal(lib.formatDuration(0n), 'PT0S');
});

test('strict JSON keeps duplicates and number text', () => {
  const v = lib.parseJSON('{"a":1,"a":9223372036854775807,"b":3.0}');
  assert.equal(v.pairs.length, 3);
  assert.equal(v.get('a').text, '9223372036854775807');
  assert.equal(v.get('b').text, '3.0');
  assert.throws(() => lib.parseJSON('{"a":1,}'));
  assert.throws(() => lib.parseJSON('[1] x'));
});

test('policy validation (sections 2, 8, 11; RK-02, RK-08, RK-10, RK-14)', () => {
  const ok = (t) => lib.parsePolicy(t);
  const bad = (t, field) => assert.throws(() => lib.parsePolicy(t), (e) => e.type === lib.POLICY_INVALID && e.message.includes(field), t);
  assert.equal(ok('{"max_attempts":3.0}').maxAttempts, 3n);
  assert.equal(ok('{"max_attempts":3e0}').maxAttempts, 3n);
  assert.equal(ok('{"max_attempts":9223372036854775807}').maxAttempts, lib.MAX_NS);
  bad('{"max_attempts":9223372036854775808}', 'max_attempts');
  bad('{"max_attempts":2.5}', 'max_attempts');
  bad('{"max_attempts":-1}', 'max_attempts');
  bad('{"max_attempts":3,"max_attempts":3}', 'max_attempts');
  bad('{"backoff_coefficient":1e400}', 'backoff_coefficient');
  bad('{"backoff_coefficient":0.5}', 'backoff_coefficient');
  bad('{"initial_interval":"PT0S"}', 'initial_interval');
  bad('{"initial_interval":"PT10M"}', 'max_interval'); // default max PT5M is below it
  bad('{"retries":3}', 'retries');
  bad('{"non_retryable_errors":[".*"]}', 'non_retryable_errors[0]');
  bad('{"jitter":null}', 'jitter');
  assert.equal(ok('null'), lib.DEFAULT_POLICY);
  assert.equal(ok('{}').effective(), lib.DEFAULT_POLICY.effective());
});

test('delays (section 3 tables, RK-05, RK-16, RK-17)', () => {
  const p = lib.parsePolicy('{"jitter":false}');
  const want = [1n, 2n, 4n, 8n, 16n, 32n, 64n, 128n, 256n, 300n, 300n];
  want.forEach((w, k) => assert.equal(p.delay(BigInt(k + 1), half), w * S));
  assert.equal(p.delay(lib.MAX_NS, half), 300n * S);
  const lin = lib.parsePolicy('{"backoff_strategy":"linear","initial_interval":"PT10S","max_interval":"PT1H","jitter":false}');
  assert.equal(lin.delay(3n, half), 30n * S);
  const poly = lib.parsePolicy('{"backoff_strategy":"polynomial","initial_interval":"PT1S","backoff_coefficient":2,"max_interval":"PT1H","jitter":false}');
  assert.equal(poly.delay(3n, half), 9n * S);
  const j = lib.parsePolicy('{"initial_interval":"PT10S"}');
  assert.equal(j.delay(3n, { num: 1n, den: 4n }), 30n * S); // 40s · 0.75
  assert.equal(j.delay(10n, lib.BELOW_ONE), 300n * S); // capped after jitter
});

test('matching and decisions (sections 6.2, 7.2; RK-13, RK-15)', () => {
  const m = new lib.Matcher(['auth.*', 'io.timeout']);
  assert.equal(m.match('auth.x'), true);
  assert.equal(m.match('auth'), false);
  assert.equal(m.match('authx'), false);
  assert.equal(m.match('io.timeout'), true);
  assert.throws(() => new lib.Matcher(['']), { type: lib.PATTERN_INVALID });
  const p = lib.parsePolicy('{"max_attempts":3,"jitter":false,"non_retryable_errors":["auth.*"],"on_exhaustion":"dead_letter"}');
  assert.deepEqual(p.decide(1n, 'io.x', null, half), ['retry', S]);
  assert.deepEqual(p.decide(3n, 'io.x', null, half), ['dead_letter', null]);
  assert.deepEqual(p.decide(1n, 'auth.x', 'RETRY', half), ['dead_letter', null]);
  assert.deepEqual(p.decide(1n, 'io.x', 'FAIL', half), ['discard', null]);
  assert.throws(() => p.decide(1n, 'io.x', 'NOPE', half), { type: lib.REQUEST_INVALID });
});

test('adapter framing', () => {
  assert.deepEqual(answer('{"id":2,"op":"delay","policy":{"initial_interval":"PT10S"},"attempt":3,"rand":0.25}'), { id: 2, delay_ns: 30000000000 });
  assert.equal(encode(handleLine('{"id":3,"op":"delay","policy":{},"attempt":9223372036854775807,"rand":0.5}')), '{"id":3,"delay_ns":300000000000}');
  assert.equal(answer('{"id":4,"op":"validate","policy":{"max_attempts":3,"max_attempts":4}}').error.type, lib.POLICY_INVALID);
  assert.equal(answer('{"id":5,"op":"delay","policy":{},"attempt":0}').error.type, lib.REQUEST_INVALID);
  assert.deepEqual(answer('{"id":6,"op":"scenario"}'), { id: 6, unsupported: true });
  assert.equal(answer('{"id":7,"op":"validate","policy":{"a":}').id, 7);
  assert.equal(answer('{"id":8,"op":"delay","policy":{},"profile":"asynq","attempt":1}').error.type, lib.REQUEST_INVALID);
  assert.equal(answer('{"id":9,"op":"match","patterns":[1],"error_type":"a"}').error.type, lib.REQUEST_INVALID);
  assert.equal(answer('not json').id, 0);
});
