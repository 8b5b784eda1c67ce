// Drive p-retry's, exponential-backoff's and Bee-Queue's real retry code for retrykit's verify module.
//
// Reads one JSON request on stdin:
//   {"system": "p-retry" | "exponential-backoff" | "bee-queue", "config": {...},
//    "cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "runs"}]}
// and writes {"system", "version", "file", "results"} on stdout.
//
// RETRYLIBS_DIR, when set, is the directory whose node_modules holds the
// package (the drift watch installs another release there with npm install
// --prefix); else the packages npm ci installed beside this file.
//
// p-retry: pRetry runs a function that always throws, with the config as its
// options (retries, factor, minTimeout, maxTimeout, randomize). Math.random is
// replaced by a function returning R, setTimeout by one that fires at once
// (so no real wait is taken), and shouldConsumeRetry records each retry's
// retryDelay, the delay p-retry computed: "delay" answers the N-th one.
//
// bee-queue: a real Job (lib/job.js) on a stub queue holding the real
// strategies (lib/backoff.js), with .retries() and .backoff() from the config;
// computeDelay is called after each failure and options.retries decremented as
// Queue#_finishJob does on 'retrying': "delay" answers the N-th computeDelay,
// "runs" counts the runs until computeDelay gives -1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// root holds node_modules/<package>: the packages are resolved from there
// and nowhere else, so a release installed elsewhere is the one that runs.
const root = process.env.RETRYLIBS_DIR
  ? path.resolve(process.env.RETRYLIBS_DIR)
  : path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(root, 'package.json'));

function packageDir(pkg) {
  const dir = path.join(root, 'node_modules', pkg);
  if (!fs.existsSync(path.join(dir, 'package.json'))) {
    throw new Error(`retrylibs_driver: ${pkg} is not installed in ${root}/node_modules`);
  }
  return dir;
}

async function pRetryWaits(cfg, n, r) {
  const { default: pRetry } = await import(pathToFileURL(require.resolve('p-retry')).href);
  if (typeof pRetry !== 'function') throw new Error('retrylibs_driver: this p-retry has no default export pRetry');
  const waits = [];
  let runs = 0;
  const savedRandom = Math.random;
  const savedTimeout = globalThis.setTimeout;
  // V8's Math.random() is at most 1 - 2**-52: a larger injected draw stands
  // for that largest one.
  Math.random = () => Math.min(r, 1 - 2 ** -52);
  globalThis.setTimeout = (fn) => { queueMicrotask(fn); return { unref() {} }; };
  const retries = cfg.retries === null ? Infinity : (cfg.retries ?? 10);
  try {
    await pRetry(() => { runs++; throw new Error('retrykit verify'); }, {
      ...cfg,
      retries: Math.min(retries, n),
      shouldConsumeRetry: (ctx) => { if (ctx.retriesLeft > 0) waits.push(ctx.retryDelay); return true; },
    });
  } catch {
    // exhausted
  } finally {
    Math.random = savedRandom;
    globalThis.setTimeout = savedTimeout;
  }
  // A release whose shouldConsumeRetry is missing (before 7.0.0) or gets no
  // retryDelay (7.x): its delays cannot be read this way, and a null delay
  // would hide why.
  if (runs > 1 && waits.length === 0) {
    throw new Error('retrylibs_driver: this p-retry retried without calling shouldConsumeRetry');
  }
  if (waits.some((w) => typeof w !== 'number')) {
    throw new Error('retrylibs_driver: this p-retry gives shouldConsumeRetry no retryDelay');
  }
  return { waits, runs };
}

// exponential-backoff: backOff runs an always-failing function with the
// config as its options; setTimeout records each wait and fires at once,
// Math.random returns the draw (held at V8's largest, 1 - 2**-52).
async function expBackoffWaits(cfg, n, r) {
  const { backOff } = require('exponential-backoff');
  const waits = [];
  let runs = 0;
  const savedRandom = Math.random;
  const savedTimeout = globalThis.setTimeout;
  Math.random = () => Math.min(r, 1 - 2 ** -52);
  globalThis.setTimeout = (fn, ms) => { waits.push(ms); queueMicrotask(fn); return { unref() {} }; };
  const opts = { ...cfg };
  if (n !== null) opts.numOfAttempts = n + 1;
  try {
    await backOff(() => { runs++; throw new Error('retrykit verify'); }, opts);
  } catch {
    // exhausted
  } finally {
    Math.random = savedRandom;
    globalThis.setTimeout = savedTimeout;
  }
  // With delayFirstAttempt the first wait comes before the first attempt.
  return { waits: cfg.delayFirstAttempt ? waits.slice(1) : waits, runs };
}

function beeQueueRun(cfg, n) {
  const Job = require('bee-queue/lib/job.js');
  const strategies = require('bee-queue/lib/backoff.js');
  const queue = { backoffStrategies: strategies, settings: {}, name: 'retrykit-verify' };
  const job = new Job(queue, null, {}, {});
  if (typeof job.computeDelay !== 'function') {
    // Before 1.7.0 Queue#_finishJob computed the delay inline.
    throw new Error('retrylibs_driver: this bee-queue has no Job#computeDelay');
  }
  if (cfg.retries) job.retries(cfg.retries);
  if (cfg.strategy) job.backoff(cfg.strategy, cfg.delay);
  const delays = [];
  let runs = 1;
  for (;;) {
    const d = job.computeDelay();
    if (d < 0 || runs > n) break;
    delays.push(d);
    job.options.retries -= 1; // Queue#_finishJob, status 'retrying'
    runs++;
  }
  return { delays, runs };
}

const request = JSON.parse(fs.readFileSync(0, 'utf8'));
const dir = packageDir(request.system);
const cfg = request.config ?? {};
const results = [];
for (const c of request.cases) {
  if (request.system === 'p-retry') {
    if (c.op === 'delay') {
      const { waits } = await pRetryWaits(cfg, c.attempt, c.rand);
      results.push({ delay_ms: waits[c.attempt - 1] ?? null });
    } else {
      const { runs } = await pRetryWaits(cfg, 1000, 0.5);
      results.push({ runs });
    }
  } else if (request.system === 'exponential-backoff') {
    if (c.op === 'delay') {
      const { waits } = await expBackoffWaits(cfg, c.attempt, c.rand);
      results.push({ delay_ms: waits[c.attempt - 1] ?? null });
    } else {
      results.push({ runs: (await expBackoffWaits(cfg, null, 0.5)).runs });
    }
  } else if (request.system === 'bee-queue') {
    if (c.op === 'delay') {
      const { delays } = beeQueueRun({ ...cfg, retries: cfg.retries ?? c.attempt }, c.attempt);
      results.push({ delay_ms: delays[c.attempt - 1] ?? null });
    } else {
      results.push({ runs: beeQueueRun(cfg, 1000).runs });
    }
  } else {
    throw new Error('retrylibs_driver: unknown system ' + request.system);
  }
}
const version = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
process.stdout.write(JSON.stringify({ system: request.system, version, file: dir, results }));
