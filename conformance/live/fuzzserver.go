// Differential fuzzing of a live server: generated policies and failure
// sequences, each FAIL answer judged against the reference server model.

package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// FuzzCase is one job of [FuzzServer]: a retry policy and the failures a
// worker reports, one per delivery. Written as JSON it replays with
// [ReplayCase].
type FuzzCase struct {
	Policy   map[string]any `json:"policy"`
	Failures []FuzzFailure  `json:"failures"`
	// Step is the 1-based failure whose FAIL answer the reference answers
	// otherwise; Got and Want say how (set on a disagreement).
	Step int    `json:"step,omitempty"`
	Got  string `json:"got,omitempty"`
}

// FuzzFailure is one FAIL a case reports: the error type and handler code.
type FuzzFailure struct {
	Type string `json:"type"`
	Code string `json:"code,omitempty"`
}

// FuzzResult is the outcome of [FuzzServer].
type FuzzResult struct {
	Jobs  int       // jobs played, shrinking included
	Found *FuzzCase // the first disagreement, shrunk; nil: none
	// Shrinks is how many smaller cases were replayed to shrink Found.
	Shrinks int
	// Stopped says why the run ended before its jobs ("" when it did not):
	// its time, or an error of the server.
	Stopped string
	// Left says what the cleanup could not remove ("" when everything was).
	Left string
}

// FuzzServer plays up to jobs generated cases (seed makes them
// reproducible) against the server at serverURL within budget: each case
// pushes a job under a random policy (max_attempts 1..4, 10..40 ms
// intervals, each strategy or none, jitter, non_retryable_errors,
// on_exhaustion) and fails every delivery with a random error type or
// handler code; every FAIL answer (state, attempt, max_attempts, the delay
// of next_attempt_at) is judged against the reference server model
// (package servermodel, the spec's rules). The first disagreement is
// shrunk (policy fields dropped, fewer attempts, fewer and plainer
// failures, each replayed) to a minimal case. At most jobs jobs are ever
// pushed; at the end every job of the run is cancelled or its dead letter
// deleted, and Left says what could not be.
func FuzzServer(ctx context.Context, serverURL string, jobs int, seed uint64, budget time.Duration, opts ...Option) (*FuzzResult, error) {
	e, err := fuzzEnv(ctx, serverURL, opts)
	if err != nil {
		return nil, err
	}
	if jobs < 1 || budget <= 0 {
		return nil, fmt.Errorf("%w: fuzz: jobs must be at least 1 and the budget positive, got %d and %v", ErrInvalidOption, jobs, budget)
	}
	res := &FuzzResult{}
	run, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	rng := mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for res.Jobs < jobs {
		c := genCase(rng)
		bad, err := e.playCase(run, &c)
		res.Jobs++
		if err != nil {
			res.Stopped = stopReason(run, err)
			break
		}
		if bad {
			res.Found = &c
			res.Shrinks, res.Jobs = e.shrink(run, res.Found, jobs-res.Jobs, res.Jobs)
			break
		}
	}
	clean, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancelClean()
	res.Left = e.cleanup(clean)
	return res, nil
}

// ReplayCase plays one case (as FuzzServer writes it) against the server
// and reports whether the server still disagrees, with the case's Step
// and Got set anew.
func ReplayCase(ctx context.Context, serverURL string, c *FuzzCase, opts ...Option) (bad bool, left string, err error) {
	e, err := fuzzEnv(ctx, serverURL, opts)
	if err != nil {
		return false, "", err
	}
	c.Step, c.Got = 0, ""
	bad, err = e.playCase(ctx, c)
	left = e.cleanup(context.WithoutCancel(ctx))
	return bad, left, err
}

// fuzzEnv is the environment of a fuzz run: the client, no checks.
func fuzzEnv(ctx context.Context, serverURL string, opts []Option) (*env, error) {
	cfg, c, err := setup(serverURL, opts)
	if err != nil {
		return nil, err
	}
	if err := c.checkServer(ctx); err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &env{c: c, cfg: cfg, prefix: "rk-fuzz-" + hex.EncodeToString(b[:]), verdicts: map[string]*verdict{}, runCtx: ctx}, nil
}

// genCase draws one case.
func genCase(rng *mrand.Rand) FuzzCase {
	initial := time.Duration(1+rng.IntN(4)) * 10 * ms
	p := map[string]any{
		"max_attempts":        1 + rng.IntN(4),
		"initial_interval":    fmtDur(initial),
		"backoff_coefficient": []float64{1, 1.5, 2, 3}[rng.IntN(4)],
		"max_interval":        fmtDur(initial * time.Duration(1+rng.IntN(4))),
		"jitter":              rng.IntN(4) == 0,
		"on_exhaustion":       []string{"discard", "dead_letter"}[rng.IntN(2)],
	}
	if rng.IntN(2) == 0 {
		p["backoff_strategy"] = []string{"none", "linear", "exponential", "polynomial"}[rng.IntN(4)]
	}
	if rng.IntN(3) == 0 {
		p["non_retryable_errors"] = []string{[]string{"fz.fatal", "fz.*", "Fz.Fatal"}[rng.IntN(3)]}
	}
	n := p["max_attempts"].(int) + 1
	c := FuzzCase{Policy: p}
	for range n {
		f := FuzzFailure{Type: "fz.timeout"}
		switch rng.IntN(10) {
		case 0:
			f.Type = "fz.fatal"
		case 1:
			f.Code = []string{"RETRY", "DISCARD", "FAIL", "DEAD_LETTER"}[rng.IntN(4)]
		}
		c.Failures = append(c.Failures, f)
	}
	return c
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("PT%gS", d.Seconds()) }

