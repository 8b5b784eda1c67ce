package live

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ex(sent, recv time.Duration) *exchange {
	return &exchange{sent: t0.Add(sent), recv: t0.Add(recv)}
}

// TestClockWindow: the offset is narrowed by each timestamp to
// [ts - recv, ts - sent + 1ms], and a request's server-side window is its
// local interval shifted by that offset.
func TestClockWindow(t *testing.T) {
	c := &client{}
	if lo, hi, ok := c.window(ex(0, 1)); ok || lo != t0 || hi != t0.Add(1) {
		t.Fatalf("before any timestamp: [%v, %v] %v, want the local interval and false", lo, hi, ok)
	}
	// The server's clock runs 5s ahead; two exchanges of 2ms.
	c.observe(ex(0, 2*time.Millisecond), t0.Add(5*time.Second+time.Millisecond))
	c.observe(ex(10*time.Millisecond, 12*time.Millisecond), t0.Add(5*time.Second+10*time.Millisecond))
	// First: [5s-1ms, 5s+2ms]; second: [5s-2ms, 5s+1ms]; together [5s-1ms, 5s+1ms].
	if c.offLo != 5*time.Second-time.Millisecond || c.offHi != 5*time.Second+time.Millisecond {
		t.Fatalf("offset [%v, %v], want [4.999s, 5.001s]", c.offLo, c.offHi)
	}
	lo, hi, ok := c.window(ex(100*time.Millisecond, 101*time.Millisecond))
	if !ok || lo != t0.Add(5099*time.Millisecond) || hi != t0.Add(5102*time.Millisecond) {
		t.Fatalf("window [%v, %v]", lo.Sub(t0), hi.Sub(t0))
	}
	// A contradicting timestamp widens instead of emptying the window.
	c.observe(ex(0, time.Millisecond), t0.Add(time.Hour))
	if !c.inconsistentTS || c.offHi < time.Hour-time.Millisecond || c.offLo != 5*time.Second-time.Millisecond {
		t.Fatalf("after a contradiction: [%v, %v], flagged %v", c.offLo, c.offHi, c.inconsistentTS)
	}
}

// TestJudgeDelay: next_attempt_at passes when some instant of the
// request's server window plus a delay within [lo, hi] reaches it, within
// 1ms.
func TestJudgeDelay(t *testing.T) {
	e := &env{c: &client{offSet: true}, verdicts: map[string]*verdict{}} // zero offset
	x := ex(0, 2*time.Millisecond)                                       // server time of the FAIL: [0, 2ms]
	for _, tc := range []struct {
		next   time.Duration
		lo, hi time.Duration
		ok     bool
	}{
		{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, true},
		{22 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, true},
		{23 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, true},  // within the 1ms resolution
		{24 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, false}, // 2ms late even from the window's start
		{18 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, false}, // early
		{19 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, true},
		{63 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond, true},
		{64 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond, false},
	} {
		a := &nackAnswer{NextAttemptAt: t0.Add(tc.next).Format(time.RFC3339Nano)}
		bad, _ := e.judgeDelay("", x, a, tc.lo, tc.hi)
		if (bad == "") != tc.ok {
			t.Errorf("next %v, want %s: verdict %q", tc.next, span(tc.lo, tc.hi), bad)
		}
	}
	if bad, _ := e.judgeDelay("", x, &nackAnswer{}, 0, 0); !strings.Contains(bad, "no next_attempt_at") {
		t.Errorf("absent next_attempt_at: %q", bad)
	}
}

// TestLatencyFigureFewRetries: with fewer than 100 retries the figure
// says its p99 is the maximum.
func TestLatencyFigureFewRetries(t *testing.T) {
	e := &env{c: &client{}, cfg: &config{poll: time.Millisecond, lateBound: time.Second}, lat: []time.Duration{time.Millisecond, 2 * time.Millisecond}}
	if got := e.latency(); !strings.Contains(got, "p99 is the maximum") {
		t.Errorf("figure %q does not say p99 is the maximum", got)
	}
}

