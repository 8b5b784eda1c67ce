// Package retrybudget caps retries as a share of traffic, so that an outage
// does not multiply the load on what is already failing: a token bucket
// ([TokenBucket], as gRPC retry throttling and the AWS SDK's retry quota)
// and a ratio with a floor over a sliding window ([Ratio], as Finagle's
// RetryBudget and Linkerd's retryBudget). It is the retry_budget of the
// retry extensions (docs/extensions.md §2.3, §3.6).
//
// # Model
//
// A budget is shared by every job that retries against one dependency. It
// hears three things, each at an instant the caller gives:
//
//   - a job's first attempt ([Budget.DepositAt]);
//   - an attempt that succeeded ([Budget.SuccessAt]);
//   - a retry that the retry policy wants to schedule ([Budget.AllowAt]),
//     which the budget allows (and pays for) or refuses.
//
// What the caller does with a refused retry is the caller's rule (the
// extension ends the job with its on_exhaustion action); [Budget.NextAt]
// says when a retry would next be allowed if nothing else happened.
//
// A [TokenBucket] holds up to Capacity tokens and starts full. A retry is
// allowed while the bucket holds at least one token, and takes it; a success
// puts CreditPerSuccess back; RefillPerSecond adds tokens as time passes.
// Tokens never go below zero and never above Capacity. With Capacity 10,
// CreditPerSuccess 0.5 and no refill:
//
//	event            tokens after   allowed
//	(start)          10
//	10 retries       0              all 10
//	retry            0              no
//	2 successes      1
//	retry            0              yes
//
// A [Ratio] counts first attempts F and allowed retries R over a sliding
// window of ten slots of Window/10 each: the slot holding the present instant
// and the nine before it. A retry is allowed when
//
//	Ratio·F + MinPerSecond·Window/1s − R ≥ 1
//
// so that over any window the retries stay within Ratio of the first attempts
// plus the floor. With Ratio 0.1, MinPerSecond 0.5 and Window 10s (a floor of
// 5 retries per window): 100 first attempts at t=0 allow 10+5 = 15 retries;
// once they are spent, no retry is allowed until both the first attempts and
// the retries have left the window, and then the floor alone allows 5.
//
// Counts are held exactly, as integers in billionths of a token, so that
// ten credits of 0.1 are one token and an independent model in exact
// arithmetic makes the same decisions.
//
// # Time
//
// Time is explicit: nothing here reads a clock or starts a goroutine, so a
// simulation on a fake clock and a test replaying a trace get exact answers.
// An instant earlier than the latest one a budget has seen counts as that
// latest one (clocks step back; budgets do not refund).
//
// # Entry points
//
// [Parse] reads the JSON retry_budget object; [NewTokenBucket] and
// [NewRatio] validate a [TokenBucketSpec] or [RatioSpec] built in Go. Each
// budget is safe for concurrent use by many goroutines. A refused budget
// gives a *[FieldError] naming the JSON member, matching [ErrInvalidSpec]
// with errors.Is. The zero [TokenBucket] and zero [Ratio] are valid and
// refuse every retry.
//
// # Non-goals
//
// The package does not decide whether a failure is retryable, compute
// delays, count attempts per job or persist its state: a budget lives in
// the memory of one process, as gRPC's throttle and Finagle's budget do.
package retrybudget
