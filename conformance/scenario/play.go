package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/bounded"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
	"github.com/retrykit/retrykit/retrybudget"
)

// Ops returns the operation names a step may use, in a new slice.
func Ops() []string {
	return []string{"enqueue", "fetch", "ack", "fail", "heartbeat", "cancel", "activate", "pause", "resume", "retry", "tick", "delete"}
}

var (
	// ErrInvalidFile is wrapped by every error Decode returns, and by the
	// error Load returns for a file that does not decode.
	ErrInvalidFile = errors.New("scenario: invalid scenario file")
	// ErrMalformedScenario is wrapped by every error Play returns: a
	// scenario it cannot run (nil, an unknown op, a step without the fields
	// its op needs, at_ms negative, decreasing or past MaxAtMs).
	ErrMalformedScenario = errors.New("scenario: malformed scenario")
)

// ErrTooLarge is wrapped by the error Play returns for a scenario whose
// observations exceed [MaxObservationBytes]; it wraps
// [ErrMalformedScenario].
var ErrTooLarge = fmt.Errorf("%w: observations too large", ErrMalformedScenario)

// MaxObservationBytes bounds a scenario's size where it matters: the JSON of
// all its observations (the protocol's scenario answer) may take at most
// this many bytes, half of the protocol's 1 MiB answer line, which leaves an
// implementation room for more verbose JSON. Every observation lists every
// job, so the bound is in effect one on steps × jobs; Play stops with
// [ErrTooLarge] as soon as it is passed, so its time and memory stay
// proportional to this bound whatever the scenario (PROTOCOL.md 3.7). A job
// without errors takes about 120 bytes, so the bound allows about 4 000 job
// observations: 8 jobs over 500 steps, or 60 jobs over 70.
const MaxObservationBytes = 512 << 10

// MaxAtMs is the largest at_ms Play accepts: the reference executor counts
// time in int64 nanoseconds since 1970, which ends in April 2262.
const MaxAtMs int64 = (math.MaxInt64 - 1_767_225_600_000_000_000) / 1_000_000 // Epoch() is 1767225600 s

// Error classes used in Expect.Error and Observation.Error.
const (
	ClassInvalidTransition = "invalid_transition"
	ClassNotFound          = "not_found"
	ClassDuplicateID       = "duplicate_id"
	ClassInvalidRequest    = "invalid_request"
	ClassStaleDelivery     = "stale_delivery" // an ack, fail or heartbeat naming an earlier fetch of a job fetched again since
	ClassInvalidPolicy     = policy.ErrorType // "validation.retry_policy_invalid"
)

// Decode reads one vector file strictly: invalid JSON, unknown fields, a
// schema_version other than [SchemaVersion] and a kind other than
// "scenario" are errors. Every error wraps [ErrInvalidFile] (and the
// encoding/json error, when there is one).
func Decode(r io.Reader) (*File, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidFile, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %d, this package reads %d", ErrInvalidFile, f.SchemaVersion, SchemaVersion)
	}
	if f.Kind != "scenario" {
		return nil, fmt.Errorf("%w: kind is %q, want \"scenario\"", ErrInvalidFile, f.Kind)
	}
	return &f, nil
}

// Load reads every *.json file at the top of fsys except the schema
// (*.schema.json), in name order. A file that does not decode gives an error
// naming it and wrapping [ErrInvalidFile]; a file that cannot be read gives
// one wrapping the fs error (for example fs.ErrNotExist); a file over
// 16 MiB is an error without being read whole.
func Load(fsys fs.FS) (map[string]*File, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	out := make(map[string]*File)
	for _, n := range names {
		if strings.HasSuffix(n, ".schema.json") {
			continue
		}
		b, err := bounded.ReadFile(fsys, n, bounded.MaxSuiteFile)
		if err != nil {
			return nil, fmt.Errorf("scenario: %s: %w", path.Base(n), err)
		}
		f, err := Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Base(n), err)
		}
		out[n] = f
	}
	return out, nil
}