// TestLatencyFigure: p50, p90, p99 and max of the recorded latencies.
func TestLatencyFigure(t *testing.T) {
	e := &env{c: &client{}, cfg: &config{poll: time.Millisecond, lateBound: time.Second}}
	for i := 1; i <= 100; i++ {
		e.lat = append(e.lat, time.Duration(101-i)*time.Millisecond)
	}
	got := e.latency()
	for _, want := range []string{"100 retries", "p50 51ms", "p90 91ms", "p99 100ms", "max 100ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("figure %q lacks %q", got, want)
		}
	}
}

// TestEarlyDelivery: a delivery is early when the FETCH was answered,
// by the server's clock, more than 1ms before next_attempt_at; a
// started_at stamped before the due time inside an exchange that may have
// ended after it is not early.
func TestEarlyDelivery(t *testing.T) {
	e := &env{c: &client{offSet: true}, cfg: &config{}} // zero offset
	due := t0.Add(time.Second)
	at := func(id string, sent, recv, started time.Duration) *fetched {
		return &fetched{job: job{ID: id}, ex: &exchange{sent: due.Add(sent), recv: due.Add(recv)}, at: due.Add(started)}
	}
	e.judgeDelivery(at("a", -5*time.Millisecond, -3*time.Millisecond, -4*time.Millisecond), due, true) // answered 3ms early
	e.judgeDelivery(at("b", -5*time.Millisecond, -1*time.Millisecond, -4*time.Millisecond), due, true) // at most 1ms early: within resolution
	e.judgeDelivery(at("c", -5*time.Millisecond, 2*time.Millisecond, -4*time.Millisecond), due, true)  // stamped early, answered late
	e.judgeDelivery(at("d", 6*time.Millisecond, 8*time.Millisecond, 7*time.Millisecond), due, true)    // answer arrived 8ms late
	if len(e.early) != 1 || !strings.Contains(e.early[0], "job a") {
		t.Fatalf("early = %q, want job a only", e.early)
	}
	// The latency runs to the FETCH answer's arrival, not to started_at
	// (a server may stamp that before a long poll).
	if e.promoted != 3 || len(e.lat) != 3 || e.lat[2] != 8*time.Millisecond || e.lat[0] != 0 || e.lat[1] != 2*time.Millisecond {
		t.Fatalf("promoted %d, latencies %v", e.promoted, e.lat)
	}
}

// TestScenarioPolicies: every policy a scenario pushes is valid for
// retrykit's parser, so bounds never meets an invalid one.
func TestScenarioPolicies(t *testing.T) {
	for _, r := range []retry{
		{max: 4, initial: 20 * ms, coef: 2, maxIv: 50 * ms},
		{max: 2, initial: 40 * ms, coef: 2, maxIv: time.Second, jitter: true},
		{max: 2, initial: 60 * ms, coef: 2, maxIv: 60 * ms, jitter: true},
		{max: 3, initial: time.Second, coef: 2, maxIv: 5 * time.Minute, jitter: true},
	} {
		lo, hi := r.bounds(1)
		if lo <= 0 || hi < lo || hi > r.maxIv {
			t.Errorf("%+v: bounds [%v, %v]", r, lo, hi)
		}
	}
	// The exact values the checks use, from the spec's formulas: base
	// I·C^(n-1) capped at Max; jitter [0.5, 1.5) of it, capped again.
	r := retry{max: 4, initial: 20 * ms, coef: 2, maxIv: 50 * ms}
	for n, want := range map[int]time.Duration{1: 20 * ms, 2: 40 * ms, 3: 50 * ms} {
		if lo, hi := r.bounds(n); lo != want || hi != want {
			t.Errorf("attempt %d: [%v, %v], want %v", n, lo, hi, want)
		}
	}
	if lo, hi := (retry{max: 2, initial: 60 * ms, coef: 2, maxIv: 60 * ms, jitter: true}).bounds(1); lo != 30*ms || hi != 60*ms {
		t.Errorf("jitter with cap: [%v, %v], want [30ms, 60ms]", lo, hi)
	}
}
