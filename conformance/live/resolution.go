// The timing resolution of a run: how finely this host observed the
// server's delays, and the delay checks whose pass needs a finer one.

package live

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/retrykit/retrykit/conformance"
)

// A delay is known within a window: next_attempt_at minus the instant of
// the failure, which lies somewhere between the FAIL's send and its
// answer, shifted by the server clock's offset, itself known within a
// window (RK-110). On a busy host the round trips stretch and the window
// widens; a delay off from the spec's by less than the window can then
// fall inside it and pass. So every delay judged inside its bounds is
// held against the deviation its check must resolve (mustResolve): a
// window as wide as that makes the check's pass inconclusive, never OK
// (docs/decisions.md RK-395). A failure stands: a window that lies
// outside the bounds is outside them however wide it is.

// resolutionLog is what a run measured of its own timing resolution;
// env.mu guards it.
type resolutionLog struct {
	windows   []time.Duration // the width of each delay window judged
	timerLate []time.Duration // how late a timer of this host fired, sampled during the checks
	judged    map[judgedDelay]*windowCount
	// the retries awaited, those polled closely enough before their
	// next_attempt_at to see one handed out early by half its delay
	// (notePolls), and the widest gap left before a due time
	polled, pollResolved int
	pollGap              time.Duration
	again                []string // the checks observed a second time (unresolved)
	// coarsePasses are the checks judgeResolution made inconclusive:
	// they passed, their windows too wide for a pass to prove the delay
	coarsePasses []string
	// only, once unresolved has run, holds the checks observed again:
	// the windows of other checks are then not judged (their first play
	// judged them)
	only map[string]bool
}

// judgedDelay is one delay of a check: the spec's bounds it was judged
// against. Several jobs of a check with the same bounds (the jitter
// checks fail 8 to 64 jobs under one policy) observe the same delay
// again.
type judgedDelay struct {
	check    string
	wlo, whi time.Duration
}

// windowCount counts the windows of one judged delay, those narrower
// than it must resolve apart, and keeps the widest.
type windowCount struct {
	n, narrow int
	widest    time.Duration
}

// conclusive reports whether the windows c counts resolve their delay:
// all of them narrow, or at least minRepeated of them observed and half
// narrow (the delay is the same on every job, so the narrow ones see a
// deviation the wide ones might hide).
func (c *windowCount) conclusive() bool {
	return c.narrow == c.n || c.n >= minRepeated && 2*c.narrow >= c.n
}

// minRepeated is how many observations of one delay let the narrow half
// of them judge it.
const minRepeated = 4

// maxResolutionSamples bounds each list of resolutionLog.
const maxResolutionSamples = 100_000

// timerSample is the timer the run sets again and again while its checks
// play, to see how late this host fires it.
const timerSample = 5 * time.Millisecond

// mustResolve is the deviation a delay judged against the spec's bounds
// [wlo, whi] must show: half the middle of the range, at least twice the
// timestamps' millisecond. A delay half again as long or half as long
// (a time factor of 1.5 or 0.5; after attempt 2 a coefficient of 1 for
// 2; an exponent off by one) is then seen: a window narrower than this
// (less the millisecond of next_attempt_at) cannot hold both the spec's
// delay and such a one.
func mustResolve(wlo, whi time.Duration) time.Duration {
	return max(wlo/4+whi/4, 2*resolution)
}

// noteWindow records a delay window of width w judged against [wlo, whi]
// for check ("" for a delay only read, not judged).
func (e *env) noteWindow(check string, w, wlo, whi time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.res.windows) < maxResolutionSamples {
		e.res.windows = append(e.res.windows, w)
	}
	if check == "" || e.res.only != nil && !e.res.only[check] {
		return
	}
	if e.res.judged == nil {
		e.res.judged = map[judgedDelay]*windowCount{}
	}
	k := judgedDelay{check, wlo, whi}
	c := e.res.judged[k]
	if c == nil {
		if len(e.res.judged) >= maxResolutionSamples {
			return
		}
		c = &windowCount{}
		e.res.judged[k] = c
	}
	c.n++
	if w+resolution < mustResolve(wlo, whi) {
		c.narrow++
	}
	c.widest = max(c.widest, w)
}

// notePolls records how finely a retry due at due (next_attempt_at, on
// the server's clock), awaited from began, was polled: a retry handed
// out early becomes fetchable between the last FETCH that found nothing
// (sent at lastEmpty; zero when none did) and the one that fetched it,
// so an early delivery by half the delay is seen only when that FETCH
// reached the server no earlier than half the delay before due. On a
// busy host the polls stretch apart and an early retry is fetched after
// its time, as if on time.
func (e *env) notePolls(began, lastEmpty, due time.Time) {
	e.c.mu.Lock()
	off := e.c.offLo
	e.c.mu.Unlock()
	need := due.Sub(began.Add(off)) / 2
	gap := due.Sub(began.Add(off))
	if !lastEmpty.IsZero() {
		gap = due.Sub(lastEmpty.Add(off))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.res.polled++
	if !lastEmpty.IsZero() && gap <= need {
		e.res.pollResolved++
	}
	e.res.pollGap = max(e.res.pollGap, gap)
}

// sampleTimers measures, until stop is called, how late a timer of
// timerSample fires on this host: a busy CPU fires it late, and the same
// business stretches the round trips the delays are timed by.
func (e *env) sampleTimers() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(timerSample)
		defer t.Stop()
		for {
			set := time.Now()
			t.Reset(timerSample)
			select {
			case <-done:
				return
			case <-t.C:
			}
			late := time.Since(set) - timerSample
			e.mu.Lock()
			if len(e.res.timerLate) < maxResolutionSamples {
				e.res.timerLate = append(e.res.timerLate, max(late, 0))
			}
			e.mu.Unlock()
		}
	}()
	return func() { close(done); <-finished }
}