// msTime returns the instant ms milliseconds after the epoch, exactly for
// every int64 (time.Time reaches far beyond a time.Duration).
func msTime(ms int64) time.Time {
	return time.Unix(epoch.Unix()+ms/1000, (ms%1000)*int64(time.Millisecond)).UTC()
}

// timeMs returns the instant t in milliseconds after the epoch, rounded up:
// an instant between two milliseconds is reported as the next one. The
// executor ends a time budget at the first instant past its limit (the
// limit + 1 ns, RK-216); in the whole milliseconds of a scenario that is
// the limit + 1 ms, the first step at which the limit has passed. The
// executor's end of time (math.MaxInt64 ns after 1970, where its sums
// saturate) has no later millisecond and is rounded down.
func timeMs(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli() - epoch.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 && t.UnixNano() <= math.MaxInt64-int64(time.Millisecond) {
		ms++
	}
	return &ms
}

// msDur converts milliseconds to a Duration, saturating instead of wrapping.
func msDur(ms int64) time.Duration {
	const lim = int64(math.MaxInt64 / time.Millisecond)
	switch {
	case ms > lim:
		return math.MaxInt64
	case ms < -lim:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// Classify maps an executor error to its class.
func Classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, executor.ErrInvalidTransition):
		return ClassInvalidTransition
	case errors.Is(err, executor.ErrNotFound):
		return ClassNotFound
	case errors.Is(err, executor.ErrStaleDelivery):
		return ClassStaleDelivery
	case errors.Is(err, executor.ErrDuplicateID):
		return ClassDuplicateID
	case errors.Is(err, policy.ErrInvalidPolicy):
		return ClassInvalidPolicy
	default:
		return ClassInvalidRequest
	}
}

// Play runs sc against a fresh reference executor on a fake clock and
// returns one observation per step. It fails only on a malformed scenario
// (nil, unknown op, at_ms negative, decreasing or above [MaxAtMs], missing
// fields, a delivery naming a fetch that has not happened or given on a
// step other than ack, fail or heartbeat), or one whose observations pass
// [MaxObservationBytes] ([ErrTooLarge]), not on unmet expectations; use
// Check for those. Its errors wrap [ErrMalformedScenario]; the observations
// of the steps before the bad one are returned with it.
func Play(sc *Scenario) ([]Observation, error) {
	if sc == nil {
		return nil, fmt.Errorf("%w: nil scenario", ErrMalformedScenario)
	}
	clock := executor.NewFakeClock(epoch)
	opts := []executor.Option{executor.WithClock(clock)}
	if sc.Config.Rand != nil {
		opts = append(opts, executor.WithRand(backoff.Fixed(*sc.Config.Rand)))
	} else {
		opts = append(opts, executor.WithRand(backoff.Fixed(DefaultRand)))
	}
	if sc.Config.ErrorHistory > 0 {
		opts = append(opts, executor.WithErrorHistory(sc.Config.ErrorHistory))
	}
	if sc.Config.VisibilityTimeoutMs > 0 {
		opts = append(opts, executor.WithDefaultVisibilityTimeout(msDur(sc.Config.VisibilityTimeoutMs)))
	}
	if r := sc.Config.Retention; r != nil {
		opts = append(opts, executor.WithRetention(msDur(r.MaxAgeMs), r.MaxCount))
	}
	if r := sc.Config.FinishedRetention; r != nil {
		opts = append(opts, executor.WithFinishedRetention(msDur(r.MaxAgeMs), r.MaxCount))
	}
	if len(sc.Config.ReplayRules) > 0 {
		doc := append(append([]byte(`{"replay_rules":`), sc.Config.ReplayRules...), '}')
		rs, err := replay.Parse(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: scenario %s: config.replay_rules: %w", ErrMalformedScenario, sc.ID, err)
		}
		opts = append(opts, executor.WithReplayRules(rs))
	}
	if len(sc.Config.RetryBudget) > 0 {
		b, err := retrybudget.Parse(sc.Config.RetryBudget)
		if err != nil {
			return nil, fmt.Errorf("%w: scenario %s: config.retry_budget: %w", ErrMalformedScenario, sc.ID, err)
		}
		opts = append(opts, executor.WithRetryBudget(b))
	}
	e := executor.New(opts...)
	dels := make(map[string][]uint64) // every delivery per job id, in fetch order
	var last int64
	size := 2 // the brackets of the answer's steps array
	out := make([]Observation, 0, min(len(sc.Steps), 1024))
	for i, st := range sc.Steps {
		if st.AtMs < last {
			return out, fmt.Errorf("%w: scenario %s: step %d: at_ms %d is before %d", ErrMalformedScenario, sc.ID, i, st.AtMs, last)
		}
		if st.AtMs > MaxAtMs {
			return out, fmt.Errorf("%w: scenario %s: step %d: at_ms %d is after %d (April 2262)", ErrMalformedScenario, sc.ID, i, st.AtMs, MaxAtMs)
		}
		last = st.AtMs
		clock.Set(msTime(st.AtMs))
		obs, err := step(e, &st, dels)
		if err != nil {
			return out, fmt.Errorf("%w: scenario %s: step %d (%s): %w", ErrMalformedScenario, sc.ID, i, st.Op, err)
		}
		observe(e, &obs)
		b, err := json.Marshal(&obs)
		if err != nil {
			return out, fmt.Errorf("%w: scenario %s: step %d (%s): %w", ErrMalformedScenario, sc.ID, i, st.Op, err)
		}
		if size += len(b) + 1; size > MaxObservationBytes {
			return out, fmt.Errorf("%w: scenario %s: the observations pass %d bytes of JSON at step %d of %d (%d jobs), "+
				"the limit of a scenario answer (half the protocol's 1 MiB line); split the scenario",
				ErrTooLarge, sc.ID, MaxObservationBytes, i, len(sc.Steps), len(obs.Jobs))
		}
		out = append(out, obs)
	}
	return out, nil
}

