package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// epoch is the instant at_ms 0 stands for; see Epoch.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Epoch returns the instant at_ms 0 stands for: 2026-01-01T00:00:00Z.
func Epoch() time.Time { return epoch }

// SchemaVersion is the version of the scenario file format this package
// reads; [Decode] rejects files with another schema_version.
const SchemaVersion = 1

// File is one vector file. Kind is always "scenario".
type File struct {
	SchemaVersion int               `json:"schema_version"`
	SuiteVersion  string            `json:"suite_version"`
	SpecVersion   string            `json:"spec_version"`
	Kind          string            `json:"kind"`
	Notes         map[string]string `json:"notes,omitempty"`
	Scenarios     []Scenario        `json:"scenarios"`
}

// Scenario is one timed sequence of operations with expectations.
type Scenario struct {
	ID          string   `json:"id"`          // stable, unique across all files
	Requirement string   `json:"requirement"` // main requirement, e.g. RET-12, DLQ-003, DLQ-R001, CORE-T01, CORE-F01, RK-30
	Covers      []string `json:"covers,omitempty"`
	Section     string   `json:"section"` // e.g. "ojs-retry 9.2"
	Description string   `json:"description"`
	Flags       []string `json:"flags,omitempty"`
	Config      Config   `json:"config"`
	Steps       []Step   `json:"steps"`
}

// Config sets up the executor for a scenario. Zero fields mean the
// executor's defaults.
type Config struct {
	// Rand, when set, is the value r in [0,1) of every jitter draw;
	// absent means DefaultRand (0.5, a jitter multiplier of exactly 1).
	Rand                *float64   `json:"rand,omitempty"`
	ErrorHistory        int        `json:"error_history,omitempty"`
	VisibilityTimeoutMs int64      `json:"visibility_timeout_ms,omitempty"`
	Retention           *Retention `json:"retention,omitempty"`
	// FinishedRetention bounds the other finished jobs (completed,
	// cancelled, plainly discarded): count per queue and state, and age.
	FinishedRetention *Retention `json:"finished_retention,omitempty"`
	// ReplayRules are the automatic replay rules of every queue: the
	// replay_rules array of ojs-dead-letter §7.1 (flag
	// extension:dead-letter-replay); absent means none.
	ReplayRules json.RawMessage `json:"replay_rules,omitempty"`
	// RetryBudget is the retry budget of every queue, the retry_budget
	// object of docs/extensions.md §2.3 (flag extension:retry_budget);
	// absent means none.
	RetryBudget json.RawMessage `json:"retry_budget,omitempty"`
}

// Retention is a retention limit of a scenario: the dead-letter one
// (Config.Retention) or the finished-job one (Config.FinishedRetention).
type Retention struct {
	MaxAgeMs int64 `json:"max_age_ms,omitempty"`
	MaxCount int   `json:"max_count,omitempty"`
}

// Step is one operation at a time, with what must hold after it.
type Step struct {
	AtMs   int64       `json:"at_ms"`
	Op     string      `json:"op"`               // enqueue fetch ack fail heartbeat cancel activate pause resume retry tick delete
	Job    *JobInput   `json:"job,omitempty"`    // enqueue
	ID     string      `json:"id,omitempty"`     // ack fail heartbeat cancel activate retry delete
	Queues []string    `json:"queues,omitempty"` // fetch
	Queue  string      `json:"queue,omitempty"`  // pause resume
	Error  *ErrorInput `json:"error,omitempty"`  // fail
	// Delivery names the fetch an ack, fail or heartbeat step answers: n
	// is the job's n-th fetch in this scenario (1 for its first, counting
	// across manual retries). 0 (absent) means its latest, so a step
	// without it acts for the current holder.
	Delivery int `json:"delivery,omitempty"`
	// RetryAfterMs is a delay the handler of a fail step asks for, and
	// SnoozeMs a snooze it asks for instead of failing (the retry
	// extensions of docs/extensions.md; flags extension:retry_after and
	// extension:snooze); absent means none, and a step gives at most one.
	RetryAfterMs *int64 `json:"retry_after_ms,omitempty"`
	SnoozeMs     *int64 `json:"snooze_ms,omitempty"`
	// Retry is the policy override of a manual retry (OJS retry JSON).
	Retry  json.RawMessage `json:"retry,omitempty"`
	Expect Expect          `json:"expect"`
}

