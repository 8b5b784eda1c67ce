package live

// Check is one requirement the checker judges on a live server: a row of
// the report. It is plain data; [Checks] returns copies.
type Check struct {
	ID          string
	Requirement string // RET-nn, DLQ-nnn, or RK-nn for a reading of a contradiction
	Section     string // of the retry spec (or the dead-letter spec for DLQ-nnn)
	Description string
	Flags       []string // "class:…" names the failure class; "should:…" a SHOULD-level feature
}

// SuiteVersion is the version of the live checker's suite, the
// suite_version of every report Run returns: two reports of the same
// version judged the same checks, each mapped to the same requirement,
// section and level, so their scores can be compared; reports of
// different versions are never scored together (the scoreboard gives each
// version its own table and history).
//
// It changes whenever the list of checks does: a check added, removed, or
// given another requirement, section, level or flags. The list of each
// version is kept in testdata/suite/VERSION.txt, and a test fails when
// [Checks] no longer matches the list of SuiteVersion. A check that keeps
// its row but judges differently (a new threshold, a stricter reading)
// raises the version by hand: the new list is the old one with a first
// line "# why", which the comparison skips. "live-1" named every checker before the
// version was pinned and so tells nothing about the checks behind it.
const SuiteVersion = "live-3"

// The checks, in report order. Each scenario below adds verdicts to some
// of them.
var checks = []Check{
	{"http-attempts", "RET-01", "2.2", "max_attempts is the exact number of deliveries; each FAIL answer carries the attempt that failed and max_attempts", []string{"class:attempt-count"}},
	{"http-attempt-absolute", "RET-01", "1", "attempts are 1-based everywhere: the first FETCH shows attempt 1, each redelivery one more, INFO after n failures shows n, error history entries 1..n (\"the first execution is attempt 1\")", []string{"class:attempt-number"}},
	{"http-next-attempt-at", "RET-14", "10", "a retryable FAIL answer's next_attempt_at is the failure time plus the policy's delay (exponential, no jitter), on the server's clock", []string{"class:wrong-delay"}},
	{"http-cap", "RET-04", "3.5", "a delay whose formula exceeds max_interval is capped at max_interval", []string{"class:wrong-delay"}},
	{"http-cap-before-jitter", "RET-04", "5.3", "with jitter, the formula's delay is capped before the multiplier too: a raw delay of twice max_interval gives delays in [max/2, max], not always max", []string{"class:pre-jitter-cap"}},
	{"http-coefficient-fraction", "RET-04", "3.3", "a fractional backoff_coefficient is applied as given: PT0.2S with 1.5 gives 200ms, 300ms, 450ms (jitter off), as the spec's own 1.5 example; a coefficient read as an integer (1 or 2) fails", []string{"class:wrong-delay"}},
	{"http-max-attempts-one", "RET-01", "2.2", "max_attempts 1 (and 0, which the spec also makes terminal) ends the job at its first failure", []string{"class:attempt-count"}},
	{"http-partial-policy", "RET-10", "8.1", "a partial policy ({max_attempts: 2}) is merged with the defaults: first delay in [0.5s, 1.5s), attempt 2 ends the job", []string{"class:default-merge"}},
	{"http-partial-max-attempts", "RET-10", "8.1", "a policy without max_attempts gets 3: the first FAIL answers retryable, max_attempts 3", []string{"class:default-merge"}},
	{"http-partial-initial-interval", "RET-10", "8.1", "a policy without initial_interval gets PT1S: the first delay is exactly 1s (jitter off)", []string{"class:default-merge"}},
	{"http-partial-coefficient", "RET-10", "8.1", "a policy without backoff_coefficient gets 2.0: the second delay is twice the first (jitter off)", []string{"class:default-merge"}},
	{"http-partial-max-interval", "RET-10", "8.1", "a policy without max_interval gets PT5M: PT0.5S with coefficient 1000 gives a second delay of exactly 300s, not 500s (jitter off)", []string{"class:default-merge"}},
	{"http-partial-jitter", "RET-10", "8.1", "a policy without jitter gets jitter on: over 8 jobs of PT1H the first delays lie in [30m, 90m) and are not all exactly 1h", []string{"class:default-merge"}},
	{"http-partial-on-exhaustion", "RET-10", "8.1", "a policy without on_exhaustion gets discard: the exhausted job is not in the dead letter queue", []string{"class:default-merge"}},
	{"http-jitter-range", "RET-05", "5.1", "jittered delays lie in [0.5, 1.5) times the base delay, and do vary", []string{"class:jitter"}},
	{"http-jitter-cap", "RET-06", "5.3", "a jittered delay never exceeds max_interval (cap after jitter)", []string{"class:post-jitter-cap"}},
	{"http-strategy-none", "RK-01", "3", "backoff_strategy none: every delay is initial_interval (jitter off and on, capped and not); rejecting the field at PUSH leaves it unjudged", []string{"class:strategy-field", "extension:backoff_strategy"}},
	{"http-strategy-linear", "RK-01", "3", "backoff_strategy linear: the delay after attempt n is initial_interval × n (jitter off and on, capped and not)", []string{"class:strategy-field", "extension:backoff_strategy"}},
	{"http-strategy-exponential", "RK-01", "3", "backoff_strategy exponential: the delay after attempt n is initial_interval × coefficient^(n−1) (jitter off and on, capped and not)", []string{"class:strategy-field", "extension:backoff_strategy"}},
	{"http-strategy-polynomial", "RK-01", "3", "backoff_strategy polynomial: the delay after attempt n is initial_interval × n^coefficient (jitter off and on, capped and not); accepting it and computing exponential fails", []string{"class:strategy-field", "extension:backoff_strategy"}},
	{"http-jitter-distribution", "RET-05", "5.1", "over 64 jobs of PT10S the jitter multipliers reach below 0.65 and to 1.35 or above: the range is [0.5, 1.5), not narrower by 0.15 at an end (false-alarm rate 6·10⁻⁵); inconclusive on slow round trips", []string{"class:jitter"}},
	{"http-promoted-relative", "RET-11", "9.1", "a retry due 400ms after its failure is fetchable less than that delay after its next_attempt_at: a server that promotes at twice the delay or later fails (seen on two jobs of three; a job whose FETCH took over 100ms proves nothing, and three such are inconclusive)", []string{"class:late-retry"}},
	{"http-not-early", "RET-11", "9.1", "no retry is handed out before its next_attempt_at (every retry of the run, by the server's clock)", []string{"class:early-retry"}},
	{"http-promoted", "RET-11", "9.1", "every retry is fetchable within the late bound after its next_attempt_at", []string{"class:late-retry"}},
	{"http-discard", "RET-17", "2.2", "on_exhaustion discard: the last FAIL answers discarded and the job is not in the dead letter queue", []string{"class:exhaustion"}},
	{"http-dead-letter", "DLQ-001", "3", "on_exhaustion dead_letter: the last FAIL answers discarded and the job is listed in the dead letter queue", []string{"class:exhaustion"}},
	{"http-dead-letter-content", "DLQ-001", "3", "a dead-lettered job is the job as pushed (type, queue, args) and carries its full error history: one entry per failed attempt, in order, with the type and message each FAIL reported", []string{"class:dead-letter-content"}},
	{"http-dead-letter-retry", "DLQ-003", "5", "a dead letter job retried by POST /dead-letter/:id/retry is fetchable again, with its attempt count reset", []string{"class:dead-letter-retry"}},
	{"http-history", "RET-14", "10.1", "the job keeps its error history: one entry per failed attempt, in order, with attempt, type and message", []string{"class:error-history"}},
	{"http-history-10", "RET-15", "10.1", "after 12 failed attempts the job keeps at least the 10 most recent error history entries, in order (judged by their types; their numbering is http-history's and http-attempt-absolute's)", []string{"class:error-history"}},
	{"http-nonretryable-exact", "RET-07", "6.3", "an error type equal to a non_retryable_errors entry ends the job at its first failure", []string{"class:non-retryable"}},
	{"http-nonretryable-prefix", "RET-18", "6.2", "\"auth.*\" matches \"auth.token_expired\" and \"auth.token.revoked\": the job ends at its first failure (prefix matching is a SHOULD)", []string{"class:non-retryable", "should:prefix-match"}},
	{"http-prefix-boundary", "RET-18", "6.2", "\"auth.*\" matches neither \"authx\", \"auth\" nor \"external.auth.failure\": those failures are retried", []string{"class:regex-matching", "should:prefix-match"}},
	{"http-exact-literal", "RET-18", "6.2", "an entry \"a.b\" matches only \"a.b\", not \"axb\" (no regular expressions)", []string{"class:regex-matching"}},
	{"http-match-glob", "RET-18", "6.2", "entries are not globs: \"auth*\" matches neither \"authx\" nor \"auth\", \"a?b\" not \"axb\"; those failures are retried (or the entries rejected at PUSH)", []string{"class:regex-matching"}},
	{"http-match-message", "RET-07", "6.1", "non_retryable_errors are matched against the error type only: a message equal to an entry, or matching its prefix, does not end the job", []string{"class:message-matching"}},
	{"http-match-case", "RET-18", "6.2", "matching is case-sensitive: \"Auth.Failed\" does not match \"auth.failed\", \"Auth.*\" not \"auth.x\"", []string{"class:regex-matching"}},
	{"http-code-retry", "RET-08", "7.2", "handler code RETRY retries under the policy", []string{"class:handler-codes"}},
	{"http-code-discard", "RET-08", "7.2", "handler code DISCARD discards at once, attempts left or not, without a dead letter", []string{"class:handler-codes"}},
	{"http-code-fail", "RET-08", "7.2", "handler code FAIL discards at once, like DISCARD", []string{"class:handler-codes"}},
	{"http-code-dead-letter", "RET-08", "7.2", "handler code DEAD_LETTER dead-letters at once, whatever on_exhaustion says", []string{"class:handler-codes"}},
	{"http-visibility-timeout", "RET-12", "9.2", "a reservation that expires without ACK or FAIL counts as a failed attempt: the job comes back, not before the timeout, and exhausts after max_attempts expiries", []string{"class:visibility-timeout"}},
	{"http-heartbeat", "RET-13", "9.3", "heartbeats extend the reservation: the job is not handed out again while they come, and ACK then succeeds", []string{"class:heartbeat"}},
	{"http-default-policy", "RET-09", "8", "a job without a retry policy retries under the default: max_attempts 3, first delay in [0.5s, 1.5s)", []string{"class:default-policy"}},
	{"http-content-type", "HTTP-4.1", "4.1", "every answer with a body has Content-Type application/openjobspec+json (the binding's MUST; application/json, which servers must accept from clients, is noted, not failed)", []string{"class:content-type"}},
	{"http-ojs-version", "HTTP-6.5", "6.5", "every answer carries the OJS-Version header", []string{"class:headers"}},
	{"http-error-object", "HTTP-16.1", "16.1", "every error answer is the binding's envelope: error.code and error.message strings, error.retryable a boolean, error.request_id equal to the X-Request-Id header (which must be sent)", []string{"class:error-object"}},
	{"http-location", "HTTP-9.1", "9.1", "a 201 PUSH carries Location /ojs/v1/jobs/{id}, and a GET on it returns that job", []string{"class:location"}},
	{"http-paused-queue", "HTTP-11.3", "11.3", "a paused queue is not fetched from; a PUSH to it is refused with 422 queue_paused, retryable, and stores nothing; after the resume its jobs are fetched (not run when the server does not pause queues)", []string{"class:paused-queue"}},
	{"http-rate-limit-attempt", "RL-003", "8.1", "when the manifest claims rate limiting: a job held back by its key's concurrency 1 stays available with attempt 0 through FETCHes that skip it, and starts as attempt 1 once the other job is acked (ojs-rate-limiting §5.1, §8.1)", []string{"class:rate-limit"}},
	{"http-nonretryable-dead-letter", "RK-115", "6.3", "a non-retryable error under on_exhaustion dead_letter is dead-lettered (retry spec); --nonretryable-discards also accepts a plain discard (the binding's L1-RET-003)", []string{"class:reading"}},
	{"http-interval-ms", "RK-113", "2.1", "initial_interval_ms (the binding's examples) is rejected (retry spec) or honoured (binding), never accepted and ignored", []string{"class:reading"}},
	{"http-backoff-type", "RK-114", "3", "backoff_type constant (openapi) is rejected (retry spec) or honoured (openapi), never accepted and ignored", []string{"class:reading"}},
	{"http-dead-letter-filter", "RK-203", "12.1", "GET /ojs/v1/dead-letter?queue=Q lists only jobs of Q (the checker reads every page either way and looks for its own job ids)", []string{"class:dead-letter-list"}},
}

