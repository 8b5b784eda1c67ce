package profile

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Go retry libraries from the module proxy, each verified by verify/ against
// the release its profile pins.

// golibModels returns their profiles.
func golibModels() []*model {
	return []*model{
		configured(cenkaltiSettings, cenkaltiModel), configured(retryablehttpSettings, retryablehttpModel),
		configured(failsafeSettings, failsafeModel), configured(retryGoSettings, retryGoModel),
		configured(goRetrySettings, goRetryModel),
	}
}

// reversed maps a draw r in [0, 1) to maxBelowOne - r: for a library whose
// delay falls as its random number rises, so that the profile's delay
// rises with r (the draws 0 and maxBelowOne still give the two bounds).
func reversed(r float64) float64 { return maxBelowOne - unit(r) }

// durationOf converts a float number of nanoseconds to a Duration as Go's
// time.Duration(f) does for values it can hold, truncating toward zero;
// beyond them it saturates, and a negative value (a timer that fires at
// once) is 0.
func durationOf(f float64) time.Duration { return nanos(f) }

const cenkaltiRef = "https://github.com/cenkalti/backoff/blob/v5.0.3/"

var cenkaltiSettings = []setting{
	{key: "InitialInterval", kind: kDuration, def: "500ms", lo: 0, hi: math.MaxInt64, help: "ExponentialBackOff.InitialInterval, the first envelope"},
	{key: "RandomizationFactor", kind: kFloat, def: "0.5", lo: 0, hi: 1e6, help: "ExponentialBackOff.RandomizationFactor: the delay is drawn from cur * (1 ± factor)"},
	{key: "Multiplier", kind: kFloat, def: "1.5", lo: -1e6, hi: 1e6, help: "ExponentialBackOff.Multiplier, the envelope's growth"},
	{key: "MaxInterval", kind: kDuration, def: "60s", lo: 0, hi: math.MaxInt64, help: "ExponentialBackOff.MaxInterval, the envelope's cap (before the randomization)"},
	{key: "MaxTries", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "WithMaxTries: total attempts; 0 is no limit (Retry then stops by MaxElapsedTime, 15m by default)"},
}

// cenkaltiEnvelope is ExponentialBackOff's currentInterval before the n-th
// NextBackOff: Initial, then incrementCurrentInterval's
// cur >= Max/Multiplier ? Max : time.Duration(cur * Multiplier) each step.
func cenkaltiEnvelope(n int, ini, mx time.Duration, mult float64) time.Duration {
	cur := ini
	for i := 1; i < min(n, maxEnvelopeSteps); i++ {
		next := mx
		if !(float64(cur) >= float64(mx)/mult) {
			next = durationOf(float64(cur) * mult)
		}
		if next == cur {
			break
		}
		cur = next
	}
	return cur
}

func cenkaltiModel(c conf) (*model, error) {
	ini, f, mult, mx, tries := c.dur("InitialInterval"), c.float("RandomizationFactor"), c.float("Multiplier"), c.dur("MaxInterval"), c.int("MaxTries")
	exh, term := "MaxTries 0: no attempt limit; Retry stops once time since the start plus the next delay exceeds MaxElapsedTime (15m by default), which depends on how long attempts take and is not modelled", "Retry returns the last error"
	if tries > 0 {
		exh = fmt.Sprintf("WithMaxTries(%d): Retry stops when numTries >= %[1]d (retry.go 93), so at most %[1]d attempts (MaxElapsedTime, 15m by default, may stop it sooner)", tries)
	}
	return &model{
		name:    "cenkalti",
		release: "5.0.3",
		system:  "cenkalti/backoff v5 (Go), ExponentialBackOff with Retry",
		version: "github.com/cenkalti/backoff/v5 v5.0.3",
		source:  cenkaltiRef + "exponential.go (NewExponentialBackOff 57-72, NextBackOff 83-91, incrementCurrentInterval 94-101, getRandomValueFromInterval 106-118); " + cenkaltiRef + "retry.go (Retry 68-139)",
		summary: fmt.Sprintf("cur * (1 ± %s), cur = min(%v * %s^(attempt-1), %v) (truncated each step); %s", fmtNum(f), ini, fmtNum(mult), mx, attemptsText(int(tries))),
		formula: fmt.Sprintf("cur starts at InitialInterval %v; after each NextBackOff cur = cur >= MaxInterval/Multiplier ? MaxInterval %v : time.Duration(float64(cur) * %s); "+
			"delay = time.Duration(cur - %s*cur + r * (2*%[4]s*cur + 1)) (getRandomValueFromInterval; cur itself when the factor is 0)", ini, mx, fmtNum(mult), fmtNum(f)),
		draw:         map[bool]string{true: "rand.Float64() = r", false: ""}[f > 0],
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  int(tries),
		onExhaustion: policy.Discard,
		jitter:       f > 0,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := cenkaltiEnvelope(n, ini, mx, mult)
			if f == 0 {
				return cur
			}
			delta := f * float64(cur)
			lo, hi := float64(cur)-delta, float64(cur)+delta
			return durationOf(lo + d.next()*(hi-lo+1))
		},
	}, nil
}