// DefaultRand is the jitter draw of a scenario without config.rand: 0.5
// makes the jitter multiplier 0.5 + r exactly 1, so jittered delays equal
// the capped base delay.
const DefaultRand = 0.5

func step(e *executor.Executor, st *Step, dels map[string][]uint64) (obs Observation, err error) {
	var opErr error
	var d uint64
	switch st.Op {
	case "ack", "fail", "heartbeat":
		if d, err = delivery(e, st, dels[st.ID]); err != nil {
			return obs, err
		}
	default:
		if st.Delivery != 0 {
			return obs, fmt.Errorf("delivery on a %s step (only ack, fail and heartbeat name one)", st.Op)
		}
	}
	req, err := request(st)
	if err != nil {
		return obs, err
	}
	switch st.Op {
	case "enqueue":
		if st.Job == nil {
			return obs, errors.New("enqueue without job")
		}
		in := st.Job
		spec := executor.JobSpec{
			ID: in.ID, Type: in.Type, Queue: in.Queue, Args: in.Args, Retry: in.Retry, Pending: in.Pending,
			VisibilityTimeout: msDur(in.VisibilityTimeoutMs), Priority: in.Priority,
		}
		if in.ScheduledAtMs != nil {
			spec.ScheduledAt = msTime(*in.ScheduledAtMs)
		}
		if in.ExpiresAtMs != nil {
			spec.ExpiresAt = msTime(*in.ExpiresAtMs)
		}
		spec.EnqueueTTL = msDur(in.EnqueueTTLMs)
		if len(in.Timeouts) > 0 {
			if spec.Budget, err = budget.Parse(in.Timeouts); err != nil {
				return obs, fmt.Errorf("job %q: timeouts: %w", in.ID, err)
			}
			// The budget's enqueue_ttl is the job's enqueue TTL, which
			// the executor takes from JobSpec.EnqueueTTL.
			if ttl := spec.Budget.Spec().EnqueueTTL; ttl != 0 {
				if in.EnqueueTTLMs != 0 {
					return obs, fmt.Errorf("job %q: both enqueue_ttl_ms and timeouts.enqueue_ttl: give the enqueue TTL once", in.ID)
				}
				spec.EnqueueTTL = ttl
			}
		}
		if in.RateLimit != nil {
			if spec.RateLimit, err = rateLimit(in.RateLimit); err != nil {
				return obs, fmt.Errorf("job %q: %w", in.ID, err)
			}
		}
		_, opErr = e.Enqueue(spec)
	case "fetch":
		j, ok := e.Fetch(st.Queues...)
		if ok {
			obs.Fetched = &j.ID
			dels[j.ID] = append(dels[j.ID], j.Delivery)
		}
	case "ack":
		_, opErr = e.Ack(st.ID, d)
	case "fail":
		f := executor.Failure{}
		if st.Error != nil {
			f = executor.Failure{Type: st.Error.Type, Message: st.Error.Message, Code: errmatch.Code(st.Error.Code), Details: st.Error.Details}
		}
		f.Request = req
		_, opErr = e.Fail(st.ID, d, f)
	case "heartbeat":
		_, opErr = e.Heartbeat(st.ID, d)
	case "cancel":
		_, opErr = e.Cancel(st.ID)
	case "activate":
		_, opErr = e.Activate(st.ID)
	case "pause":
		e.PauseQueue(st.Queue)
	case "resume":
		e.ResumeQueue(st.Queue)
	case "retry":
		var p *policy.Policy
		if len(st.Retry) > 0 {
			p, opErr = policy.Parse(st.Retry)
		}
		if opErr == nil {
			_, opErr = e.Retry(st.ID, p)
		}
	case "tick":
		e.Tick()
	case "delete":
		opErr = e.Delete(st.ID)
	default:
		return obs, fmt.Errorf("unknown op %q", st.Op)
	}
	obs.Error = Classify(opErr)
	if opErr != nil {
		obs.Message = opErr.Error()
	}
	return obs, nil
}