// Checks returns the checks a run judges, in report order: a fresh copy.
func Checks() []Check {
	out := make([]Check, len(checks))
	for i, c := range checks {
		c.Flags = append([]string(nil), c.Flags...)
		out[i] = c
	}
	return out
}

// notes explains the failure classes of the checks, for the report's
// causes.
var notes = map[string]string{
	"class:headers":             "Failure class: answers without the OJS-Version header (binding 6.5: every response MUST carry it); clients detect version mismatches by it.",
	"class:error-object":        "Failure class: error answers that are not the binding's envelope (16.1): a client cannot read code, retryable or request_id, so it cannot decide whether to retry.",
	"class:location":            "Failure class: a 201 PUSH without a Location header naming the job (binding 9.1), or one that does not lead to it.",
	"class:paused-queue":        "Failure class: a paused queue is fetched from, or accepts a PUSH, or refuses it with something other than 422 queue_paused (binding 11.3; ojs-admin-api 6.3 lets a paused queue accept jobs, the binding does not).",
	"class:rate-limit":          "Failure class: a rate-limited job spends attempts while it waits, or its limit is not applied (ojs-rate-limiting 5.1, 8.1: it MUST remain available and be skipped).",
	"class:attempt-count":       "Failure class: the attempt or max_attempts a FAIL answer or INFO reports is not the 1-based attempt that failed (off by one), or the job is delivered more or fewer times than max_attempts.",
	"class:wrong-delay":         "Failure class: next_attempt_at is not the failure time plus the policy's delay.",
	"class:jitter":              "Failure class: jittered delays leave [0.5, 1.5) times the base delay, or no jitter is applied.",
	"class:post-jitter-cap":     "Failure class: no max_interval cap after jitter (retry spec 5.3).",
	"class:pre-jitter-cap":      "Failure class: the formula's delay is not capped before jitter (cap only after it), so long delays are always max_interval.",
	"class:default-merge":       "Failure class: a partial policy is not merged with the defaults (retry spec 8.1).",
	"class:early-retry":         "Failure class: a retry is handed out before its next_attempt_at.",
	"class:late-retry":          "Failure class: a retry is not handed out within the late bound (--late-bound) after its next_attempt_at.",
	"class:exhaustion":          "Failure class: exhaustion does not follow on_exhaustion (discarded, or discarded and in the dead letter queue).",
	"class:dead-letter-retry":   "Failure class: a dead letter retry does not bring the job back with a fresh attempt count.",
	"class:error-history":       "Failure class: the job's error history lacks entries, order, attempts or types.",
	"class:non-retryable":       "Failure class: a non_retryable_errors match is retried.",
	"class:regex-matching":      "Failure class: non_retryable_errors matched as regular expressions or loose prefixes (\"auth.*\" matching \"authx\").",
	"class:handler-codes":       "Failure class: a handler code (RETRY, DISCARD, FAIL, DEAD_LETTER) in error.code is accepted but not obeyed.",
	"class:visibility-timeout":  "Failure class: an expired reservation is not counted as a failed attempt, or the job comes back before the timeout.",
	"class:heartbeat":           "Failure class: a heartbeat does not extend the reservation.",
	"class:default-policy":      "Failure class: a job without a policy does not get the default (3 attempts, PT1S, 2.0, PT5M, jitter).",
	"class:attempt-number":      "Failure class: an attempt is shown 0-based (or one too high) in a FETCH, INFO or the error history.",
	"class:message-matching":    "Failure class: non_retryable_errors are matched against the error message as well as the type.",
	"class:content-type":        "Failure class: answers carry another Content-Type than application/openjobspec+json.",
	"class:dead-letter-list":    "Failure class: the dead-letter list ignores its queue filter.",
	"class:dead-letter-content": "Failure class: a dead letter is not the job as pushed, or lacks part of its error history.",
	"class:reading":             "Failure class: the server follows neither reading of a point where the binding contradicts the retry spec (or, for RK-115, the binding's without --nonretryable-discards).",
}
