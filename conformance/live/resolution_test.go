package live_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

// slowAnswers is a transport that hands the checker each answer to a
// request of path late by d, as a busy host does: the delay window of
// every FAIL (path /workers/nack) widens by d, or the FETCHes
// (/workers/fetch) poll d apart, deterministically.
type slowAnswers struct {
	next http.RoundTripper
	path string
	d    time.Duration
}

func (s slowAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if strings.HasSuffix(r.URL.Path, s.path) {
		time.Sleep(s.d)
	}
	return res, err
}

// statusOf returns each check's status, "inconclusive" for a check not
// run for that reason.
func statusOf(rep *conformance.Report) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		out[r.ID] = r.Status.String()
	}
	for _, u := range rep.NotRun {
		out[u.ID] = "not run"
		if strings.HasPrefix(u.Reason, "inconclusive") {
			out[u.ID] = "inconclusive"
		}
	}
	return out
}

// TestBusyHostNeverPassesADelayFault: a server whose every delay is 1.5×
// the spec's (20 ms answered as 30 ms, 40 ms as 60 ms, the 50 ms cap as
// 75 ms) fails the delay checks when the checker can time them; with
// each FAIL answer reaching the checker 30 ms late the windows are 30 ms
// wide and hold the spec's delays too, and the checks, which must
// resolve half their delay (10 to 25 ms), are inconclusive with the
// reason: never passed. A correct server behind the same transport fails
// nothing.
func TestBusyHostNeverPassesADelayFault(t *testing.T) {
	ids := []string{"http-next-attempt-at", "http-cap", "http-partial-coefficient"}
	run := func(fault ojsfault.Params, slow time.Duration) *conformance.Report {
		t.Helper()
		srv := ojshttp.New(executor.New())
		ojsfault.PlantParams(srv, fault)
		hs := httptest.NewServer(srv)
		defer hs.Close()
		hc := &http.Client{Transport: slowAnswers{http.DefaultTransport, "/workers/nack", slow}}
		rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0), live.WithHTTPClient(hc), live.WithIDs(ids...))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return rep
	}
	factor := ojsfault.Params{TimeFactor: 1.5}
	// timed as finely as this host allows: a failure, or inconclusive on
	// a host busy enough
	for id, st := range statusOf(run(factor, 0)) {
		if st != "fail" && st != "inconclusive" {
			t.Errorf("delays 1.5× the spec's, FAIL answers on time: %s is %s, want fail (or inconclusive)", id, st)
		}
	}
	rep := run(factor, 30*time.Millisecond)
	status := statusOf(rep)
	for _, id := range ids {
		if status[id] != "inconclusive" {
			t.Errorf("delays 1.5× the spec's, FAIL answers 30 ms late: %s is %q, want inconclusive", id, status[id])
		}
	}
	for _, u := range rep.NotRun {
		if !strings.Contains(u.Reason, "host too busy") || !strings.Contains(u.Reason, "must resolve") {
			t.Errorf("%s: reason %q does not say the host was too busy for what the check must resolve", u.ID, u.Reason)
		}
	}
	if !hasPrefix(rep.Figures, "timing resolution: ") || len(rep.Warnings) == 0 {
		t.Errorf("no resolution figure or warning: figures %q, warnings %q", rep.Figures, rep.Warnings)
	}
	// a correct server: a loaded host is no failing server either
	ok := run(ojsfault.Params{}, 30*time.Millisecond)
	if !ok.OK() {
		t.Errorf("a correct server behind late FAIL answers: %q", bad(ok))
	}
}