// JobInput is the job of an enqueue step.
type JobInput struct {
	ID                  string          `json:"id"`
	Type                string          `json:"type"`
	Queue               string          `json:"queue,omitempty"`
	Args                json.RawMessage `json:"args,omitempty"`
	Retry               json.RawMessage `json:"retry,omitempty"` // absent: default policy
	ScheduledAtMs       *int64          `json:"scheduled_at_ms,omitempty"`
	Pending             bool            `json:"pending,omitempty"`
	VisibilityTimeoutMs int64           `json:"visibility_timeout_ms,omitempty"`
	// Priority orders FETCH within a queue, higher first (ojs-core §5;
	// flag extension:priority); absent is 0.
	Priority int `json:"priority,omitempty"`
	// ExpiresAtMs is the job's expires_at (ojs-core §5.2) and
	// EnqueueTTLMs its enqueue TTL in milliseconds (ojs-timeouts §5.3):
	// the start deadlines of flag extension:expiry; absent means none.
	ExpiresAtMs  *int64 `json:"expires_at_ms,omitempty"`
	EnqueueTTLMs int64  `json:"enqueue_ttl_ms,omitempty"`
	// Timeouts is the job's time budget, the ojs-timeouts object in whole
	// seconds: timeout, total_timeout, heartbeat_timeout, grace_period,
	// enqueue_ttl (flag extension:timeouts); absent means none.
	Timeouts json.RawMessage `json:"timeouts,omitempty"`
	// RateLimit is the job's rate limit (ojs-rate-limiting §6, periods in
	// milliseconds; flag extension:rate-limiting); absent means none.
	RateLimit *RateLimitInput `json:"rate_limit,omitempty"`
}

// RateLimitInput is a job's rate limit in a scenario: ojs-rate-limiting
// §6.1 with each period in whole milliseconds. OnLimit is "wait"
// (default), "reschedule" or "drop".
type RateLimitInput struct {
	Key         string       `json:"key"`
	Concurrency *int         `json:"concurrency,omitempty"`
	Rate        *WindowInput `json:"rate,omitempty"`
	Throttle    *WindowInput `json:"throttle,omitempty"`
	OnLimit     string       `json:"on_limit,omitempty"`
}

// WindowInput is a rate or throttle: Limit starts per PeriodMs.
type WindowInput struct {
	Limit    int   `json:"limit"`
	PeriodMs int64 `json:"period_ms"`
}

