package backoff_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// maxBelowOne is the largest float64 below 1, 1 - 2^-53.
const maxBelowOne = 0x1.fffffffffffffp-1

// ojsDefault is the OJS default policy's backoff: PT1S, 2.0, PT5M, jitter.
var ojsDefault = backoff.Config{Strategy: backoff.Exponential, Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true}

func mustNew(t testing.TB, c backoff.Config) *backoff.Backoff {
	t.Helper()
	b, err := backoff.New(c)
	if err != nil {
		t.Fatalf("New(%+v): %v", c, err)
	}
	return b
}

// checkBase checks Base and (without jitter) DelayAt/Delay/Bounds against
// want[i], the delay after attempt i+1.
func checkBase(t *testing.T, c backoff.Config, want []time.Duration) {
	t.Helper()
	b := mustNew(t, c)
	for i, w := range want {
		n := i + 1
		if got := b.Base(n); got != w {
			t.Errorf("Base(%d) = %v, want %v", n, got, w)
		}
		if c.Jitter {
			continue
		}
		if got := b.DelayAt(n, 0.9); got != w {
			t.Errorf("DelayAt(%d, 0.9) = %v, want %v", n, got, w)
		}
		if got := b.Delay(n, backoff.Fixed(0.3)); got != w {
			t.Errorf("Delay(%d, Fixed(0.3)) = %v, want %v", n, got, w)
		}
		if lo, hi := b.Bounds(n); lo != w || hi != w {
			t.Errorf("Bounds(%d) = [%v, %v], want [%v, %v]", n, lo, hi, w, w)
		}
	}
}

const s = time.Second

// Spec §3.1: none, PT5S: 5s for every retry (coefficient ignored).
func TestSpecNone(t *testing.T) {
	checkBase(t, backoff.Config{Strategy: backoff.None, Initial: 5 * s, Coefficient: 2, Max: 5 * time.Minute},
		[]time.Duration{5 * s, 5 * s, 5 * s, 5 * s})
	// Far beyond any table, still the constant.
	b := mustNew(t, backoff.Config{Strategy: backoff.None, Initial: 5 * s, Coefficient: 3.5, Max: time.Hour})
	for _, n := range []int{65, 1000, math.MaxInt} {
		if got := b.Base(n); got != 5*s {
			t.Errorf("Base(%d) = %v, want 5s", n, got)
		}
	}
}

// Spec §3.2: linear, PT5S: 5s, 10s, 15s, 20s.
func TestSpecLinear(t *testing.T) {
	checkBase(t, backoff.Config{Strategy: backoff.Linear, Initial: 5 * s, Coefficient: 2, Max: 5 * time.Minute},
		[]time.Duration{5 * s, 10 * s, 15 * s, 20 * s})
}

// Spec §3.3: exponential, PT1S, 2.0, PT5M: 1s .. 256s, then 512s capped at 300s.
func TestSpecExponential(t *testing.T) {
	checkBase(t, backoff.Config{Strategy: backoff.Exponential, Initial: s, Coefficient: 2, Max: 5 * time.Minute},
		[]time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 300 * s})
}

// Spec §3.4: polynomial, PT1S, 4.0, PT5M: 1s, 16s, 81s, 256s, 625s capped at 300s.
func TestSpecPolynomial(t *testing.T) {
	checkBase(t, backoff.Config{Strategy: backoff.Polynomial, Initial: s, Coefficient: 4, Max: 5 * time.Minute},
		[]time.Duration{1 * s, 16 * s, 81 * s, 256 * s, 300 * s})
}

// Spec §12.3: polynomial 15s * n^4 capped at PT1H: 15s, 240s, 1215s, 3840s→3600s, 9375s→3600s.
func TestSpecAggressivePolynomial(t *testing.T) {
	checkBase(t, backoff.Config{Strategy: backoff.Polynomial, Initial: 15 * s, Coefficient: 4, Max: time.Hour, Jitter: true},
		[]time.Duration{15 * s, 240 * s, 1215 * s, 3600 * s, 3600 * s})
}