// playCase pushes c's job and fails its deliveries in turn, judging each
// FAIL answer; it returns true, with c.Step and c.Got set, at the first
// one the reference answers otherwise.
func (e *env) playCase(ctx context.Context, c *FuzzCase) (bool, error) {
	q := e.queue("fuzz")
	id, err := e.c.push(ctx, q, "retrykit.fuzz", c.Policy)
	if err != nil {
		return false, err
	}
	if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
		return false, err
	}
	for i, f := range c.Failures {
		fl := failure{Type: f.Type, Code: f.Code, Message: fmt.Sprintf("fuzz failure %d", i+1)}
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			return false, err
		}
		o := servermodel.Obs{Check: "fuzz", Kind: servermodel.FailAnswer, Policy: roundTrip(c.Policy), N: i + 1,
			Failure: servermodel.Failure{Type: f.Type, Code: f.Code, Message: fl.Message},
			State:   a.State, Attempt: a.Attempt, MaxAttempts: a.MaxAttempts}
		next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
		if a.State == "retryable" && !next.IsZero() {
			o.DelayLo, o.DelayHi = e.delayRange(ex, next)
			o.HasDelay = true
		}
		if ok, diff := servermodel.Judge(&o); !ok {
			c.Step, c.Got = i+1, diff
			e.c.cancel(ctx, id)
			return true, nil
		}
		if a.State != "retryable" {
			return false, nil
		}
		if _, err := e.await(ctx, q, id, next, 0); err != nil {
			return false, err
		}
	}
	e.c.cancel(ctx, id)
	return false, nil
}

// roundTrip gives a policy the shape a decoded JSON object has (float64
// numbers, []any lists), as the model reads policies.
func roundTrip(p map[string]any) map[string]any {
	b, _ := json.Marshal(p)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// shrink replays smaller variants of c (at most left jobs), keeping each
// that still disagrees, until none does; it returns the replays and the
// jobs played in all (played before it plus its own).
func (e *env) shrink(ctx context.Context, c *FuzzCase, left, played int) (replays, total int) {
	for progress := true; progress && left > 0 && ctx.Err() == nil; {
		progress = false
		for _, v := range variants(*c) {
			if left == 0 || ctx.Err() != nil {
				break
			}
			left--
			replays++
			played++
			if bad, err := e.playCase(ctx, &v); err == nil && bad {
				*c = v
				progress = true
				break
			}
		}
	}
	return replays, played
}

// variants returns the cases one step smaller than c: a policy field
// dropped or made plain, one attempt fewer, the failures after the
// disagreeing one dropped, one failure made a plain retryable one.
func variants(c FuzzCase) []FuzzCase {
	var out []FuzzCase
	with := func(edit func(*FuzzCase)) {
		v := FuzzCase{Policy: map[string]any{}, Failures: append([]FuzzFailure(nil), c.Failures...)}
		for k, x := range c.Policy {
			v.Policy[k] = x
		}
		edit(&v)
		out = append(out, v)
	}
	if c.Step > 0 && c.Step < len(c.Failures) {
		with(func(v *FuzzCase) { v.Failures = v.Failures[:c.Step] })
	}
	for _, k := range []string{"backoff_strategy", "non_retryable_errors"} {
		if _, ok := c.Policy[k]; ok {
			with(func(v *FuzzCase) { delete(v.Policy, k) })
		}
	}
	if c.Policy["jitter"] == true {
		with(func(v *FuzzCase) { v.Policy["jitter"] = false })
	}
	if c.Policy["on_exhaustion"] == "dead_letter" {
		with(func(v *FuzzCase) { v.Policy["on_exhaustion"] = "discard" })
	}
	if n, ok := c.Policy["max_attempts"].(int); ok && n > 1 {
		with(func(v *FuzzCase) {
			v.Policy["max_attempts"] = n - 1
			if len(v.Failures) > n {
				v.Failures = v.Failures[:n]
			}
		})
	}
	for i, f := range c.Failures {
		if f != (FuzzFailure{Type: "fz.timeout"}) {
			with(func(v *FuzzCase) { v.Failures[i] = FuzzFailure{Type: "fz.timeout"} })
		}
	}
	return out
}

// stopReason says why a fuzz run stopped on err.
func stopReason(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "its time ran out"
	}
	return "the server failed a request: " + err.Error()
}
