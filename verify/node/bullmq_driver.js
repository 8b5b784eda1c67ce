// Drive BullMQ's real backoff and retry decision for retrykit's verify module.
//
// Reads one JSON request on stdin:
//   {"cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "decision", "attempt": N}, ...]}
// and writes one JSON answer on stdout:
//   {"system": "bullmq", "version": "...", "file": "...", "results": [...]}
//
// The job options are the profile's: {attempts: 3, backoff: {type:
// 'exponential', delay: 1000}} (BullMQ's documented example; jitter left at
// its default), unless the request carries "opts" (a configured profile's
// job options, e.g. {"attempts": 5, "backoff": {"type": "fixed", "delay":
// 3000, "jitter": 0.5}}).
//
// BULLMQ_DIR, when set, is the bullmq package directory to load (the drift
// watch installs the newest release there); else the one npm ci installed.
//
// "delay" calls Backoffs.calculate with attemptsMade + 1 = N, as
// Job#shouldRetryJob does after attempt N failed. Math.random is replaced by a
// function returning R (and counting its calls), so any draw is injected.
//
// "decision" builds a Job on a stub queue (no Redis is contacted), sets
// attemptsMade = N - 1 (the attempts made before this failure) and asks
// Job#shouldRetryJob whether BullMQ would retry after this error.
'use strict';

const path = require('path');
const fs = require('fs');

const pkgDir = process.env.BULLMQ_DIR || path.dirname(require.resolve('bullmq/package.json'));
const { Backoffs } = require(path.join(pkgDir, 'dist/cjs/classes/backoffs.js'));
const { Job } = require(path.join(pkgDir, 'dist/cjs/classes/job.js'));

let JOB_OPTS = { attempts: 3, backoff: { type: 'exponential', delay: 1000 } };

function withRandom(r, fn) {
  const saved = Math.random;
  let calls = 0;
  Math.random = () => {
    calls++;
    // V8's Math.random() is at most 1 - 2**-52: a larger injected draw
    // stands for that largest one.
    return Math.min(r, 1 - 2 ** -52);
  };
  try {
    return [fn(), calls];
  } finally {
    Math.random = saved;
  }
}

function stubQueue() {
  return {
    opts: {},
    name: 'retrykit-verify',
    qualifiedName: 'bull:retrykit-verify',
    keys: {},
    toKey: (type) => 'bull:retrykit-verify:' + type,
    client: new Promise(() => {}),
  };
}

function delay(attempt, r) {
  const backoff = Backoffs.normalize(JOB_OPTS.backoff);
  const [ms, calls] = withRandom(r, () =>
    Backoffs.calculate(backoff, attempt, new Error('retrykit verify'), null, undefined),
  );
  return { delay_ms: ms, random_calls: calls };
}

async function decision(attempt) {
  const job = new Job(stubQueue(), 'retrykit-verify', {}, JOB_OPTS);
  job.attemptsMade = attempt - 1;
  job.attemptsStarted = attempt;
  const [retry, ms] = await job.shouldRetryJob(new Error('retrykit verify'));
  return { retry, delay_ms: ms };
}

async function main() {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  if (request.opts) {
    JOB_OPTS = request.opts;
  }
  const results = [];
  for (const c of request.cases) {
    if (c.op === 'delay') {
      results.push(delay(c.attempt, c.rand));
    } else if (c.op === 'decision') {
      results.push(await decision(c.attempt));
    } else {
      throw new Error('bullmq_driver: unknown op ' + JSON.stringify(c.op));
    }
  }
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  process.stdout.write(
    JSON.stringify({
      system: 'bullmq',
      version,
      file: path.join(pkgDir, 'dist/cjs/classes/backoffs.js'),
      results,
    }),
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
    process.exit(1);
  },
);