func hasPrefix(l []string, p string) bool {
	for _, s := range l {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestBusyHostNeverPassesAnEarlyRetry: a server that hands every retry
// out at half its delay (next_attempt_at right) fails http-not-early when
// the checker polls every 2 ms; with each FETCH answer reaching the
// checker 30 ms late the polls are 30 ms apart, longer than half of
// every delay awaited (20 to 50 ms), so the early retries are fetched
// after their time: the check is inconclusive, saying why (or fails, when
// a poll did see one early), never passed.
func TestBusyHostNeverPassesAnEarlyRetry(t *testing.T) {
	ids := []string{"http-next-attempt-at", "http-not-early"}
	run := func(slow time.Duration) map[string]string {
		t.Helper()
		srv := ojshttp.New(executor.New())
		ojsfault.Plant(srv, ojsfault.EarlyRetry)
		defer ojsfault.Plant(srv, 0)
		hs := httptest.NewServer(srv)
		defer hs.Close()
		hc := &http.Client{Transport: slowAnswers{http.DefaultTransport, "/workers/fetch", slow}}
		rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0), live.WithHTTPClient(hc), live.WithIDs(ids...))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, u := range rep.NotRun {
			t.Logf("not run: %s: %s", u.ID, u.Reason)
		}
		return statusOf(rep)
	}
	if st := run(0)["http-not-early"]; st != "fail" && st != "inconclusive" {
		t.Errorf("early retries, FETCHes on time: http-not-early is %q, want fail (or inconclusive)", st)
	}
	// the first FETCH after a FAIL is not slowed: when it reaches the
	// server more than half a delay late (a busy -race run), the early
	// retry is fetched early and the check rightly fails
	if st := run(30 * time.Millisecond)["http-not-early"]; st != "inconclusive" && st != "fail" {
		t.Errorf("early retries, FETCH answers 30 ms late: http-not-early is %q, want inconclusive (or fail)", st)
	}
}

// slowFirst hands the checker the first n answers to requests of path
// late by d, the others at once: a busy moment that passes.
type slowFirst struct {
	next http.RoundTripper
	path string
	d    time.Duration
	n    *atomic.Int64
}

func (s slowFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if strings.HasSuffix(r.URL.Path, s.path) && s.n.Add(-1) >= 0 {
		time.Sleep(s.d)
	}
	return res, err
}

// TestBusyMomentIsObservedAgain: a correct server whose first four FAIL
// answers (the whole lifecycle of http-next-attempt-at and http-cap)
// reach the checker 30 ms late: the two checks, unresolved, are played
// again, and pass on the second look (unless this host is busy then
// too), which the figure names.
func TestBusyMomentIsObservedAgain(t *testing.T) {
	hs := httptest.NewServer(ojshttp.New(executor.New()))
	defer hs.Close()
	var n atomic.Int64
	n.Store(4)
	hc := &http.Client{Transport: slowFirst{http.DefaultTransport, "/workers/nack", 30 * time.Millisecond, &n}}
	rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0), live.WithHTTPClient(hc), live.WithDialectProbe(false),
		live.WithIDs("http-next-attempt-at", "http-cap"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// a host busy for the second look too leaves them inconclusive
	status := statusOf(rep)
	for _, id := range []string{"http-next-attempt-at", "http-cap"} {
		if status[id] != "pass" && status[id] != "inconclusive" {
			t.Errorf("%s is %q after a busy moment, want pass on the second look; not run %+v", id, status[id], rep.NotRun)
		}
	}
	if !hasPrefix(rep.Figures, "timing resolution: ") || !strings.Contains(strings.Join(rep.Figures, "\n"), "observed again for it: http-cap, http-next-attempt-at") {
		t.Errorf("figures %q do not name the checks observed again", rep.Figures)
	}
}

// TestInconclusivePassesStillContradictModels: with FAIL answers 30 ms
// late, the matching checks still pass: their subject is the state a
// matched error leads to, which a wide delay window does not blur, so
// they are not held to the timing resolution (RK-395), and what they
// observed excludes a model. A server that reads "auth.*" as the bare
// prefix "auth" fails http-prefix-boundary, which regex-match reproduces
// too; http-exact-literal ("a.b" does not match "axb") and
// http-match-glob, retried as the spec says, contradict it, so
// regex-match is never named.
func TestInconclusivePassesStillContradictModels(t *testing.T) {
	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, ojsfault.PrefixNoBoundary)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	hc := &http.Client{Transport: slowAnswers{http.DefaultTransport, "/workers/nack", 30 * time.Millisecond}}
	rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0), live.WithHTTPClient(hc),
		live.WithIDs("http-prefix-boundary", "http-exact-literal", "http-match-glob"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	status := statusOf(rep)
	if status["http-prefix-boundary"] != "fail" {
		t.Fatalf("http-prefix-boundary is %q, want fail; statuses %v", status["http-prefix-boundary"], status)
	}
	for _, id := range []string{"http-exact-literal", "http-match-glob"} {
		if status[id] != "pass" {
			t.Errorf("%s is %q behind slow FAIL answers, want pass (a matching check is not held to the timing resolution)", id, status[id])
		}
	}
	for _, c := range rep.Causes {
		if c.Reproduced {
			t.Errorf("named %s (%q): the matching checks' passes contradict it", c.Class, c.IDs)
		}
	}
}