// delivery returns the executor's delivery for the fetch an ack, fail or
// heartbeat step names: the job's latest when the step names none (0 for a
// job never fetched or unknown), else the n-th of seen. Naming a fetch that
// has not happened is malformed.
func delivery(e *executor.Executor, st *Step, seen []uint64) (uint64, error) {
	switch n := st.Delivery; {
	case n == 0:
		j, _ := e.Get(st.ID)
		return j.Delivery, nil
	case n < 0 || n > len(seen):
		return 0, fmt.Errorf("delivery %d of job %q: the job was fetched %d times so far", n, st.ID, len(seen))
	default:
		return seen[n-1], nil
	}
}

// countJobs returns the number of jobs per state name, plus "dead_letter".
func countJobs(jobs map[string]JobState) map[string]int {
	c := make(map[string]int)
	for _, j := range jobs {
		c[j.State]++
		if j.DeadLetter {
			c["dead_letter"]++
		}
	}
	return c
}

func observe(e *executor.Executor, obs *Observation) {
	obs.Jobs = make(map[string]JobState)
	obs.Counts = make(map[string]int)
	for _, j := range e.List(executor.Filter{}) {
		js := JobState{
			State: j.State.String(), Attempt: j.Attempt, DeadLetter: j.DeadLetter,
			NextRetryAtMs: timeMs(j.NextRetryAt), ReservedUntilMs: timeMs(j.ReservedUntil),
			Errors: make([]ErrorState, 0, len(j.Errors)),
		}
		for _, x := range j.Errors {
			js.Errors = append(js.Errors, ErrorState{
				Attempt: x.Attempt, Type: x.Type, Message: x.Message, Code: string(x.Code),
				AtMs: *timeMs(x.Time), Details: x.Details, Timeout: x.Type == executor.TimeoutErrorType,
			})
		}
		if j.Replay.Count > 0 {
			js.ReplayCount, js.LastReplayedAtMs, js.ReplayRule = j.Replay.Count, timeMs(j.Replay.LastAt), j.Replay.Rule
		}
		if at, _, ok := e.ReplayAt(j.ID); ok {
			js.ReplayAtMs = timeMs(at)
		}
		js.Snoozes = j.Snoozes
		obs.Jobs[j.ID] = js
		obs.Counts[js.State]++
		if j.DeadLetter {
			obs.Counts["dead_letter"]++
		}
	}
}

// Mismatch is one expectation an observation did not meet.
type Mismatch struct {
	Step int    // index of the step
	What string // e.g. `jobs["a"].state`
	Want string
	Got  string
}

