package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

// serveWith starts retrykit's own OJS server with the planted faults on
// a loopback port.
func serveWith(t *testing.T, faults ojsfault.Set) *httptest.Server {
	t.Helper()
	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, faults)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		ojsfault.Plant(srv, 0)
	})
	return hs
}

// A correct server (retrykit serve, the reference executor on HTTP)
// agrees with the reference executor on every generated case, whatever
// the seed, and the run stays within its job bound.
func TestFuzzServerServeAgreesOnManySeeds(t *testing.T) {
	hs := serveWith(t, 0)
	const jobs = 25
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if testing.Short() {
		seeds = seeds[:2]
	}
	total := 0
	for _, seed := range seeds {
		res, err := live.FuzzServer(context.Background(), hs.URL, jobs, seed, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if res.Found != nil || res.Stopped != "" || res.Jobs != jobs {
			t.Fatalf("seed %d: found %+v, stopped %q, %d jobs of %d", seed, res.Found, res.Stopped, res.Jobs, jobs)
		}
		if !strings.Contains(res.Left, "of 25 jobs the run pushed") {
			t.Errorf("seed %d: cleanup statement %q does not count the 25 jobs", seed, res.Left)
		}
		total += res.Jobs
	}
	t.Logf("%d jobs on %d seeds, no disagreement", total, len(seeds))
}

// Each planted fault of the server is found, shrunk to a small case that
// shows it, and the written case replays: it still disagrees with the
// faulty server and agrees with the correct one.
func TestFuzzServerFindsPlantedFaults(t *testing.T) {
	for _, tc := range []struct {
		fault ojsfault.Set
		// kind is the deviation the shrunk case is grouped by, one of
		// several separated by "|" ("": not one kind only; a partial
		// policy stored as given shows in its state, max_attempts or
		// delay, by the field left out).
		kind string
		// shows checks that the shrunk case is the fault's, read from
		// the fault's definition (internal/ojsfault).
		shows func(c *live.FuzzCase) bool
		// steps is the most failures the shrunk case may keep.
		steps int
	}{
		// One attempt past max_attempts: max_attempts 1, failed once.
		{ojsfault.ExhaustLate, "state:retried-not-discarded(max_attempts)|state:retried-not-dead-lettered(max_attempts)", func(c *live.FuzzCase) bool { return num(c.Policy["max_attempts"]) == 1 }, 1},
		// Twice the delay: seen on the first retry.
		{ojsfault.DelayDoubled, "delay:initial", func(c *live.FuzzCase) bool { return strings.Contains(c.Got, "retry after") }, 1},
		// linear is i·n, exponential i·c^(n-1): they part at n = 2 unless
		// c = 2, else at n = 3.
		{ojsfault.LinearAsExponential, "delay:linear", func(c *live.FuzzCase) bool { return c.Policy["backoff_strategy"] == "linear" }, 2},
		// polynomial is i·n^c: 4i at n = 2 for c = 2, against 2i.
		{ojsfault.PolynomialAsExponential, "delay:polynomial", func(c *live.FuzzCase) bool { return c.Policy["backoff_strategy"] == "polynomial" }, 2},
		// DISCARD ignored: a failure carries it.
		{ojsfault.DiscardCodeIgnored, "state:retried-not-discarded(DISCARD)", func(c *live.FuzzCase) bool { return c.Failures[c.Step-1].Code == "DISCARD" }, 1},
		// DEAD_LETTER ignored: retried while attempts are left, discarded
		// without a dead letter at the last under discard.
		{ojsfault.DeadLetterCodeIgnored, "state:retried-not-dead-lettered(DEAD_LETTER)|dead-letter:discarded-not-dead-lettered(DEAD_LETTER)", func(c *live.FuzzCase) bool {
			return c.Failures[c.Step-1].Code == "DEAD_LETTER"
		}, 1},
		// 0-based attempts: the first FETCH already shows 0.
		{ojsfault.AttemptOffByOne, "fetch-attempt", func(c *live.FuzzCase) bool { return strings.HasPrefix(c.Got, "FETCH of delivery 1") }, 1},
		{ojsfault.FetchAttemptHigh, "fetch-attempt", func(c *live.FuzzCase) bool { return strings.HasPrefix(c.Got, "FETCH of delivery 1") }, 1},
		// Regexp matching: a pattern and a type only a regexp reading
		// matches ("fz.f.tal" against "fz.fxtal", "fz*" against "fz...").
		{ojsfault.RegexMatch, "state:ended-not-retried(non_retryable_errors)", func(c *live.FuzzCase) bool { return c.Policy["non_retryable_errors"] != nil }, 1},
		{ojsfault.GlobMatch, "state:ended-not-retried(non_retryable_errors)", func(c *live.FuzzCase) bool { return c.Policy["non_retryable_errors"] != nil }, 1},
		// No cap after jitter: a jittered delay over max_interval, from a
		// jittered policy (jitter true, or absent: on by default).
		{ojsfault.NoCapAfterJitter, "delay:above-cap", func(c *live.FuzzCase) bool { return c.Policy["jitter"] != false }, 2},
		// A partial policy stored without the defaults.
		{ojsfault.NoDefaultsMerge, "", func(c *live.FuzzCase) bool {
			_, a := c.Policy["max_attempts"]
			_, j := c.Policy["jitter"]
			_, m := c.Policy["max_interval"]
			_, mms := c.Policy["max_interval_ms"] // the binding's spelling
			return !a || !j || (!m && !mms)
		}, 3},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			bad := serveWith(t, tc.fault)
			var res *live.FuzzResult
			// The fault shows on some cases only: a few seeds in turn.
			for seed := uint64(1); seed <= 4 && (res == nil || res.Found == nil); seed++ {
				var err error
				res, err = live.FuzzServer(context.Background(), bad.URL, 120, seed, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if res.Stopped != "" || res.Jobs > 120 {
					t.Fatalf("stopped %q after %d jobs (bound 120)", res.Stopped, res.Jobs)
				}
			}
			c := res.Found
			if c == nil {
				t.Fatalf("not found in 4 runs of 120 jobs")
			}
			t.Logf("%d jobs, %d replays: %v %+v: %s", res.Jobs, res.Shrinks, c.Policy, c.Failures, c.Got)
			if tc.kind != "" && !slices.Contains(strings.Split(tc.kind, "|"), c.Kind) {
				t.Errorf("kind %q, want %q (%s)", c.Kind, tc.kind, c.Got)
			}
			if c.Step < 1 || len(c.Failures) != c.Step || c.Step > tc.steps || !tc.shows(c) {
				t.Errorf("shrunk case does not show the fault in at most %d failures: step %d of %d, policy %v, %s", tc.steps, c.Step, len(c.Failures), c.Policy, c.Got)
			}
			// The case as written to a file replays (a jittered case up to
			// 16 times, until it disagrees).
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, srv := range []struct {
				url  string
				want bool
			}{{bad.URL, true}, {serveWith(t, 0).URL, false}} {
				var file live.FuzzCase
				if err := json.Unmarshal(b, &file); err != nil {
					t.Fatal(err)
				}
				got, left, err := live.ReplayCase(context.Background(), srv.url, &file)
				if err != nil || got != srv.want {
					t.Errorf("replay of %s: disagrees %v (want %v), err %v, %s", b, got, srv.want, err, file.Got)
				}
				if !strings.Contains(left, "jobs the run pushed") {
					t.Errorf("replay cleanup statement: %q", left)
				}
			}
		})
	}
}