const retryablehttpRef = "https://github.com/hashicorp/go-retryablehttp/blob/v0.7.8/client.go"

var retryablehttpSettings = []setting{
	{key: "RetryWaitMin", kind: kDuration, def: "1s", lo: 0, hi: math.MaxInt64, help: "Client.RetryWaitMin, the first wait"},
	{key: "RetryWaitMax", kind: kDuration, def: "30s", lo: 0, hi: math.MaxInt64, help: "Client.RetryWaitMax, the cap (a Retry-After header is not capped)"},
	{key: "RetryMax", kind: kInt, def: "4", lo: 0, hi: math.MaxInt32, clamp: true, help: "Client.RetryMax: retries after the first attempt; below 0 retries nothing (remain <= 0)"},
}

func retryablehttpModel(c conf) (*model, error) {
	lo, hi, rm := c.dur("RetryWaitMin"), c.dur("RetryWaitMax"), c.int("RetryMax")
	ra, hasRA := c.retryAfter, c.hasRetryAfter
	formula := fmt.Sprintf("attemptNum = attempt - 1 (the loop index i, client.go 689, 771); mult = math.Pow(2, attemptNum) * float64(RetryWaitMin %v); "+
		"sleep = time.Duration(mult); if float64(sleep) != mult || sleep > RetryWaitMax %v: sleep = RetryWaitMax (DefaultBackoff 551-564)", lo, hi)
	summary := fmt.Sprintf("min(%v * 2^(attempt-1), %v), no jitter", lo, hi)
	if hasRA {
		formula += fmt.Sprintf("; a 429 or 503 response with Retry-After %v: sleep = %[1]v, uncapped (parseRetryAfterHeader 578-607)", ra)
		summary = fmt.Sprintf("Retry-After %v on a 429 or 503, uncapped", ra)
	}
	return &model{
		name:         "retryablehttp",
		release:      "0.7.8",
		system:       "hashicorp/go-retryablehttp (Go), Client with DefaultBackoff",
		version:      "github.com/hashicorp/go-retryablehttp v0.7.8",
		source:       retryablehttpRef + " (defaults 49-51; Do loop 689-790: remain := RetryMax - i at 761; DefaultBackoff 551-564; parseRetryAfterHeader 578-607)",
		summary:      fmt.Sprintf("%s; %d attempts, then the request fails", summary, rm+1),
		formula:      formula,
		draw:         "",
		exhaustion:   fmt.Sprintf("RetryMax %d: after the loop index i = attempt - 1 reaches %[1]d (remain = RetryMax - i <= 0) no retry, so %d attempts", rm, rm+1),
		terminal:     "Do returns an error \"giving up after N attempt(s)\" (no ErrorHandler set)",
		maxAttempts:  int(rm + 1),
		onExhaustion: policy.Discard,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			if hasRA {
				return ra
			}
			mult := math.Pow(2, float64(n-1)) * float64(lo)
			if !(mult < 0x1p63) {
				return hi // time.Duration(mult) cannot hold it: float64(sleep) != mult
			}
			if sleep := time.Duration(mult); sleep <= hi {
				return sleep
			}
			return hi
		},
	}, nil
}