// The OJS default policy: 1s 2s 4s ... 256s, then 300s (512s capped) from
// attempt 10 on, whatever the attempt number.
func TestDefaultPolicyTable(t *testing.T) {
	want := []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 300 * s, 300 * s, 300 * s}
	checkBase(t, ojsDefault, want)
	b := mustNew(t, ojsDefault)
	for _, n := range []int{20, 64, 65, 100, 1 << 40, math.MaxInt - 1, math.MaxInt} {
		if got := b.Base(n); got != 300*s {
			t.Errorf("Base(%d) = %v, want 5m0s", n, got)
		}
	}
}

// Spec §5.3: PT10S, 2.0, jitter, exponential (max PT5M): jitter ranges
// [5s,15s), [10s,30s), [20s,60s), [40s,120s), [80s,240s), and for attempt 6
// the base 320s is capped at 300s and the range capped to [150s, 300s].
func TestSpecJitter(t *testing.T) {
	b := mustNew(t, backoff.Config{Strategy: backoff.Exponential, Initial: 10 * s, Coefficient: 2, Max: 5 * time.Minute, Jitter: true})
	// r = 1 - 2^-10 is exact in binary: multiplier 1.4990234375, so the
	// delay is 1.5*base - base/1024.
	const rHigh = 1 - 1.0/1024
	tests := []struct {
		n              int
		base, lo, hi   time.Duration
		atHigh, atHalf time.Duration
	}{
		// The top of each range is open: the largest delay is 1ns short.
		{1, 10 * s, 5 * s, 15*s - 1, 15*s - 10*s/1024, 10 * s},
		{2, 20 * s, 10 * s, 30*s - 1, 30*s - 20*s/1024, 20 * s},
		{3, 40 * s, 20 * s, 60*s - 1, 60*s - 40*s/1024, 40 * s},
		{4, 80 * s, 40 * s, 120*s - 1, 120*s - 80*s/1024, 80 * s},
		{5, 160 * s, 80 * s, 240*s - 1, 240*s - 160*s/1024, 160 * s},
		{6, 300 * s, 150 * s, 300 * s, 300 * s, 300 * s},
		{7, 300 * s, 150 * s, 300 * s, 300 * s, 300 * s},
	}
	for _, tt := range tests {
		if got := b.Base(tt.n); got != tt.base {
			t.Errorf("Base(%d) = %v, want %v", tt.n, got, tt.base)
		}
		if lo, hi := b.Bounds(tt.n); lo != tt.lo || hi != tt.hi {
			t.Errorf("Bounds(%d) = [%v, %v], want [%v, %v]", tt.n, lo, hi, tt.lo, tt.hi)
		}
		if got := b.DelayAt(tt.n, 0); got != tt.lo {
			t.Errorf("DelayAt(%d, 0) = %v, want %v", tt.n, got, tt.lo)
		}
		if got := b.DelayAt(tt.n, 0.5); got != tt.atHalf {
			t.Errorf("DelayAt(%d, 0.5) = %v, want %v", tt.n, got, tt.atHalf)
		}
		if got := b.DelayAt(tt.n, rHigh); got != tt.atHigh {
			t.Errorf("DelayAt(%d, 1-2^-10) = %v, want %v", tt.n, got, tt.atHigh)
		}
		if got := b.DelayAt(tt.n, maxBelowOne); got != tt.hi {
			t.Errorf("DelayAt(%d, 1-2^-53) = %v, want %v", tt.n, got, tt.hi)
		}
		if got := b.Delay(tt.n, backoff.Fixed(rHigh)); got != tt.atHigh {
			t.Errorf("Delay(%d, Fixed(1-2^-10)) = %v, want %v", tt.n, got, tt.atHigh)
		}
	}
}

// Jitter truncates toward zero: 3ns * 1.25 = 3.75ns -> 3ns; 3ns * 0.5 = 1.5ns -> 1ns.
func TestJitterTruncates(t *testing.T) {
	b := mustNew(t, backoff.Config{Strategy: backoff.None, Initial: 3, Coefficient: 1, Max: 10, Jitter: true})
	if got := b.DelayAt(1, 0.75); got != 3 {
		t.Errorf("DelayAt(1, 0.75) = %d, want 3", got)
	}
	if got := b.DelayAt(1, 0); got != 1 {
		t.Errorf("DelayAt(1, 0) = %d, want 1", got)
	}
	// 1ns * 0.5 = 0.5ns truncates to 0: never negative.
	b = mustNew(t, backoff.Config{Strategy: backoff.None, Initial: 1, Coefficient: 1, Max: 1, Jitter: true})
	if lo, hi := b.Bounds(1); lo != 0 || hi != 1 {
		t.Errorf("Bounds(1) = [%d, %d], want [0, 1]", lo, hi)
	}
}

