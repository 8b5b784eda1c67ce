#!/usr/bin/env node
// Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
// helpers of the official OJS JavaScript/TypeScript SDK
// (github.com/openjobspec/ojs-js-sdk, src/retry.ts), for the scoreboard.
//
//     node ojs_js_sdk.mjs DIR
//
// DIR holds src/retry.ts compiled to CommonJS as retry.js (BUILD.md says
// how; nothing here builds it). The file needs nothing beyond the language.
// The adapter answers the ops the file implements and adds no logic of its
// own beyond unit conversion (milliseconds to nanoseconds, rounded to the
// nearest) and the injected draw:
//
//   parse_duration  parseDurationToMs(value)
//   validate        mergeWithDefaults(policy), as it returns it: the SDK
//                   validates nothing
//   delay           computeBackoff(attempt, mergeWithDefaults(policy)) with
//                   its default strategy (exponential); the SDK's jitter
//                   multiplier 0.5 + Math.random() drawn as 0.5 + rand
//                   (jitter injectable)
//   match           isNonRetryable(error_type, patterns)

import { attemptOf, badRequest, invalid, loadFrom, nsOfMs, policyArg, serve } from './protocol_lines.mjs';

if (process.argv.length !== 3) {
  process.stderr.write('usage: node ojs_js_sdk.mjs DIR (the compiled src/retry.ts, retry.js)\n');
  process.exit(2);
}
const sdk = loadFrom(process.argv[2], 'retry.js');

// The SDK draws with Math.random(); a request's rand stands in for it.
const ownRandom = Math.random;
let draw = null;
Math.random = () => (draw === null ? ownRandom() : draw);

serve((req) => {
  switch (req.op) {
    case 'hello':
      return {
        protocol: 1, implementation: 'ojs-js-sdk', version: '0.4.0',
        ops: ['parse_duration', 'validate', 'delay', 'match'], resolution_ns: 1, jitter: 'injectable',
        // retrykit's backoff_strategy extension is not the SDK's
        unclaimed_flags: ['extension:backoff_strategy'],
      };
    case 'parse_duration':
      if (typeof req.value !== 'string') return invalid('value is not a string');
      return { ns: nsOfMs(sdk.parseDurationToMs(req.value)) };
    case 'validate':
      return { effective: sdk.mergeWithDefaults(policyArg(req)) };
    case 'delay': {
      if ('profile' in req) return badRequest('no profiles');
      const given = policyArg(req);
      const attempt = attemptOf(req);
      if (attempt === null) return badRequest('attempt must be an integer >= 1');
      const policy = sdk.mergeWithDefaults(given);
      draw = typeof req.rand === 'number' ? req.rand : null;
      try {
        return { delay_ns: nsOfMs(sdk.computeBackoff(attempt, policy)) };
      } finally {
        draw = null;
      }
    }
    case 'match':
      if (!Array.isArray(req.patterns) || !req.patterns.every((p) => typeof p === 'string') ||
          typeof req.error_type !== 'string') {
        return badRequest('patterns (strings) and error_type (a string)');
      }
      return { match: sdk.isNonRetryable(req.error_type, req.patterns) };
    default:
      return { unsupported: true };
  }
});
