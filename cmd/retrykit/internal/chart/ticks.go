package chart

import (
	"math"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
)

const day = 24 * time.Hour

// logTicks are the round durations a log-scale delay axis labels, one or
// two per decade.
var logTicks = []time.Duration{
	time.Nanosecond, 10 * time.Nanosecond, 100 * time.Nanosecond,
	time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond,
	time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond,
	time.Second, 10 * time.Second, time.Minute, 10 * time.Minute, time.Hour,
	day, 10 * day, 100 * day, 1000 * day, 10000 * day, 100000 * day,
}

// logRange returns round axis ends for values in [lo, hi] (lo > 0): the
// largest tick at or below lo and the smallest at or above hi, from the
// list or, past its end, powers of ten.
func logRange(lo, hi time.Duration) (time.Duration, time.Duration) {
	a, b := logTicks[0], logTicks[len(logTicks)-1]
	for _, t := range logTicks {
		if t <= lo {
			a = t
		}
	}
	for i := len(logTicks) - 1; i >= 0; i-- {
		if logTicks[i] >= hi {
			b = logTicks[i]
		}
	}
	if b <= a {
		b = logTicks[min(indexOf(a)+1, len(logTicks)-1)]
	}
	return a, max(b, a)
}

func indexOf(t time.Duration) int {
	for i, v := range logTicks {
		if v == t {
			return i
		}
	}
	return 0
}

// ticksIn returns the log ticks in [a, b], thinned to at most 10.
func ticksIn(a, b time.Duration) []time.Duration {
	var out []time.Duration
	for _, t := range logTicks {
		if t >= a && t <= b {
			out = append(out, t)
		}
	}
	for len(out) > 10 {
		var thin []time.Duration
		for i := 0; i < len(out); i += 2 {
			thin = append(thin, out[i])
		}
		out = thin
	}
	return out
}

// niceStep returns a round step (1, 2 or 5 times a power of ten) that
// splits span into at most n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// durationSteps are the round steps of a linear time axis.
var durationSteps = []time.Duration{
	time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, day, 7 * day, 30 * day, 365 * day,
}

// durationStep returns the smallest round step that splits span into at
// most n parts.
func durationStep(span time.Duration, n int) time.Duration {
	for _, s := range durationSteps {
		if span/s <= time.Duration(n) {
			return s
		}
	}
	return durationSteps[len(durationSteps)-1]
}

// formatOnAxis writes the label of tick d on a linear axis whose ticks are
// step apart, in the one unit that divides step exactly, so that the labels
// of one axis read alike (60s, 75s, 90s rather than 1m, 75s, 90s), using
// tenths of a second for sub-second steps that allow it (0.5s, 1s, 1.5s).
func formatOnAxis(d, step time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range tickUnits {
		switch {
		case step%u.u == 0 && d%u.u == 0:
			return strconv.FormatInt(int64(d/u.u), 10) + u.name
		case u.u == time.Second && (10*step)%u.u == 0 && (10*d)%u.u == 0:
			// Tenths of a second (0.5s, 1s, 1.5s) read better than 1500ms.
			return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
		}
	}
	return FormatDuration(d)
}

// tickUnits are the units of tick labels, largest first.
var tickUnits = []struct {
	u    time.Duration
	name string
}{{day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"}}

// FormatDuration writes a tick label: the largest unit that divides d
// exactly ("1d", "10m", "1h30m" is never produced by the tick lists),
// falling back to time.Duration's own form.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range tickUnits {
		if d%u.u == 0 {
			return strconv.FormatInt(int64(d/u.u), 10) + u.name
		}
	}
	return human.Exact(d)
}

// formatCount writes a count tick: 0, 500, 1500, 2k, 15k, 1.5M.
func formatCount(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e5) == 0:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e4 && math.Mod(v, 1e3) == 0:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