// String formats the mismatch for test and report output.
func (m Mismatch) String() string {
	return fmt.Sprintf("step %d: %s: want %s, got %s", m.Step, m.What, m.Want, m.Got)
}

// Check compares observations with the scenario's expectations and returns
// every mismatch; a missing observation is one mismatch. An observation
// without counts (nil, as an adapter may leave them out) is judged on counts
// computed from its jobs.
func Check(sc *Scenario, obs []Observation) []Mismatch {
	var ms []Mismatch
	add := func(i int, what string, want, got any) {
		ms = append(ms, Mismatch{Step: i, What: what, Want: fmt.Sprint(want), Got: fmt.Sprint(got)})
	}
	for i, st := range sc.Steps {
		if i >= len(obs) {
			add(i, "observation", "present", "missing")
			break
		}
		o, x := obs[i], st.Expect
		if o.Error != x.Error {
			add(i, "error", orNone(x.Error), orNone(o.Error)+" "+o.Message)
		}
		if x.Fetched.Set {
			want, got := "null", "null"
			if !x.Fetched.Null {
				want = x.Fetched.S
			}
			if o.Fetched != nil {
				got = *o.Fetched
			}
			if want != got {
				add(i, "fetched", want, got)
			}
		}
		for _, id := range x.Absent {
			if _, ok := o.Jobs[id]; ok {
				add(i, fmt.Sprintf("jobs[%q]", id), "absent", "present")
			}
		}
		ids := make([]string, 0, len(x.Jobs))
		for id := range x.Jobs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			checkJob(i, id, x.Jobs[id], o.Jobs, add)
		}
		keys := make([]string, 0, len(x.Counts))
		for k := range x.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		counts := o.Counts
		if counts == nil && len(keys) > 0 {
			counts = countJobs(o.Jobs)
		}
		for _, k := range keys {
			if counts[k] != x.Counts[k] {
				add(i, fmt.Sprintf("counts[%q]", k), x.Counts[k], counts[k])
			}
		}
	}
	return ms
}

func orNone(s string) string {
	if s == "" {
		return "no error"
	}
	return s
}

func checkJob(i int, id string, x JobExpect, jobs map[string]JobState, add func(int, string, any, any)) {
	p := fmt.Sprintf("jobs[%q]", id)
	j, ok := jobs[id]
	if !ok {
		add(i, p, "present", "absent")
		return
	}
	if x.State != "" && x.State != j.State {
		add(i, p+".state", x.State, j.State)
	}
	if x.Attempt != nil && *x.Attempt != j.Attempt {
		add(i, p+".attempt", *x.Attempt, j.Attempt)
	}
	checkMs(i, p+".next_retry_at_ms", x.NextRetryAtMs, j.NextRetryAtMs, add)
	checkMs(i, p+".reserved_until_ms", x.ReservedUntilMs, j.ReservedUntilMs, add)
	if x.DeadLetter != nil && *x.DeadLetter != j.DeadLetter {
		add(i, p+".dead_letter", *x.DeadLetter, j.DeadLetter)
	}
	if x.ReplayCount != nil && *x.ReplayCount != j.ReplayCount {
		add(i, p+".replay_count", *x.ReplayCount, j.ReplayCount)
	}
	checkMs(i, p+".last_replayed_at_ms", x.LastReplayedAtMs, j.LastReplayedAtMs, add)
	if x.ReplayRule != nil && *x.ReplayRule != j.ReplayRule {
		add(i, p+".replay_rule", *x.ReplayRule, j.ReplayRule)
	}
	checkMs(i, p+".replay_at_ms", x.ReplayAtMs, j.ReplayAtMs, add)
	if x.Snoozes != nil && *x.Snoozes != j.Snoozes {
		add(i, p+".snoozes", *x.Snoozes, j.Snoozes)
	}
	if x.Errors == nil {
		return
	}
	want := *x.Errors
	if len(want) != len(j.Errors) {
		add(i, p+".errors length", len(want), fmt.Sprintf("%d %+v", len(j.Errors), j.Errors))
		return
	}
	for k, w := range want {
		g := j.Errors[k]
		q := fmt.Sprintf("%s.errors[%d]", p, k)
		if w.Attempt != g.Attempt {
			add(i, q+".attempt", w.Attempt, g.Attempt)
		}
		if w.AtMs != g.AtMs {
			add(i, q+".at_ms", w.AtMs, g.AtMs)
		}
		if w.Timeout != g.Timeout {
			add(i, q+".timeout", w.Timeout, g.Timeout)
		}
		if w.Type != "" && w.Type != g.Type {
			add(i, q+".type", w.Type, g.Type)
		}
		if w.Message != nil && *w.Message != g.Message {
			add(i, q+".message", *w.Message, g.Message)
		}
		if w.Code != "" && w.Code != g.Code {
			add(i, q+".code", w.Code, g.Code)
		}
		if w.TimeoutKind != "" {
			if k := timeoutKind(g.Details); k != w.TimeoutKind {
				add(i, q+".timeout_kind", w.TimeoutKind, orNone(k))
			}
		}
		if len(w.Details) > 0 && !jsonEqual(w.Details, g.Details) {
			add(i, q+".details", string(w.Details), string(g.Details))
		}
	}
}

