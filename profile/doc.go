// Package profile reproduces other systems' retry behaviour: named
// profiles of job queues, cloud SDKs, RPC frameworks and the generic
// jitter schemes, each computed exactly as that system's source computes
// it, under the system's own defaults or configured with its own settings,
// for the release it names.
//
// # Model
//
// A profile is a delay function of the same shape as
// [github.com/retrykit/retrykit/backoff.Backoff]: the delay after attempt n,
// the 1-based number of the attempt that just failed, and — only where the
// system jitters — random draws r in [0, 1) taken from a
// [backoff.Source]. Each profile documents, in [Profile.Formula] and its
// page under docs/profiles:
//
//  1. the number the system passes to its formula for attempt n (a retry
//     count n-1 for asynq, Faktory, gRPC; n itself for River, Oban, AWS);
//  2. the formula, with its defaults written in;
//  3. the draw mapping ([Profile.Draw]): integer jitter rand(k) is
//     floor(r*k); a uniform float in [a, b) is a + r*(b-a);
//  4. what counts as exhaustion ([Profile.MaxAttempts] total attempts,
//     first run included; 0 when unbounded) and the terminal outcome
//     ([Profile.Terminal], [Profile.OnExhaustion]).
//
// Arithmetic saturates: for every n from 1 to math.MaxInt the delay is
// between 0 and the largest time.Duration, never negative, never a panic.
// Where a system's own arithmetic would overflow (asynq's int seconds,
// River's float-to-Duration conversion), the profile saturates instead.
//
// Every delay is non-decreasing in each draw, so [Profile.Bounds] — the
// delays at r = 0 and at the largest float64 below 1 — are exact, inclusive
// and both reached.
//
// Stateful schemes are followed through [Profile.Schedule] or [Profile.Run]:
// decorrelated jitter draws each delay between the base and three times the
// previous delay. For them [Profile.DelayAt](n, r) is the n-th delay of the
// schedule whose draws are all r. gax-go's Backoff keeps state too, but its
// envelope does not depend on the draws, so its delay is a function of n.
//
// Worked example, asynq (n = attempt-1, delay n^4 + 15 + rand(30)*(n+1) s):
//
//	attempt   n   r=0    r→1 (rand(30)=29)
//	1         0   15s    44s
//	2         1   16s    74s
//	3         2   31s    118s
//	26        25  —      exhausted: archived
//
// # Entry points
//
// [Parse] (or [Lookup], the same) finds a profile by name, an older
// release as NAME@VERSION ([Versions] lists them: aws_go@1.47.7 keeps the
// AWS SDK for Go's legacy backoff), and a configured one as
// NAME:key=value,... in the system's own setting names
// ("bullmq:type=exponential,delay=3000,attempts=5",
// "temporal:initial_interval=2s,backoff_coefficient=3");
// [Profile.Settings] lists the keys with their defaults. Where a delay
// depends on the class of error (aws_go: throttling errors back off from
// 1s, others from 50ms) or on a retry-after hint, [Profile.WithClass] and
// [Profile.WithRetryAfter] give the profile for such failures. [Names] and
// [All] list the plain profiles. A
// [Profile] gives [Profile.Delay] (drawing from a Source), the pure
// [Profile.DelayAt], [Profile.Bounds], [Profile.Schedule], and
// [Profile.Decide] / [Profile.DecideAt], which answer like
// [github.com/retrykit/retrykit/policy.Policy.Decide]: retry after a delay,
// or the profile's exhaustion action.
//
// The vectors in testdata/profiles, worked out by hand from each system's
// source, are checked against this package; the nested module verify/ runs
// them through the real implementations where they can be installed.
//
// # Non-goals
//
// Settings cover what changes a system's timing or exhaustion, not custom
// backoff functions (asynq's RetryDelayFunc, Sidekiq's sidekiq_retry_in,
// BullMQ custom strategies). Server push-back other than aws_go's
// x-amz-retry-after (gRPC retry pushback, River snoozes), retry quotas
// and deadlines are not modelled as delays; [Profile.Supports] says which
// of the five retry features of docs/extensions.md (per-error rules,
// requested delays, snoozes, jitter modes, retry budgets) each system
// has, and through which of its mechanisms. The package
// keeps no global mutable state and draws only from the Source it is given.
package profile
