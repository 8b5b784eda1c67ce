#!/usr/bin/env node
// Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
// engine of the OJS Playground (github.com/openjobspec/ojs-playground,
// ui/src/engine: retry.ts, duration.ts, constants.ts, validator.ts), for the
// scoreboard.
//
//     node ojs_playground.mjs DIR
//
// DIR holds the engine compiled to CommonJS (src/engine/*.js) next to the
// JSON schemas it imports (public/schema/*.json), with ajv, ajv-formats and
// yaml resolvable from there (BUILD.md says how; nothing here builds it).
// The adapter answers the ops the engine implements and adds no logic of
// its own beyond unit conversion (milliseconds to nanoseconds, rounded to
// the nearest):
//
//   parse_duration  parseDuration(value) (whole milliseconds: resolution 1 ms)
//   validate        validateJob({...DEFAULT_JOB, retry: policy}), the
//                   playground's validation of a job's retry policy (its
//                   JSON Schema, by ajv); a job with errors is a rejection
//                   naming each error's path; a valid one answers
//                   mergeRetryPolicy(policy), as it returns it
//   delay           computeRetrySchedule(policy, 'exponential', [1..attempt],
//                   seed)[attempt - 1].finalDelay, the engine's only delay
//                   that caps and jitters. Its jitter draws from a PRNG
//                   seeded by the caller, not from an injectable draw, so
//                   jitter is opaque and each request gets a fresh random
//                   seed. The schedule stops at max_attempts − 1 retries:
//                   a later attempt has no delay there and is answered
//                   unsupported (the engine does not answer it).
//
// It has no pattern matching of non_retryable_errors and no retry decision.

import { attemptOf, badRequest, invalid, loadFrom, nsOfMs, policyArg, serve } from './protocol_lines.mjs';

if (process.argv.length !== 3) {
  process.stderr.write('usage: node ojs_playground.mjs DIR (the compiled ui/src/engine, src/engine/*.js)\n');
  process.exit(2);
}
const dir = process.argv[2];
const retry = loadFrom(dir, 'src/engine/retry.js');
const duration = loadFrom(dir, 'src/engine/duration.js');
const constants = loadFrom(dir, 'src/engine/constants.js');
const validator = loadFrom(dir, 'src/engine/validator.js');

// The longest schedule the adapter asks for: the vectors' attempts stay
// far below it, and a longer one would take the engine's loop minutes.
const MAX_SCHEDULE = 1 << 20;

// validate hands the validator any policy value (its schema judges the
// type); delay passes it through policyArg, as the engine's type admits
// only an object or undefined.

serve((req) => {
  switch (req.op) {
    case 'hello':
      return {
        protocol: 1, implementation: 'ojs-playground', version: '0.1.0',
        ops: ['parse_duration', 'validate', 'delay'], resolution_ns: 1000000, jitter: 'opaque',
        // retrykit's backoff_strategy extension is not the playground's
        unclaimed_flags: ['extension:backoff_strategy'],
      };
    case 'parse_duration':
      if (typeof req.value !== 'string') return invalid('value is not a string');
      return { ns: nsOfMs(duration.parseDuration(req.value)) };
    case 'validate': {
      const policy = req.policy === null ? undefined : req.policy;
      const job = { ...constants.DEFAULT_JOB, retry: policy };
      if (policy === undefined) delete job.retry;
      const result = validator.validateJob(job);
      if (!result.valid) {
        return invalid(result.errors.map((e) => `${e.path}: ${e.message} ${JSON.stringify(e.params ?? {})}`).join('; '));
      }
      return { effective: retry.mergeRetryPolicy(policy) };
    }
    case 'delay': {
      if ('profile' in req) return badRequest('no profiles');
      const policy = policyArg(req);
      const attempt = attemptOf(req);
      if (attempt === null) return badRequest('attempt must be an integer >= 1');
      if (attempt > MAX_SCHEDULE) return { unsupported: true };
      const failed = Array.from({ length: attempt }, (_, i) => i + 1);
      const seed = Math.floor(Math.random() * 2 ** 32);
      const schedule = retry.computeRetrySchedule(policy, 'exponential', failed, seed);
      if (schedule.length < attempt) return { unsupported: true };
      return { delay_ns: nsOfMs(schedule[attempt - 1].finalDelay) };
    }
    default:
      return { unsupported: true };
  }
});