func checkMs(i int, what string, want OptMs, got *int64, add func(int, string, any, any)) {
	if !want.Set {
		return
	}
	switch {
	case want.Null && got != nil:
		add(i, what, "null", *got)
	case !want.Null && got == nil:
		add(i, what, want.Ms, "null")
	case !want.Null && *got != want.Ms:
		add(i, what, want.Ms, *got)
	}
}

// timeoutKind returns the timeout_kind member of an error entry's details
// (the ojs-timeouts §8 object), "" when there is none.
func timeoutKind(details []byte) string {
	var obj struct {
		Kind string `json:"timeout_kind"`
	}
	if json.Unmarshal(details, &obj) != nil {
		return ""
	}
	return obj.Kind
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// rateLimit turns a scenario's rate limit into the executor's.
func rateLimit(in *RateLimitInput) (*executor.RateLimit, error) {
	r := &executor.RateLimit{Key: in.Key, Concurrency: in.Concurrency}
	switch in.OnLimit {
	case "", "wait":
	case "reschedule":
		r.OnLimit = executor.LimitReschedule
	case "drop":
		r.OnLimit = executor.LimitDrop
	default:
		return nil, fmt.Errorf("rate_limit.on_limit: %q is not wait, reschedule or drop", in.OnLimit)
	}
	if w := in.Rate; w != nil {
		r.Rate = executor.Window{Limit: w.Limit, Period: msDur(w.PeriodMs)}
	}
	if w := in.Throttle; w != nil {
		r.Throttle = executor.Window{Limit: w.Limit, Period: msDur(w.PeriodMs)}
	}
	return r, nil
}

// request reads the retry_after_ms or snooze_ms of a fail step as the
// handler's request (docs/extensions.md); a scenario that gives either on
// another step, both, or a negative one is malformed.
func request(st *Step) (errmatch.Request, error) {
	if st.RetryAfterMs == nil && st.SnoozeMs == nil {
		return errmatch.Request{}, nil
	}
	switch {
	case st.Op != "fail":
		return errmatch.Request{}, fmt.Errorf("retry_after_ms or snooze_ms on a %s step (only fail asks for one)", st.Op)
	case st.RetryAfterMs != nil && st.SnoozeMs != nil:
		return errmatch.Request{}, errors.New("fail step with both retry_after_ms and snooze_ms: give one")
	}
	kind, ms := errmatch.RetryAfter, st.RetryAfterMs
	if ms == nil {
		kind, ms = errmatch.Snooze, st.SnoozeMs
	}
	if *ms < 0 || *ms > maxStepMs {
		return errmatch.Request{}, fmt.Errorf("fail step: %s must be from 0 to %d ms, got %d", kind, maxStepMs, *ms)
	}
	return errmatch.Request{Kind: kind, Delay: msDur(*ms)}, nil
}

// maxStepMs bounds a requested delay or snooze: 100 years, as every other
// scenario time.
const maxStepMs = int64(100 * 365 * 24 * 3600 * 1000)