// num reads a JSON number of a case's policy, as generated (int) or read
// back from a file (float64).
func num(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return -1
}

// With WithFuzzAll a server with two faults has both found, each shrunk
// apart and each replaying in its own kind: attempts shown from 0 at
// FETCH do not hide polynomial delays computed as exponential.
func TestFuzzServerAllFindsEachKind(t *testing.T) {
	bad := serveWith(t, ojsfault.AttemptOffByOne|ojsfault.PolynomialAsExponential)
	res, err := live.FuzzServer(context.Background(), bad.URL, 250, 1, time.Minute, live.WithFuzzAll(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs > 250 {
		t.Errorf("%d jobs, bound 250", res.Jobs)
	}
	kinds := map[string]*live.FuzzCase{}
	for _, c := range append([]*live.FuzzCase{res.Found}, res.More...) {
		if c == nil {
			t.Fatalf("nothing found in %d jobs (stopped %q)", res.Jobs, res.Stopped)
		}
		kinds[c.Kind] = c
	}
	if kinds["fetch-attempt"] == nil || kinds["delay:polynomial"] == nil {
		t.Fatalf("kinds found: %v, want fetch-attempt and delay:polynomial", kinds)
	}
	c := kinds["delay:polynomial"]
	if c.Policy["backoff_strategy"] != "polynomial" || len(c.Failures) != c.Step {
		t.Errorf("polynomial case not shrunk: %v %v", c.Policy, c.Failures)
	}
	for kind, c := range kinds {
		if got, _, err := live.ReplayCase(context.Background(), bad.URL, c); err != nil || !got || c.Kind != kind {
			t.Errorf("replay of the %s case: disagrees %v in %q, err %v", kind, got, c.Kind, err)
		}
	}
}

// A server with three deviations of state at once (DEAD_LETTER ignored,
// DISCARD ignored, non_retryable_errors also matched as regexps) has
// each found apart with WithFuzzAll, in its own kind: the kind says which
// side retried and the rule involved. Each is shrunk to one failure that
// shows it (the code on the failure; a pattern only a regexp reading
// matches), no variant of which still disagrees in its kind (a local
// minimum; shrinking never grows a case, TestFuzzShrinkNeverGrows), and
// each replays in its kind on the faulty server and agrees on a correct
// one. Any other kind found is one these faults give at the last attempt
// (a dead letter), nothing else.
func TestFuzzServerAllSplitsStateDeviations(t *testing.T) {
	bad := serveWith(t, ojsfault.DeadLetterCodeIgnored|ojsfault.DiscardCodeIgnored|ojsfault.RegexMatch)
	good := serveWith(t, 0)
	want := map[string]func(c *live.FuzzCase) bool{
		"state:retried-not-dead-lettered(DEAD_LETTER)": func(c *live.FuzzCase) bool { return c.Failures[0].Code == "DEAD_LETTER" },
		"state:retried-not-discarded(DISCARD)":         func(c *live.FuzzCase) bool { return c.Failures[0].Code == "DISCARD" },
		// Matched only as a regexp: no pattern matches the type by the
		// spec's rules (exact, or a ".*" prefix), so the reference
		// retries; the case keeps the patterns it needs.
		"state:ended-not-retried(non_retryable_errors)": func(c *live.FuzzCase) bool {
			b, _ := json.Marshal(c.Policy["non_retryable_errors"])
			return c.Failures[0].Code == "" && len(b) > 2 && strings.Contains(c.Got, "non_retryable_errors")
		},
	}
	also := []string{"dead-letter:discarded-not-dead-lettered(DEAD_LETTER)", "dead-letter:dead-lettered-not-discarded(DISCARD)"}
	const jobs = 250
	res, err := live.FuzzServer(context.Background(), bad.URL, jobs, 1, 2*time.Minute, live.WithFuzzAll(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs > jobs || res.Stopped != "" {
		t.Fatalf("%d jobs (bound %d), stopped %q", res.Jobs, jobs, res.Stopped)
	}
	kinds := map[string]*live.FuzzCase{}
	for _, c := range append([]*live.FuzzCase{res.Found}, res.More...) {
		if c == nil {
			t.Fatalf("nothing found in %d jobs", res.Jobs)
		}
		if kinds[c.Kind] != nil {
			t.Errorf("kind %s found twice", c.Kind)
		}
		kinds[c.Kind] = c
		t.Logf("%s: %v %+v: %s", c.Kind, c.Policy, c.Failures, c.Got)
		if want[c.Kind] == nil && !slices.Contains(also, c.Kind) {
			t.Errorf("kind %s is none of the planted deviations", c.Kind)
		}
	}
	t.Logf("%d jobs, %d shrink replays, %d kinds", res.Jobs, res.Shrinks, len(kinds))
	for kind, shows := range want {
		c := kinds[kind]
		if c == nil {
			t.Errorf("kind %s not found", kind)
			continue
		}
		if len(c.Failures) != 1 || c.Step != 1 || !shows(c) {
			t.Errorf("%s not shrunk to the one failure that shows it: %v %+v", kind, c.Policy, c.Failures)
		}
		for _, srv := range []struct {
			url  string
			want bool
		}{{bad.URL, true}, {good.URL, false}} {
			r := *c
			if got, _, err := live.ReplayCase(context.Background(), srv.url, &r); err != nil || got != srv.want || got && r.Kind != kind {
				t.Errorf("replay of %s: disagrees %v (want %v) in %q, err %v", kind, got, srv.want, r.Kind, err)
			}
		}
		// A local minimum: no smaller variant disagrees in the kind.
		for _, v := range live.ShrinkVariants(*c) {
			if got, _, err := live.ReplayCase(context.Background(), bad.URL, &v); err == nil && got {
				t.Errorf("%s: the smaller variant %v %+v still disagrees", kind, v.Policy, v.Failures)
			}
		}
	}
}

// A case file of an earlier build, whose kind "state" or "dead-letter"
// grouped every deviation of its field, replays as it did: judged in any
// kind of the group, it still disagrees with the faulty server (its kind
// now the one seen) and agrees with a correct one. A kind no build wrote
// is refused before any request, naming the kind.
func TestReplayCaseOfAnEarlierKind(t *testing.T) {
	bad := serveWith(t, ojsfault.DiscardCodeIgnored|ojsfault.DeadLetterCodeIgnored)
	good := serveWith(t, 0)
	for _, tc := range []struct{ file, kind string }{
		{`{"policy":{"initial_interval":"PT0.01S","jitter":false,"max_attempts":2},"failures":[{"type":"fz.fatal","code":"DISCARD"}],"step":1,"kind":"state"}`, "state:retried-not-discarded(DISCARD)"},
		{`{"policy":{"initial_interval":"PT0.01S","jitter":false,"max_attempts":1},"failures":[{"type":"fz.fatal","code":"DEAD_LETTER"}],"step":1,"kind":"dead-letter"}`, "dead-letter:discarded-not-dead-lettered(DEAD_LETTER)"},
	} {
		for _, srv := range []struct {
			url  string
			want bool
		}{{bad.URL, true}, {good.URL, false}} {
			var c live.FuzzCase
			if err := json.Unmarshal([]byte(tc.file), &c); err != nil {
				t.Fatal(err)
			}
			got, _, err := live.ReplayCase(context.Background(), srv.url, &c)
			if err != nil || got != srv.want || got && c.Kind != tc.kind {
				t.Errorf("%s: disagrees %v (want %v) in %q (want %q), err %v", tc.file, got, srv.want, c.Kind, tc.kind, err)
			}
		}
	}
	for _, kind := range []string{"state:retried", "state:retried-not-discarded(discard)", "dead-letter:retried-not-discarded(DISCARD)"} {
		c := &live.FuzzCase{Policy: map[string]any{}, Failures: []live.FuzzFailure{{Type: "t"}}, Kind: kind}
		_, _, err := live.ReplayCase(context.Background(), good.URL, c)
		if !errors.Is(err, live.ErrInvalidCase) || !strings.Contains(err.Error(), kind) {
			t.Errorf("kind %q: err %v, want ErrInvalidCase naming it", kind, err)
		}
	}
}

// A case ReplayCase cannot play is refused before any request, with an
// error naming what is wrong.
func TestReplayCaseRefusesAnUnplayableCase(t *testing.T) {
	many := make([]live.FuzzFailure, live.MaxCaseFailures+1)
	for _, c := range []*live.FuzzCase{
		nil,
		{Failures: []live.FuzzFailure{{Type: "t"}}},
		{Policy: map[string]any{}},
		{Policy: map[string]any{}, Failures: many},
	} {
		_, _, err := live.ReplayCase(context.Background(), "http://127.0.0.1:1", c)
		if !errors.Is(err, live.ErrInvalidCase) || !strings.Contains(err.Error(), "failures") {
			t.Errorf("case %+v: err %v, want ErrInvalidCase naming the failures", c, err)
		}
	}
}

// The run is bounded in time and in jobs, and cleans up what it can: on
// a server where every case disagrees at once (--all goes on), it stops
// at its budget or its job bound, pushed at most that many jobs, and
// leaves nothing pending and no dead letter; its statement counts what
// it left (finished jobs, which the binding cannot delete).
func TestFuzzServerBoundedAndCleansUp(t *testing.T) {
	for _, tc := range []struct {
		jobs   int
		budget time.Duration
	}{{40, time.Minute}, {100_000, 400 * time.Millisecond}} {
		ex := executor.New()
		srv := ojshttp.New(ex)
		ojsfault.Plant(srv, ojsfault.AttemptOffByOne|ojsfault.ExhaustLate)
		hs := httptest.NewServer(srv)
		start := time.Now()
		res, err := live.FuzzServer(context.Background(), hs.URL, tc.jobs, 3, tc.budget, live.WithFuzzAll(true))
		took := time.Since(start)
		hs.Close()
		ojsfault.Plant(srv, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Jobs > tc.jobs || ex.Len() > res.Jobs {
			t.Errorf("jobs %d, bound %d; the server holds %d", res.Jobs, tc.jobs, ex.Len())
		}
		if tc.jobs > 1000 && (res.Stopped != "its time ran out" || took > tc.budget+35*time.Second) {
			t.Errorf("budget %v: stopped %q after %v", tc.budget, res.Stopped, took)
		}
		waiting := ex.Count(executor.Filter{States: []executor.State{executor.Scheduled, executor.Pending, executor.Available, executor.Active, executor.Retryable}})
		if dead := ex.DeadLetterStats().Total; waiting != 0 || dead != 0 {
			t.Errorf("left %d jobs waiting and %d dead letters", waiting, dead)
		}
		// The server keeps what the run left behind and the jobs it
		// cancelled; it pushed what the run counted.
		var pushed, deleted, cancelled, held, finished, cancelled2, failed, unread, pending int
		var queues string
		_, err = fmt.Sscanf(res.Left, "cleanup: of %d jobs the run pushed (queues %s %d dead letters deleted, %d pending jobs cancelled; the server still holds %d as finished or cancelled (%d finished before the cleanup, %d cancelled by it), which the binding cannot delete; could not remove %d (%d not read, %d still pending",
			&pushed, &queues, &deleted, &cancelled, &held, &finished, &cancelled2, &failed, &unread, &pending)
		// What the statement says the server holds is what it holds: the
		// finished jobs and the ones the cleanup cancelled (which the
		// server keeps as cancelled), counted apart; it removed the rest.
		inState := func(s executor.State) int { return ex.Count(executor.Filter{States: []executor.State{s}}) }
		if err != nil || pushed != res.Jobs || held != ex.Len() || held != finished+cancelled || cancelled != cancelled2 ||
			cancelled > inState(executor.Cancelled) || failed != 0 || unread != 0 || pending != 0 {
			t.Errorf("cleanup statement %q (%v) against %d jobs played, %d held by the server (%d cancelled)", res.Left, err, res.Jobs, ex.Len(), inState(executor.Cancelled))
		}
	}
}