// unresolved returns the checks that passed while a delay of theirs was
// not resolved (see windowCount.conclusive), and forgets their verdicts
// and windows, so that their scenarios can observe them again; the
// figure of the run names them.
func (e *env) unresolved() map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	again := map[string]bool{}
	for k, c := range e.res.judged {
		if v := e.verdicts[k.check]; !c.conclusive() && v != nil && v.status == conformance.StatusPass {
			again[k.check] = true
		}
	}
	for k := range e.res.judged {
		if again[k.check] {
			delete(e.res.judged, k)
		}
	}
	for c := range again {
		delete(e.verdicts, c)
		e.res.again = append(e.res.again, c)
	}
	// a scenario played again also observes checks that were resolved:
	// their windows of the second play are not counted (see noteWindow)
	e.res.only = again
	slices.Sort(e.res.again)
	return again
}

// judgeResolution makes inconclusive the passes of delay checks that a
// window too wide judged (see noteWindow), with the reason, and returns
// the figure of the run's resolution and, when some check was made
// inconclusive, a warning for the report.
func (e *env) judgeResolution() (figure, warning string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	timers := quantiles(e.res.timerLate)
	worst := map[string]judgedDelay{} // check → its delay least resolved
	for k, c := range e.res.judged {
		if c.conclusive() {
			continue
		}
		w, ok := worst[k.check]
		if !ok || float64(c.widest)/float64(mustResolve(k.wlo, k.whi)) > float64(e.res.judged[w].widest)/float64(mustResolve(w.wlo, w.whi)) {
			worst[k.check] = k
		}
	}
	var made []string
	for check, k := range worst {
		v := e.verdicts[check]
		if v == nil || v.status != conformance.StatusPass {
			continue // a failure stands; an error or a check not run says why itself
		}
		c := e.res.judged[k]
		v.status, v.reason = conformance.StatusUnknown, ""
		v.notRun = fmt.Sprintf("inconclusive: host too busy: %d of %d delays of %s were observed only within windows of up to %v (their FAIL's round trip and the server clock's uncertainty; this host's timers fired up to %v late), and this check must resolve %v",
			c.n-c.narrow, c.n, span(k.wlo, k.whi), c.widest.Round(10*time.Microsecond), timers.max.Round(10*time.Microsecond), mustResolve(k.wlo, k.whi))
		made = append(made, check)
	}
	slices.Sort(made)
	e.res.coarsePasses = made
	w := quantiles(e.res.windows)
	if w.n == 0 {
		figure = "timing resolution: no delay was judged"
	} else {
		figure = fmt.Sprintf("timing resolution: delays observed within windows (FAIL round trip and server clock uncertainty) of p50 %v, p99 %v, max %v over %d delays; a delay check must resolve half its delay",
			w.p50.Round(10*time.Microsecond), w.p99.Round(10*time.Microsecond), w.max.Round(10*time.Microsecond), w.n)
	}
	if timers.n > 0 {
		figure += fmt.Sprintf("; this host's %v timers fired late by p50 %v, p99 %v, max %v", timerSample,
			timers.p50.Round(10*time.Microsecond), timers.p99.Round(10*time.Microsecond), timers.max.Round(10*time.Microsecond))
	}
	if e.res.polled > 0 {
		figure += fmt.Sprintf("; %d of %d retries polled within half their delay before their next_attempt_at (widest gap %v)", e.res.pollResolved, e.res.polled, e.res.pollGap.Round(10*time.Microsecond))
	}
	if len(e.res.again) > 0 {
		figure += fmt.Sprintf("; observed again for it: %s", strings.Join(e.res.again, ", "))
	}
	if len(made) > 0 {
		figure += fmt.Sprintf("; %d delay check(s) inconclusive for it: %s", len(made), strings.Join(made, ", "))
		warning = fmt.Sprintf("this host was too busy to time %d delay check(s) as finely as they must resolve (%s): they are inconclusive, not passed; run again on a quieter host", len(made), strings.Join(made, ", "))
	}
	return figure, warning
}

// spread is the p50, p99 and maximum of n durations.
type spread struct {
	n             int
	p50, p99, max time.Duration
}

// quantiles returns the spread of ds (which it does not change).
func quantiles(ds []time.Duration) spread {
	if len(ds) == 0 {
		return spread{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return spread{n: len(s), p50: at(0.5), p99: at(0.99), max: s[len(s)-1]}
}