const failsafeRef = "https://github.com/failsafe-go/failsafe-go/blob/v0.9.8/"

var failsafeSettings = []setting{
	{key: "MaxRetries", kind: kInt, def: "2", lo: -1, hi: math.MaxInt32, help: "WithMaxRetries: retries after the first attempt (2 by default: 3 attempts); -1 is no limit"},
	{key: "Delay", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "WithDelay / WithBackoff's delay: the first wait (0 by default: no wait)"},
	{key: "MaxDelay", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "WithBackoff's maxDelay: with it the wait grows by DelayFactor up to MaxDelay; 0 keeps Delay fixed"},
	{key: "DelayFactor", kind: kFloat, def: "2", lo: -1e6, hi: 1e6, help: "WithBackoffFactor's delayFactor (WithBackoff uses 2)"},
	{key: "Jitter", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64 / 2, help: "WithJitter: the wait moves by up to ± Jitter (wins over JitterFactor)"},
	{key: "JitterFactor", kind: kFloat, def: "0", lo: 0, hi: 1e6, help: "WithJitterFactor: the wait is multiplied by 1 ± JitterFactor"},
}

// failsafeEnvelope is the executor's lastDelay for the n-th retry:
// Delay, then min(time.Duration(float64(last) * DelayFactor), MaxDelay)
// while MaxDelay is set (retryexecutor.go getFixedOrRandomDelay).
func failsafeEnvelope(n int, delay, mx time.Duration, factor float64) time.Duration {
	cur := delay
	if mx == 0 {
		return cur
	}
	for i := 1; i < min(n, maxEnvelopeSteps); i++ {
		next := min(durationOf(float64(cur)*factor), mx)
		if next == cur {
			break
		}
		cur = next
	}
	return cur
}

func failsafeModel(c conf) (*model, error) {
	mr, dl, mx, fac, jit, jf := c.int("MaxRetries"), c.dur("Delay"), c.dur("MaxDelay"), c.float("DelayFactor"), c.dur("Jitter"), c.float("JitterFactor")
	ma, exh := int(mr+1), fmt.Sprintf("MaxRetries %d: the policy is exceeded when failedAttempts > %[1]d (retryexecutor.go OnFailure), so %d attempts", mr, mr+1)
	if mr < 0 {
		ma, exh = 0, "MaxRetries -1: no limit by attempts (WithMaxDuration, not modelled, may stop it)"
	}
	formula := fmt.Sprintf("d = Delay %v", dl)
	summary := fmt.Sprintf("%v flat", dl)
	if mx != 0 {
		formula = fmt.Sprintf("d = Delay %v, then after each retry d = min(time.Duration(float64(d) * %s), MaxDelay %v)", dl, fmtNum(fac), mx)
		summary = fmt.Sprintf("min(%v * %s^(attempt-1), %v)", dl, fmtNum(fac), mx)
	}
	hasJitter := dl != 0 && (jit != 0 || jf != 0)
	draw := ""
	switch {
	case !hasJitter:
	case jit != 0:
		formula += fmt.Sprintf("; if d != 0: d += time.Duration((1 - 2*R) * %v) (RandomDelay)", jit)
		summary += fmt.Sprintf(" ± %v", jit)
		draw = "rand.Float64() = R = 1 - 2**-53 - r (the wait falls as R rises)"
	default:
		formula += fmt.Sprintf("; if d != 0: d = time.Duration(float64(d) * (1 + (1 - 2*R) * %s)) (RandomDelayFactor)", fmtNum(jf))
		summary += fmt.Sprintf(" * (1 ± %s)", fmtNum(jf))
		draw = "rand.Float64() = R = 1 - 2**-53 - r (the wait falls as R rises)"
	}
	formula += "; delay = max(0, d)"
	return &model{
		name:    "failsafe",
		release: "0.9.8",
		system:  "failsafe-go (Go), retrypolicy",
		version: "github.com/failsafe-go/failsafe-go v0.9.8",
		source: failsafeRef + "retrypolicy/retry.go (defaultMaxRetries 2 at 14; NewBuilder 204-211; WithBackoff 287-289); " + failsafeRef + "retrypolicy/retryexecutor.go (getDelay 130-142, getFixedOrRandomDelay 144-159, adjustForMaxDuration 161-166, OnFailure); " +
			failsafeRef + "internal/util/util.go (RandomDelay 155-158, RandomDelayFactor 160-163, ApplyJitter 165-172)",
		summary:      fmt.Sprintf("%s; %s, then ExceededError", summary, attemptsText(ma)),
		formula:      formula,
		draw:         draw,
		exhaustion:   exh,
		terminal:     "the execution returns retrypolicy.ExceededError wrapping the last result and error",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       hasJitter,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := failsafeEnvelope(n, dl, mx, fac)
			if !hasJitter || cur == 0 {
				return cur
			}
			R := reversed(d.next())
			if jit != 0 {
				add := int64((1 - R*2) * float64(jit))
				return time.Duration(max(sat.AddInt(int64(cur), add), 0))
			}
			return durationOf(float64(cur) * (1 + (1-R*2)*jf))
		},
	}, nil
}