// r outside [0, 1) is clamped like Fixed clamps it.
func TestDelayAtClampsR(t *testing.T) {
	b := mustNew(t, backoff.Config{Strategy: backoff.None, Initial: 10 * s, Coefficient: 1, Max: time.Hour, Jitter: true})
	for _, tt := range []struct {
		r    float64
		want time.Duration
	}{
		{math.NaN(), 5 * s},
		{-1, 5 * s},
		{math.Inf(-1), 5 * s},
		{1, 15*s - 1}, // multiplier held below 1.5: [5s, 15s) is half-open
		{2, 15*s - 1},
		{math.Inf(1), 15*s - 1},
	} {
		if got := b.DelayAt(1, tt.r); got != tt.want {
			t.Errorf("DelayAt(1, %v) = %v, want %v", tt.r, got, tt.want)
		}
		if got := b.Delay(1, constSource(tt.r)); got != tt.want {
			t.Errorf("Delay(1, source returning %v) = %v, want %v", tt.r, got, tt.want)
		}
	}
}

// constSource is a misbehaving Source that returns its value unclamped.
type constSource float64

func (c constSource) Float64() float64 { return float64(c) }

func TestFixed(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{0, 0}, {0.25, 0.25}, {maxBelowOne, maxBelowOne},
		{1, maxBelowOne}, {7, maxBelowOne}, {math.Inf(1), maxBelowOne},
		{-0.5, 0}, {math.Inf(-1), 0}, {math.NaN(), 0},
	} {
		if got := backoff.Fixed(tt.in).Float64(); got != tt.want {
			t.Errorf("Fixed(%v).Float64() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// n < 1 is treated as 1.
func TestAttemptBelowOne(t *testing.T) {
	for _, c := range []backoff.Config{
		ojsDefault,
		{Strategy: backoff.Linear, Initial: 7, Coefficient: 1, Max: 100},
		{Strategy: backoff.Exponential, Initial: 3, Coefficient: 1.01, Max: 1 << 62},
	} {
		b := mustNew(t, c)
		for _, n := range []int{0, -1, math.MinInt} {
			if got := b.Base(n); got != c.Initial {
				t.Errorf("%v: Base(%d) = %v, want %v", c.Strategy, n, got, c.Initial)
			}
			if got, want := b.DelayAt(n, 0.5), b.DelayAt(1, 0.5); got != want {
				t.Errorf("%v: DelayAt(%d, 0.5) = %v, want %v", c.Strategy, n, got, want)
			}
		}
	}
}

// Non-integral coefficients: the powers below are exact in binary.
func TestNonIntegralCoefficient(t *testing.T) {
	// 1s * 1.5^(n-1): 1, 1.5, 2.25, 3.375, 5.0625 s.
	checkBase(t, backoff.Config{Strategy: backoff.Exponential, Initial: s, Coefficient: 1.5, Max: time.Hour},
		[]time.Duration{1000 * time.Millisecond, 1500 * time.Millisecond, 2250 * time.Millisecond, 3375 * time.Millisecond, 5062500 * time.Microsecond})
	// 1s * n^2.5: 1, 2^2.5 = 5.656854249...s (truncated), 4^2.5 = 32 s.
	b := mustNew(t, backoff.Config{Strategy: backoff.Polynomial, Initial: s, Coefficient: 2.5, Max: time.Hour})
	if got := b.Base(4); got != 32*s {
		t.Errorf("polynomial 2.5: Base(4) = %v, want 32s", got)
	}
	if got := b.Base(2); got < 5656854249 || got > 5656854250 {
		t.Errorf("polynomial 2.5: Base(2) = %d, want 5656854249 or 5656854250 (1e9 * 2^2.5 = 5656854249.49)", got)
	}
}

// Integer cases beyond the table are exact and saturate at Max.
func TestBeyondTable(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	lin := mustNew(t, backoff.Config{Strategy: backoff.Linear, Initial: 1, Coefficient: 1, Max: maxD})
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{64, 64}, {65, 65}, {1000, 1000}, {math.MaxInt, math.MaxInt64}} {
		if got := lin.Base(tt.n); got != tt.want {
			t.Errorf("linear 1ns: Base(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	lin2 := mustNew(t, backoff.Config{Strategy: backoff.Linear, Initial: 2, Coefficient: 1, Max: maxD})
	if got := lin2.Base(math.MaxInt); got != maxD {
		t.Errorf("linear 2ns: Base(MaxInt) = %d, want MaxInt64", got)
	}
	// (2^21-1)^3 = 2^63 - 3*2^42 + 3*2^21 - 1 fits; (2^21)^3 = 2^63 does not.
	cube := mustNew(t, backoff.Config{Strategy: backoff.Polynomial, Initial: 1, Coefficient: 3, Max: maxD})
	n := 1<<21 - 1
	want := time.Duration(math.MaxInt64 - 3<<42 + 3<<21)
	if got := cube.Base(n); got != want {
		t.Errorf("polynomial 3: Base(2^21-1) = %d, want %d", got, want)
	}
	if got := cube.Base(n + 1); got != maxD {
		t.Errorf("polynomial 3: Base(2^21) = %d, want MaxInt64", got)
	}
	if got := cube.Base(1000); got != 1e9 {
		t.Errorf("polynomial 3: Base(1000) = %d, want 1e9", got)
	}
	// Non-integral beyond the table: 1ns * 10000^1.5 = 1e6 ns, within float rounding.
	p15 := mustNew(t, backoff.Config{Strategy: backoff.Polynomial, Initial: 1, Coefficient: 1.5, Max: maxD})
	if got := p15.Base(10000); got != 1000000 && got != 999999 {
		t.Errorf("polynomial 1.5: Base(10000) = %d, want 1000000 (or 999999 by float rounding)", got)
	}
	// Exponential with a coefficient close to 1 needs the slow path; 1.01^(n-1) grows past 1h eventually.
	e := mustNew(t, backoff.Config{Strategy: backoff.Exponential, Initial: time.Millisecond, Coefficient: 1.01, Max: time.Hour})
	if got := e.Base(math.MaxInt); got != time.Hour {
		t.Errorf("exponential 1.01: Base(MaxInt) = %v, want 1h", got)
	}
	// ln(3.6e6)/ln(1.01) = 1517.18..., so attempt 1519 (1ms * 1.01^1518) is
	// capped and attempt 1518 (1.01^1517 ms, about 59.9 min) is not.
	if got := e.Base(1519); got != time.Hour {
		t.Errorf("exponential 1.01: Base(1519) = %v, want 1h", got)
	}
	if got := e.Base(1518); got >= time.Hour || got < 59*time.Minute {
		t.Errorf("exponential 1.01: Base(1518) = %v, want just under 1h", got)
	}
}

// Saturation at the extremes: never negative, never above Max, no panic.
func TestSaturation(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	cfgs := []backoff.Config{
		{Strategy: backoff.Exponential, Initial: maxD, Coefficient: math.MaxFloat64, Max: maxD, Jitter: true},
		{Strategy: backoff.Polynomial, Initial: maxD, Coefficient: math.MaxFloat64, Max: maxD, Jitter: true},
		{Strategy: backoff.Exponential, Initial: 1, Coefficient: math.MaxFloat64, Max: maxD, Jitter: true},
		{Strategy: backoff.Polynomial, Initial: 1, Coefficient: math.MaxFloat64, Max: maxD, Jitter: true},
		{Strategy: backoff.Exponential, Initial: 1, Coefficient: 1e300 + 0.5, Max: maxD},
		{Strategy: backoff.Polynomial, Initial: 1, Coefficient: 62.5, Max: maxD},
		{Strategy: backoff.Exponential, Initial: 1, Coefficient: math.Nextafter(1, 2), Max: maxD},
		{Strategy: backoff.Polynomial, Initial: 1, Coefficient: math.Nextafter(1, 2), Max: maxD},
		{Strategy: backoff.Linear, Initial: maxD, Coefficient: 1, Max: maxD, Jitter: true},
		{Strategy: backoff.None, Initial: maxD, Coefficient: 1, Max: maxD, Jitter: true},
	}
	for _, c := range cfgs {
		b := mustNew(t, c)
		for _, n := range []int{1, 2, 3, 63, 64, 65, 1 << 32, math.MaxInt - 1, math.MaxInt} {
			for _, r := range []float64{0, 0.5, maxBelowOne} {
				d := b.DelayAt(n, r)
				if d < 0 || d > c.Max {
					t.Errorf("%+v: DelayAt(%d, %v) = %d, outside [0, Max]", c, n, r, d)
				}
			}
		}
		// Attempt 1 is Initial for every strategy.
		if got := b.Base(1); got != c.Initial {
			t.Errorf("%+v: Base(1) = %d, want Initial", c, got)
		}
	}
	// Huge coefficients saturate from attempt 2 on.
	for _, st := range []backoff.Strategy{backoff.Exponential, backoff.Polynomial} {
		b := mustNew(t, backoff.Config{Strategy: st, Initial: 1, Coefficient: math.MaxFloat64, Max: maxD})
		if got := b.Base(2); got != maxD {
			t.Errorf("%v MaxFloat64: Base(2) = %d, want MaxInt64", st, got)
		}
	}
	// Jitter at the largest duration: 0.5 * 2^63 rounds to 2^62 in float64.
	b := mustNew(t, backoff.Config{Strategy: backoff.None, Initial: maxD, Coefficient: 1, Max: maxD, Jitter: true})
	if lo, hi := b.Bounds(1); lo != 1<<62 || hi != maxD {
		t.Errorf("Bounds(1) at MaxInt64 = [%d, %d], want [2^62, MaxInt64]", lo, hi)
	}
}

func TestZeroAndNil(t *testing.T) {
	var zero backoff.Backoff
	var nilB *backoff.Backoff
	for name, b := range map[string]*backoff.Backoff{"zero": &zero, "nil": nilB} {
		for _, n := range []int{-1, 0, 1, 5, 100, math.MaxInt} {
			if d := b.Base(n); d != 0 {
				t.Errorf("%s: Base(%d) = %v", name, n, d)
			}
			if d := b.DelayAt(n, 0.5); d != 0 {
				t.Errorf("%s: DelayAt(%d) = %v", name, n, d)
			}
			if d := b.Delay(n, nil); d != 0 {
				t.Errorf("%s: Delay(%d) = %v", name, n, d)
			}
			if lo, hi := b.Bounds(n); lo != 0 || hi != 0 {
				t.Errorf("%s: Bounds(%d) = %v, %v", name, n, lo, hi)
			}
		}
		if c := b.Config(); c != (backoff.Config{}) {
			t.Errorf("%s: Config() = %+v", name, c)
		}
		count := 0
		for _, d := range b.Schedule(3, nil) {
			count++
			if d != 0 {
				t.Errorf("%s: Schedule delay %v", name, d)
			}
		}
		if count != 3 {
			t.Errorf("%s: Schedule(3) yielded %d", name, count)
		}
	}
}

func TestConfigRoundTrip(t *testing.T) {
	b := mustNew(t, ojsDefault)
	if got := b.Config(); got != ojsDefault {
		t.Errorf("Config() = %+v, want %+v", got, ojsDefault)
	}
}

func TestNewErrors(t *testing.T) {
	valid := backoff.Config{Initial: s, Coefficient: 2, Max: time.Minute}
	tests := []struct {
		name  string
		mod   func(*backoff.Config)
		field string
		msg   string
	}{
		{"initial zero", func(c *backoff.Config) { c.Initial = 0 }, "Initial",
			"backoff: Initial (initial_interval): must be greater than zero, got 0s"},
		{"initial negative", func(c *backoff.Config) { c.Initial = -s }, "Initial",
			"backoff: Initial (initial_interval): must be greater than zero, got -1s"},
		{"coefficient below 1", func(c *backoff.Config) { c.Coefficient = 0.5 }, "Coefficient",
			"backoff: Coefficient (backoff_coefficient): must be at least 1, got 0.5"},
		{"coefficient zero", func(c *backoff.Config) { c.Coefficient = 0 }, "Coefficient",
			"backoff: Coefficient (backoff_coefficient): must be at least 1, got 0"},
		{"coefficient NaN", func(c *backoff.Config) { c.Coefficient = math.NaN() }, "Coefficient",
			"backoff: Coefficient (backoff_coefficient): must be a finite number, got NaN"},
		{"coefficient +Inf", func(c *backoff.Config) { c.Coefficient = math.Inf(1) }, "Coefficient",
			"backoff: Coefficient (backoff_coefficient): must be a finite number, got +Inf"},
		{"coefficient below 1 for none", func(c *backoff.Config) { c.Strategy = backoff.None; c.Coefficient = 0.99 }, "Coefficient",
			"backoff: Coefficient (backoff_coefficient): must be at least 1, got 0.99"},
		{"max below initial", func(c *backoff.Config) { c.Max = 500 * time.Millisecond }, "Max",
			"backoff: Max (max_interval): must be at least Initial (1s), got 500ms"},
		{"unknown strategy", func(c *backoff.Config) { c.Strategy = 9 }, "Strategy",
			"backoff: Strategy (backoff_strategy): must be Exponential, None, Linear or Polynomial, got Strategy(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.mod(&c)
			b, err := backoff.New(c)
			if err == nil || b != nil {
				t.Fatalf("New(%+v) = %v, %v; want nil, error", c, b, err)
			}
			if !errors.Is(err, backoff.ErrInvalidConfig) {
				t.Errorf("errors.Is(%v, ErrInvalidConfig) = false", err)
			}
			var ce *backoff.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("errors.As: %#v, want Field %q", ce, tt.field)
			}
			if err.Error() != tt.msg {
				t.Errorf("message\n got %q\nwant %q", err.Error(), tt.msg)
			}
			if got := errors.Is(err, backoff.ErrUnknownStrategy); got != (tt.field == "Strategy") {
				t.Errorf("errors.Is(err, ErrUnknownStrategy) = %v", got)
			}
		})
	}
}

// All problems are reported, one ConfigError per field.
func TestNewCollectsAll(t *testing.T) {
	_, err := backoff.New(backoff.Config{Strategy: 200, Coefficient: math.NaN(), Max: -1})
	if !errors.Is(err, backoff.ErrInvalidConfig) {
		t.Fatalf("errors.Is(%v, ErrInvalidConfig) = false", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T does not unwrap to a list", err)
	}
	var fields []string
	for _, e := range joined.Unwrap() {
		var ce *backoff.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *ConfigError", e)
		}
		fields = append(fields, ce.Field)
	}
	if got := strings.Join(fields, ","); got != "Strategy,Initial,Coefficient,Max" {
		t.Errorf("fields = %s, want Strategy,Initial,Coefficient,Max", got)
	}
	for _, name := range []string{"backoff_strategy", "initial_interval", "backoff_coefficient", "max_interval"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("message %q does not name %s", err, name)
		}
	}
}

// The zero Config is invalid; the boundary values are valid.
func TestNewBoundaries(t *testing.T) {
	if _, err := backoff.New(backoff.Config{}); err == nil {
		t.Error("New(Config{}) succeeded")
	}
	for _, c := range []backoff.Config{
		{Initial: 1, Coefficient: 1, Max: 1},
		{Initial: math.MaxInt64, Coefficient: math.MaxFloat64, Max: math.MaxInt64},
		{Strategy: backoff.Polynomial, Initial: s, Coefficient: 1, Max: s},
	} {
		if _, err := backoff.New(c); err != nil {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

func TestStrategyNames(t *testing.T) {
	for _, tt := range []struct {
		s    backoff.Strategy
		name string
	}{
		{backoff.Exponential, "exponential"}, {backoff.None, "none"},
		{backoff.Linear, "linear"}, {backoff.Polynomial, "polynomial"},
	} {
		if got := tt.s.String(); got != tt.name {
			t.Errorf("%d.String() = %q, want %q", tt.s, got, tt.name)
		}
		got, err := backoff.ParseStrategy(tt.name)
		if err != nil || got != tt.s {
			t.Errorf("ParseStrategy(%q) = %v, %v", tt.name, got, err)
		}
	}
	if var0 := backoff.Strategy(0); var0 != backoff.Exponential {
		t.Error("zero Strategy is not Exponential")
	}
	if got := backoff.Strategy(4).String(); got != "Strategy(4)" {
		t.Errorf("Strategy(4).String() = %q", got)
	}
	for _, bad := range []string{"", "Exponential", "NONE", "constant", " linear", "linear ", "poly"} {
		_, err := backoff.ParseStrategy(bad)
		if !errors.Is(err, backoff.ErrUnknownStrategy) || !errors.Is(err, backoff.ErrInvalidConfig) {
			t.Errorf("ParseStrategy(%q) error %v does not match ErrUnknownStrategy", bad, err)
		}
	}
	_, err := backoff.ParseStrategy("fibonacci")
	want := `backoff: Strategy (backoff_strategy): must be one of "none", "linear", "exponential", "polynomial", got "fibonacci"`
	if err == nil || err.Error() != want {
		t.Errorf("ParseStrategy(fibonacci) error\n got %v\nwant %s", err, want)
	}
}

func TestSchedule(t *testing.T) {
	c := ojsDefault
	c.Jitter = false
	b := mustNew(t, c)
	want := []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s}
	var got []time.Duration
	next := 1
	for n, d := range b.Schedule(5, nil) {
		if n != next {
			t.Fatalf("attempt %d, want %d", n, next)
		}
		next++
		got = append(got, d)
	}
	if len(got) != len(want) {
		t.Fatalf("Schedule(5) yielded %d delays, want 5", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delay %d = %v, want %v", i+1, got[i], want[i])
		}
	}
	// Early break stops the iteration.
	count := 0
	for n := range b.Schedule(1000, nil) {
		count++
		if n == 3 {
			break
		}
	}
	if count != 3 {
		t.Errorf("after break at 3 the loop ran %d times", count)
	}
	for range b.Schedule(0, nil) {
		t.Error("Schedule(0) yielded")
	}
	for range b.Schedule(-5, nil) {
		t.Error("Schedule(-5) yielded")
	}
	// With jitter and a Fixed source: base * 1.25 each time, last one capped.
	j := mustNew(t, ojsDefault)
	wantJ := []time.Duration{1250 * time.Millisecond, 2500 * time.Millisecond, 5 * s}
	i := 0
	for _, d := range j.Schedule(3, backoff.Fixed(0.75)) {
		if d != wantJ[i] {
			t.Errorf("jittered delay %d = %v, want %v", i+1, d, wantJ[i])
		}
		i++
	}
	// A huge k is fine: breaking early after the cap is reached.
	for n, d := range j.Schedule(math.MaxInt, backoff.Fixed(0)) {
		if n == 12 {
			if d != 150*s {
				t.Errorf("attempt 12 delay %v, want 150s", d)
			}
			break
		}
	}
}

// countingSource counts draws.
type countingSource struct{ n int }

func (c *countingSource) Float64() float64 { c.n++; return 0.5 }

// Without jitter the source is never consulted.
func TestDelaySourceUse(t *testing.T) {
	c := ojsDefault
	c.Jitter = false
	src := &countingSource{}
	b := mustNew(t, c)
	for n := 1; n <= 20; n++ {
		b.Delay(n, src)
	}
	if src.n != 0 {
		t.Errorf("source consulted %d times without jitter", src.n)
	}
	b = mustNew(t, ojsDefault)
	for n := 1; n <= 20; n++ {
		if got, want := b.Delay(n, src), b.Base(n); got != want {
			t.Errorf("Delay(%d, r=0.5) = %v, want Base %v", n, got, want)
		}
	}
	if src.n != 20 {
		t.Errorf("source consulted %d times for 20 jittered delays", src.n)
	}
}

// Random is safe for concurrent use (run with -race), returns values in
// [0, 1), and a nil Source means Random.
func TestRandomConcurrent(t *testing.T) {
	b := mustNew(t, ojsDefault)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := backoff.Random()
			for i := 0; i < 2000; i++ {
				n := i%15 + 1
				if r := src.Float64(); r < 0 || r >= 1 {
					errs <- "Random().Float64() out of [0,1)"
					return
				}
				lo, hi := b.Bounds(n)
				for _, d := range []time.Duration{b.Delay(n, nil), b.Delay(n, src)} {
					if d < lo || d > hi {
						errs <- "Delay outside Bounds"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The hot path allocates nothing.
func TestNoAllocs(t *testing.T) {
	b := mustNew(t, backoff.Config{Strategy: backoff.Exponential, Initial: s, Coefficient: 1.5, Max: time.Hour, Jitter: true})
	var src backoff.Source = backoff.Fixed(0.3)
	allocs := testing.AllocsPerRun(100, func() {
		for n := 1; n <= 100; n++ {
			_ = b.Delay(n, src)
			_ = b.Delay(n, nil)
			_ = b.DelayAt(n, 0.7)
			_, _ = b.Bounds(n)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocs per run, want 0", allocs)
	}
}