// ErrorInput is the error of a fail step (ojs-retry §7.3).
type ErrorInput struct {
	Type    string          `json:"type"`
	Message string          `json:"message"`
	Code    string          `json:"code,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Expect is what must hold after a step. Absent fields are not checked.
type Expect struct {
	// Error is the class of the error the operation must return:
	// "invalid_transition", "not_found", "duplicate_id", "invalid_request",
	// "stale_delivery" or "validation.retry_policy_invalid". Absent: the
	// operation succeeds.
	Error string `json:"error,omitempty"`
	// Fetched is the id a fetch step claims, or null for none.
	Fetched OptString `json:"fetched,omitzero"`
	// Jobs are expectations per job id.
	Jobs map[string]JobExpect `json:"jobs,omitempty"`
	// Absent lists ids that must not exist (never enqueued, or pruned).
	Absent []string `json:"absent,omitempty"`
	// Counts maps a state name, or "dead_letter", to the number of jobs in
	// it over all queues.
	Counts map[string]int `json:"counts,omitempty"`
}

// JobExpect is what must hold for one job. Absent fields are not checked.
type JobExpect struct {
	State           string         `json:"state,omitempty"`
	Attempt         *int           `json:"attempt,omitempty"`
	NextRetryAtMs   OptMs          `json:"next_retry_at_ms,omitzero"`
	ReservedUntilMs OptMs          `json:"reserved_until_ms,omitzero"`
	DeadLetter      *bool          `json:"dead_letter,omitempty"`
	Errors          *[]ErrorExpect `json:"errors,omitempty"` // the whole history, oldest first
	// ReplayCount, LastReplayedAtMs and ReplayRule are the job's automatic
	// replay record, the meta keys ojs.replay_count, ojs.last_replayed_at
	// and ojs.replay_rule (ojs-dead-letter §7.2); ReplayAtMs is the instant
	// a rule will replay the dead letter, null when none is planned (flag
	// extension:dead-letter-replay).
	ReplayCount      *int    `json:"replay_count,omitempty"`
	LastReplayedAtMs OptMs   `json:"last_replayed_at_ms,omitzero"`
	ReplayRule       *string `json:"replay_rule,omitempty"`
	ReplayAtMs       OptMs   `json:"replay_at_ms,omitzero"`
	// Snoozes is how many snoozes the job has taken (flag
	// extension:snooze).
	Snoozes *int `json:"snoozes,omitempty"`
}

// ErrorExpect is one expected error history entry. With Timeout set the
// entry must be the implementation's visibility-timeout entry; its type and
// message are implementation-defined and checked only when given.
type ErrorExpect struct {
	Attempt int             `json:"attempt"`
	Type    string          `json:"type,omitempty"`
	Message *string         `json:"message,omitempty"`
	Code    string          `json:"code,omitempty"`
	AtMs    int64           `json:"at_ms"`
	Details json.RawMessage `json:"details,omitempty"`
	Timeout bool            `json:"timeout,omitempty"`
	// TimeoutKind is the timeout_kind of the ojs-timeouts §8 error object
	// an expired time budget records ("execution", "stalled", "total"),
	// read from the entry's details (flag extension:timeouts).
	TimeoutKind string `json:"timeout_kind,omitempty"`
}

// OptMs is an optional, nullable millisecond time: absent (not checked),
// null (must be unset) or a number.
type OptMs struct {
	Set  bool  // the field was present
	Null bool  // it was null (Set is true too)
	Ms   int64 // its value, when Set and not Null
}

// UnmarshalJSON reads null or an integer.
func (o *OptMs) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	if err := json.Unmarshal(b, &o.Ms); err != nil {
		return fmt.Errorf("scenario: want null or integer milliseconds, got %s: %w", b, err)
	}
	return nil
}

// MarshalJSON writes null or the number. An unset OptMs also writes null;
// fields of this type are tagged omitzero so that an unset one is left out.
func (o OptMs) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.Ms)
}

// OptString is an optional, nullable string: absent, null or a string.
type OptString struct {
	Set  bool   // the field was present
	Null bool   // it was null (Set is true too)
	S    string // its value, when Set and not Null
}

// UnmarshalJSON reads null or a string.
func (o *OptString) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	if err := json.Unmarshal(b, &o.S); err != nil {
		return fmt.Errorf("scenario: want null or a string, got %s: %w", b, err)
	}
	return nil
}

// MarshalJSON writes null or the string (null also when unset; fields of
// this type are tagged omitzero).
func (o OptString) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.S)
}

// Observation is what an implementation reports after a step; it is also
// the answer shape of the protocol's "scenario" op.
type Observation struct {
	Error   string              `json:"error,omitempty"`   // error class, "" when the operation succeeded
	Message string              `json:"message,omitempty"` // the error's text, for reports
	Fetched *string             `json:"fetched,omitempty"` // fetch steps: the id, or absent for none
	Jobs    map[string]JobState `json:"jobs"`
	Counts  map[string]int      `json:"counts"`
}

// JobState is one job in an Observation.
type JobState struct {
	State           string       `json:"state"`
	Attempt         int          `json:"attempt"`
	NextRetryAtMs   *int64       `json:"next_retry_at_ms"`
	ReservedUntilMs *int64       `json:"reserved_until_ms"`
	DeadLetter      bool         `json:"dead_letter"`
	Errors          []ErrorState `json:"errors"`
	// The automatic replay record (ojs-dead-letter §7.2) and the planned
	// replay; absent (zero) for a job never replayed and none planned.
	ReplayCount      int    `json:"replay_count,omitempty"`
	LastReplayedAtMs *int64 `json:"last_replayed_at_ms,omitempty"`
	ReplayRule       string `json:"replay_rule,omitempty"`
	ReplayAtMs       *int64 `json:"replay_at_ms,omitempty"`
	// Snoozes is how many snoozes the job has taken (docs/extensions.md
	// §3.5); absent (zero) for one that never snoozed.
	Snoozes int `json:"snoozes,omitempty"`
}

// ErrorState is one error history entry in an Observation.
type ErrorState struct {
	Attempt int             `json:"attempt"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
	Code    string          `json:"code"`
	AtMs    int64           `json:"at_ms"`
	Details json.RawMessage `json:"details,omitempty"`
	Timeout bool            `json:"timeout,omitempty"`
}