const retryGoRef = "https://github.com/avast/retry-go/blob/v5.1.1/"

var retryGoSettings = []setting{
	{key: "Attempts", kind: kInt, def: "10", lo: 0, hi: math.MaxInt32, help: "Attempts: total attempts; 0 retries until success"},
	{key: "Delay", kind: kDuration, def: "100ms", lo: math.MinInt64, hi: math.MaxInt64, help: "Delay: the base delay (a negative one is 0)"},
	{key: "MaxJitter", kind: kDuration, def: "100ms", lo: 0, hi: math.MaxInt64, help: "MaxJitter: RandomDelay adds rand.Int63n(MaxJitter)"},
	{key: "MaxDelay", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "MaxDelay: the cap of the whole delay; 0 is none"},
	{key: "DelayType", kind: kEnum, def: "combine", enum: []string{"combine", "backoff", "fixed", "random", "full_jitter"},
		help: "DelayType: combine (the default CombineDelay(BackOffDelay, RandomDelay)), backoff (BackOffDelay), fixed (FixedDelay), random (RandomDelay), full_jitter (FullJitterBackoffDelay)"},
}

func retryGoModel(c conf) (*model, error) {
	att, dl, mj, md, typ := c.int("Attempts"), max(c.dur("Delay"), 0), c.dur("MaxJitter"), c.dur("MaxDelay"), c.str("DelayType")
	// newRetrierCore: maxBackOffN = bits.Len64(MaxInt64) - bits.Len64(Delay) (Delay 1ns when 0).
	maxN := 63 - bits.Len64(uint64(max(dl, 1)))
	backoffDelay := func(n int) time.Duration { return dl << uint(min(n-1, maxN)) }
	random := func(r float64) time.Duration {
		if mj == 0 {
			return 0
		}
		return time.Duration(randInt(r, int64(mj)))
	}
	var formula, summary string
	jitter := false
	switch typ {
	case "combine":
		formula = fmt.Sprintf("BackOffDelay: Delay %v << min(attempt - 1, %d); RandomDelay: rand.Int63n(MaxJitter %v); the sum saturates at MaxInt64", dl, maxN, mj)
		summary = fmt.Sprintf("%v * 2^(attempt-1) + [0, %v)", dl, mj)
		jitter = mj > 0
	case "backoff":
		formula, summary = fmt.Sprintf("BackOffDelay: Delay %v << min(attempt - 1, %d)", dl, maxN), fmt.Sprintf("%v * 2^(attempt-1)", dl)
	case "fixed":
		formula, summary = fmt.Sprintf("FixedDelay: Delay %v", dl), fmt.Sprintf("%v flat", dl)
	case "random":
		formula, summary = fmt.Sprintf("RandomDelay: rand.Int63n(MaxJitter %v)", mj), fmt.Sprintf("[0, %v)", mj)
		jitter = mj > 0
	case "full_jitter":
		formula = fmt.Sprintf("FullJitterBackoffDelay: ceiling = float64(Delay %v) * 2^attempt, capped at MaxDelay when set; rand.Int63n(int64(ceiling))", dl)
		summary = fmt.Sprintf("[0, %v * 2^attempt)", dl)
		jitter = dl > 0
	}
	if md > 0 {
		formula += fmt.Sprintf("; then min(delay, MaxDelay %v) (computeDelay)", md)
		summary += fmt.Sprintf(", capped at %v", md)
	}
	exh := fmt.Sprintf("Attempts %d: no wait after attempt %[1]d (isLastAttempt: n == attempts - 1)", att)
	if att == 0 {
		exh = "Attempts 0: retried until success"
	}
	return &model{
		name:    "retry_go",
		release: "5.1.1",
		system:  "avast/retry-go v5 (Go), Retrier.Do",
		version: "github.com/avast/retry-go/v5 v5.1.1",
		source: retryGoRef + "options.go (defaults 86-96, maxBackOffN 104-116, BackOffDelay 201-208, RandomDelay 216-222, CombineDelay 225-240, FullJitterBackoffDelay 245-265); " +
			retryGoRef + "retry.go (n++ before computeDelay(n) 280-282, isLastAttempt 302-304, MaxDelay 478-484)",
		summary:      fmt.Sprintf("%s; %s, then the errors are returned", summary, attemptsText(int(att))),
		formula:      formula,
		draw:         map[bool]string{true: "rand.Int63n(m) = floor(r * m)", false: ""}[jitter],
		exhaustion:   exh,
		terminal:     "Do returns a retry.Error listing every attempt's error",
		maxAttempts:  int(att),
		onExhaustion: policy.Discard,
		jitter:       jitter,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			var v time.Duration
			switch typ {
			case "combine":
				v = time.Duration(sat.AddInt(int64(backoffDelay(n)), int64(random(d.next()))))
			case "backoff":
				v = backoffDelay(n)
			case "fixed":
				v = dl
			case "random":
				v = random(d.next())
			case "full_jitter":
				if dl <= 0 {
					return 0
				}
				ceil := float64(dl) * math.Pow(2, float64(n))
				if md > 0 && ceil > float64(md) {
					ceil = float64(md)
				}
				top := int64(math.MaxInt64)
				if ceil < float64(math.MaxInt64) {
					top = int64(ceil)
				}
				v = time.Duration(randInt(d.next(), top))
			}
			if md > 0 && v > md {
				v = md
			}
			return v
		},
	}, nil
}

