package verify_test

import (
	"fmt"
	"testing"
	"time"
)

// injected describes a real implementation whose random draw the driver
// replaces with a given r, so its delays can be compared exactly.
type injected struct {
	profile string
	// upTo is the last attempt at which the real code is compared with
	// package profile (attempts 1..upTo, every draw in drawGrid).
	upTo int
	// delays asks the real code for the delay of each case, in nanoseconds.
	delays func(t *testing.T, cases []kase) []int64
	// older, when set, names attempts at which the installed version's
	// formula differs from the newer source the profile follows; vectors at
	// those attempts are logged and not compared (the reason says why).
	older  func(attempt int) bool
	reason string
	// who names the code that ran in mismatch messages ("" is "real
	// code"): the drift watch names the system, the version probed and the
	// pinned version.
	who string
}

// label is who, or "real code".
func (s injected) label() string {
	if s.who == "" {
		return "real code"
	}
	return s.who
}

func (s injected) comparable(attempt int) bool {
	return s.older == nil || !s.older(attempt)
}

type key struct {
	attempt int
	r       float64
}

// check runs the profile's delay and bounds vectors, then package profile's
// DelayAt and Bounds, against the real code in one driver call.
func (s injected) check(t *testing.T) {
	t.Helper()
	f := load(t, s.profile)
	want := map[key]bool{}
	var cases []kase
	add := func(attempt int, r float64) {
		k := key{attempt, r}
		if !want[k] {
			want[k] = true
			cases = append(cases, delayCase(attempt, r))
		}
	}
	skipped := 0
	for _, v := range f.Vectors {
		if (v.Kind == "delay" || v.Kind == "bounds") && !s.comparable(v.Attempt) {
			t.Logf("%s: attempt %d not compared: %s", v.ID, v.Attempt, s.reason)
			skipped++
		}
	}
	for _, v := range f.Of("delay") {
		if !s.comparable(v.Attempt) {
			continue
		}
		if v.Rand == nil {
			t.Fatalf("%s: the %s driver takes one draw per delay; give rand", v.ID, s.profile)
		}
		add(v.Attempt, *v.Rand)
	}
	for _, v := range f.Of("bounds") {
		if !s.comparable(v.Attempt) {
			continue
		}
		for _, r := range drawGrid {
			add(v.Attempt, r)
		}
	}
	for n := 1; n <= s.upTo; n++ {
		for _, r := range drawGrid {
			add(n, r)
		}
	}
	values := s.delays(t, cases)
	got := map[key]time.Duration{}
	for i, c := range cases {
		got[key{c.Attempt, *c.Rand}] = time.Duration(values[i])
	}

	checked := 0
	for _, v := range f.Of("delay") {
		if !s.comparable(v.Attempt) {
			continue
		}
		if g := got[key{v.Attempt, *v.Rand}]; g != time.Duration(v.DelayNS) {
			t.Errorf("%s: attempt %d, r=%v: %s gives %v (%d ns), vector says %v (%d ns)",
				v.ID, v.Attempt, *v.Rand, s.label(), g, int64(g), time.Duration(v.DelayNS), v.DelayNS)
		}
		checked++
	}
	for _, v := range f.Of("bounds") {
		if !s.comparable(v.Attempt) {
			continue
		}
		s.checkBounds(t, v.ID, v.Attempt, time.Duration(v.MinNS), time.Duration(v.MaxNS), got)
		checked++
	}
	t.Logf("%s: %d delay and bounds vectors checked against the %s (%d not comparable)", s.profile, checked, s.label(), skipped)

	t.Run("profile_delays", func(t *testing.T) {
		p := vectorProfile(t, s.profile)
		for n := 1; n <= s.upTo; n++ {
			for _, r := range drawGrid {
				if d, g := p.DelayAt(n, r), got[key{n, r}]; d != g {
					t.Errorf("profile.DelayAt(%d, %v) = %v (%d ns), %s gives %v (%d ns)", n, r, d, int64(d), s.label(), g, int64(g))
				}
			}
			lo, hi := p.Bounds(n)
			s.checkBounds(t, fmt.Sprintf("profile.Bounds(%d)", n), n, lo, hi, got)
		}
		t.Logf("%s: profile.DelayAt and profile.Bounds checked against the %s for attempts 1..%d at %d draws each", s.profile, s.label(), s.upTo, len(drawGrid))
	})
}