const goRetryRef = "https://github.com/sethvargo/go-retry/blob/v0.5.0/"

var goRetrySettings = []setting{
	{key: "backoff", kind: kEnum, def: "exponential", enum: []string{"exponential", "fibonacci", "constant"}, help: "NewExponential, NewFibonacci or NewConstant"},
	{key: "base", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "the backoff's base (its constant for NewConstant); more than 0"},
	{key: "jitter", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64 / 2, help: "WithJitter(j): ± j, applied first"},
	{key: "jitter_percent", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "WithJitterPercent(j): ± j % (at most 100), applied second"},
	{key: "full_jitter", kind: kBool, def: "false", help: "WithFullJitter: rand.Int64N(delay), applied third"},
	{key: "capped_duration", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "WithCappedDuration: the cap, applied after the jitters; 0 is none"},
	{key: "max_retries", kind: kInt, def: "-1", lo: -1, hi: math.MaxInt32, help: "WithMaxRetries: retries after the first attempt, applied last; -1 is none"},
}

// goRetryBase is the n-th Next of the base backoff: NewExponential's
// base << (n-1) (wrapping, as Go's shift does) and NewFibonacci's running
// sum, each MaxInt64 from the first value that is not positive on (the
// attempt counter stops there); NewConstant's base.
func goRetryBase(kind string, base time.Duration, n int) time.Duration {
	switch kind {
	case "constant":
		return base
	case "exponential":
		for k := 0; k < min(n, 65); k++ {
			var v int64
			if k < 64 {
				v = int64(uint64(base) << uint(k))
			}
			if v <= 0 {
				return maxDuration
			}
			if k == n-1 {
				return time.Duration(v)
			}
		}
		return maxDuration
	}
	a, b := time.Duration(0), base
	for i := 1; i <= n; i++ {
		next := a + b
		if next <= 0 {
			return maxDuration
		}
		a, b = b, next
	}
	return b
}

func goRetryModel(c conf) (*model, error) {
	kind, base, j, jp, fj, cp, mr := c.str("backoff"), c.dur("base"), c.dur("jitter"), min(c.int("jitter_percent"), 100), c.bool("full_jitter"), c.dur("capped_duration"), c.int("max_retries")
	formula := map[string]string{
		"exponential": fmt.Sprintf("v = base %v << (attempt - 1) (wrapping; MaxInt64 once it is not positive)", base),
		"fibonacci":   fmt.Sprintf("v = fib * base %v: %[1]v, 2x, 3x, 5x, 8x, ... (MaxInt64 once the sum overflows)", base),
		"constant":    fmt.Sprintf("v = %v", base),
	}[kind]
	summary := map[string]string{"exponential": fmt.Sprintf("%v * 2^(attempt-1)", base), "fibonacci": fmt.Sprintf("%v * fib(attempt+1)", base), "constant": fmt.Sprintf("%v flat", base)}[kind]
	var drawTexts []string
	if j > 0 {
		formula += fmt.Sprintf("; WithJitter: v = addClamp(v, rand.Uint64N(2*%v) - %[1]v)", j)
		summary += fmt.Sprintf(" ± %v", j)
		drawTexts = append(drawTexts, "rand.Uint64N(2j) = floor(r * 2j)")
	}
	if jp > 0 {
		formula += fmt.Sprintf("; WithJitterPercent: top = rand.Int64N(%d) - %d; v = time.Duration(float64(v) * (1 - top/100))", 2*jp, jp)
		summary += fmt.Sprintf(" ± %d%%", jp)
		drawTexts = append(drawTexts, "rand.Int64N(2j) = 2j - 1 - floor(r * 2j) (the wait falls as it rises)")
	}
	if fj {
		formula += "; WithFullJitter: v = rand.Int64N(v)"
		summary = "[0, " + summary + ")"
		drawTexts = append(drawTexts, "rand.Int64N(v) = floor(r * v)")
	}
	if cp > 0 {
		formula += fmt.Sprintf("; WithCappedDuration: min(v, %v)", cp)
		summary += fmt.Sprintf(", capped at %v", cp)
	}
	ma, exh := 0, "no WithMaxRetries: Do retries a RetryableError until the context ends"
	if mr >= 0 {
		ma, exh = int(mr+1), fmt.Sprintf("WithMaxRetries(%d): Next stops after %[1]d retries, so %d attempts", mr, mr+1)
	}
	draw := ""
	for i, s := range drawTexts {
		if i > 0 {
			draw += "; "
		}
		draw += fmt.Sprintf("draw %d: %s", i+1, s)
	}
	return &model{
		name:    "go_retry",
		release: "0.5.0",
		system:  "sethvargo/go-retry (Go), " + map[string]string{"exponential": "NewExponential", "fibonacci": "NewFibonacci", "constant": "NewConstant"}[kind],
		version: "github.com/sethvargo/go-retry v0.5.0",
		source: goRetryRef + "backoff_exponential.go (Next: base << attempt); " + goRetryRef + "backoff_fibonacci.go (Next: the running sum); " +
			goRetryRef + "backoff.go (WithJitter, addClamp, WithJitterPercent, WithFullJitter, WithMaxRetries, WithCappedDuration)",
		summary:      fmt.Sprintf("%s; %s (only errors wrapped in RetryableError are retried)", summary, attemptsText(ma)),
		formula:      formula,
		draw:         draw,
		exhaustion:   exh,
		terminal:     "Do returns the last error",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       len(drawTexts) > 0,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			v := goRetryBase(kind, base, n)
			if j > 0 {
				diff := randInt(d.next(), int64(2*j)) - int64(j)
				switch {
				case diff > 0 && int64(v) > math.MaxInt64-diff:
					v = maxDuration
				default:
					v = time.Duration(max(int64(v)+diff, 0))
				}
			}
			if jp > 0 {
				top := (2*jp - 1 - randInt(d.next(), 2*jp)) - jp
				v = durationOf(float64(v) * (1 - float64(top)/100))
			}
			if fj && v > 0 {
				v = time.Duration(randInt(d.next(), int64(v)))
			}
			if cp > 0 && v > cp {
				v = cp
			}
			return v
		},
	}, nil
}