// checkBounds holds the real delays at attempt against [lo, hi]: the delay at
// r=0 is lo, the delay at the largest draw is hi (bounds are exact and
// reached), and every grid delay lies inside.
func (s injected) checkBounds(t *testing.T, id string, attempt int, lo, hi time.Duration, got map[key]time.Duration) {
	t.Helper()
	if g := got[key{attempt, 0}]; g != lo {
		t.Errorf("%s: attempt %d: %s: delay at r=0 is %v (%d ns), lower bound %v (%d ns)", id, attempt, s.label(), g, int64(g), lo, int64(lo))
	}
	if g := got[key{attempt, maxDraw}]; g != hi {
		t.Errorf("%s: attempt %d: %s: delay at the largest draw is %v (%d ns), upper bound %v (%d ns)", id, attempt, s.label(), g, int64(g), hi, int64(hi))
	}
	for _, r := range drawGrid {
		if g := got[key{attempt, r}]; g < lo || g > hi {
			t.Errorf("%s: attempt %d, r=%v: %s: delay %v outside [%v, %v]", id, attempt, r, s.label(), g, lo, hi)
		}
	}
}

// decisions checks the profile's decision vectors, and package profile's
// MaxAttempts, against retry answers from the real code: retry(n) reports
// whether the real system retries after attempt n failed.
func checkDecisions(t *testing.T, name string, attempts []int, retry func(t *testing.T, attempts []int) []bool) {
	t.Helper()
	checkDecisionsOf(t, name, "", attempts, retry)
}

// checkDecisionsOf is [checkDecisions] naming the code that ran as who in
// its messages ("" is "the real code").
func checkDecisionsOf(t *testing.T, name, who string, attempts []int, retry func(t *testing.T, attempts []int) []bool) {
	t.Helper()
	if who == "" {
		who = "the real code"
	}
	f := load(t, name)
	seen := map[int]bool{}
	var ask []int
	addAttempt := func(n int) {
		if !seen[n] {
			seen[n] = true
			ask = append(ask, n)
		}
	}
	for _, v := range f.Of("decision") {
		addAttempt(v.Attempt)
	}
	for _, n := range attempts {
		addAttempt(n)
	}
	answers := retry(t, ask)
	got := map[int]bool{}
	for i, n := range ask {
		got[n] = answers[i]
	}
	for _, v := range f.Of("decision") {
		if got[v.Attempt] != v.Retry {
			t.Errorf("%s: after attempt %d %s retries=%v, vector says %v", v.ID, v.Attempt, who, got[v.Attempt], v.Retry)
		}
	}
	if f.MaxAttempts != nil {
		m := *f.MaxAttempts
		if !got[m-1] && m > 1 {
			t.Errorf("%s: max_attempts %d, but %s does not retry after attempt %d", name, m, who, m-1)
		}
		if got[m] {
			t.Errorf("%s: max_attempts %d, but %s retries after attempt %d", name, m, who, m)
		}
	}
	t.Logf("%s: %d decision vectors checked against %s", name, len(f.Of("decision")), who)

	t.Run("profile_decisions", func(t *testing.T) {
		p := vectorProfile(t, name)
		for _, n := range ask {
			if want := p.MaxAttempts() == 0 || n < p.MaxAttempts(); want != got[n] {
				t.Errorf("profile %s: MaxAttempts() = %d says retry after attempt %d is %v; %s says %v", name, p.MaxAttempts(), n, want, who, got[n])
			}
		}
	})
}

// upTo returns 1..n.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}
