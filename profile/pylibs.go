package profile

import (
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// Python retry libraries and job queues from Debian's packages, each
// verified by verify/ against the installed release its profile pins.

// pyModels returns their profiles.
func pyModels() []*model {
	return []*model{
		configured(tenacitySettings, tenacityModel), configured(pyBackoffSettings, pyBackoffModel),
		configured(rqSettings, rqModel),
	}
}

// pySeconds converts a Python float number of seconds (what time.sleep
// is given) to a Duration, truncating, saturating.
func pySeconds(x float64) time.Duration { return seconds(x) }

// pyPow is base ** n as Python computes it for the exponential waits:
// exact for whole bases (Python's ints do not overflow; the result is
// only compared with a float, and saturates the Duration anyway), a float
// power otherwise, with an overflow read as +Inf.
func pyPow(base float64, n int) float64 {
	return math.Pow(base, float64(n))
}

const tenacityRef = "https://github.com/jd/tenacity/blob/8.2.1/tenacity/"

var tenacitySettings = []setting{
	{key: "wait", kind: kEnum, def: "wait_none", enum: []string{"wait_none", "wait_fixed", "wait_exponential", "wait_random_exponential", "wait_exponential_jitter"},
		help: "the wait strategy; wait_none (tenacity's default) retries at once"},
	{key: "fixed", kind: kFloat, def: "0", lo: 0, hi: 1e12, help: "wait_fixed(wait): seconds"},
	{key: "multiplier", kind: kFloat, def: "1", lo: 0, hi: 1e12, help: "wait_exponential / wait_random_exponential multiplier"},
	{key: "exp_base", kind: kFloat, def: "2", lo: 0, hi: 1e6, help: "exp_base of the exponential waits"},
	{key: "min", kind: kFloat, def: "0", lo: 0, hi: 1e12, help: "wait_exponential / wait_random_exponential min, seconds"},
	{key: "max", kind: kFloat, def: "4611686018427387903.5", lo: 0, hi: 4611686018427387903.5, help: "max of the exponential waits, seconds (MAX_WAIT = sys.maxsize / 2)"},
	{key: "initial", kind: kFloat, def: "1", lo: 0, hi: 1e12, help: "wait_exponential_jitter initial, seconds"},
	{key: "jitter", kind: kFloat, def: "1", lo: 0, hi: 1e12, help: "wait_exponential_jitter jitter: random.uniform(0, jitter) seconds added"},
	{key: "stop_after_attempt", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "stop=stop_after_attempt(N): total attempts; 0 is stop_never, tenacity's default"},
}

func tenacityModel(c conf) (*model, error) {
	w, fixed, mult, base, lo, hi, ini, jit, stop := c.str("wait"), c.float("fixed"), c.float("multiplier"), c.float("exp_base"), c.float("min"),
		c.float("max"), c.float("initial"), c.float("jitter"), c.int("stop_after_attempt")
	exp := func(n int) float64 { return mult * pyPow(base, n-1) }
	var formula, summary, draw string
	jitter := false
	switch w {
	case "wait_none":
		formula, summary = "wait_none(): 0 seconds (wait.py 57-61)", "0 s (retried at once)"
	case "wait_fixed":
		formula, summary = fmt.Sprintf("wait_fixed(%s): %[1]s seconds (wait.py 47-54)", fmtNum(fixed)), fmtNum(fixed)+" s flat"
	case "wait_exponential":
		formula = fmt.Sprintf("attempt_number = attempt; max(max(0, min %s), min(%s * %s ** (attempt - 1), max %s)) seconds (wait.py 157-163)", fmtNum(lo), fmtNum(mult), fmtNum(base), fmtNum(hi))
		summary = fmt.Sprintf("min(%s * %s^(attempt-1), %s) s, at least %s", fmtNum(mult), fmtNum(base), fmtNum(hi), fmtNum(lo))
	case "wait_random_exponential":
		formula = fmt.Sprintf("high = max(max(0, %s), min(%s * %s ** (attempt - 1), %s)); random.uniform(0, high) seconds (wait.py 192-194)", fmtNum(lo), fmtNum(mult), fmtNum(base), fmtNum(hi))
		summary = fmt.Sprintf("uniform(0, min(%s * %s^(attempt-1), %s)) s (full jitter)", fmtNum(mult), fmtNum(base), fmtNum(hi))
		draw, jitter = "random.uniform(0, high) = high * r", true
	case "wait_exponential_jitter":
		formula = fmt.Sprintf("max(0, min(%s * %s ** (attempt - 1) + random.uniform(0, %s), %s)) seconds (wait.py 221-228)", fmtNum(ini), fmtNum(base), fmtNum(jit), fmtNum(hi))
		summary = fmt.Sprintf("min(%s * %s^(attempt-1) + uniform(0, %s), %s) s", fmtNum(ini), fmtNum(base), fmtNum(jit), fmtNum(hi))
		draw, jitter = "random.uniform(0, jitter) = jitter * r", jit > 0
	}
	exh, term := "stop_never (tenacity's default): retried until it succeeds", "none (with a stop: RetryError, or the last exception with reraise=True)"
	if stop > 0 {
		exh, term = fmt.Sprintf("stop_after_attempt(%d): stops when attempt_number >= %[1]d (stop.py 84-91)", stop), "tenacity.RetryError wrapping the last attempt (reraise=False)"
	}
	return &model{
		name:         "tenacity",
		release:      "8.2.1",
		system:       "tenacity (Python), @retry with " + w,
		version:      "tenacity 8.2.1 (Debian python3-tenacity 8.2.1-1)",
		source:       tenacityRef + "wait.py (wait_fixed 47-54, wait_none 57-61, wait_exponential 132-163, wait_random_exponential 166-194, wait_exponential_jitter 197-228); " + tenacityRef + "stop.py (stop_after_attempt 84-91); " + tenacityRef + "__init__.py (defaults stop_never, wait_none 193-194)",
		summary:      fmt.Sprintf("%s; %s", summary, attemptsText(int(stop))),
		formula:      formula,
		draw:         draw,
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  int(stop),
		onExhaustion: policy.Discard,
		jitter:       jitter,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			switch w {
			case "wait_fixed":
				return pySeconds(fixed)
			case "wait_exponential":
				return pySeconds(max(max(0, lo), min(exp(n), hi)))
			case "wait_random_exponential":
				high := max(max(0, lo), min(exp(n), hi))
				return pySeconds(0 + (high-0)*d.next())
			case "wait_exponential_jitter":
				j := 0 + (jit-0)*d.next()
				r := ini*pyPow(base, n-1) + j
				if math.IsInf(r, 1) || math.IsNaN(r) {
					r = hi // OverflowError: result = self.max
				}
				return pySeconds(max(0, min(r, hi)))
			}
			return 0
		},
	}, nil
}

const pyBackoffRef = "https://github.com/litl/backoff/blob/v2.2.1/backoff/"

var pyBackoffSettings = []setting{
	{key: "wait_gen", kind: kEnum, def: "expo", enum: []string{"expo", "fibo", "constant"}, help: "the wait generator: backoff.expo (the README's), backoff.fibo or backoff.constant"},
	{key: "base", kind: kFloat, def: "2", lo: 0, hi: 1e6, help: "expo base"},
	{key: "factor", kind: kFloat, def: "1", lo: 0, hi: 1e12, help: "expo factor, seconds"},
	{key: "max_value", kind: kFloat, def: "0", lo: 0, hi: 1e12, help: "expo / fibo max_value, seconds; 0 is None (no cap)"},
	{key: "interval", kind: kFloat, def: "1", lo: 0, hi: 1e12, help: "constant interval, seconds"},
	{key: "jitter", kind: kEnum, def: "full_jitter", enum: []string{"full_jitter", "random_jitter", "None"}, help: "on_exception jitter: full_jitter (the default) uniform(0, value); random_jitter value + random(); None"},
	{key: "max_tries", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "on_exception max_tries: total attempts; 0 is None (no limit)"},
}

func pyBackoffModel(c conf) (*model, error) {
	gen, base, factor, mv, iv, jit, mt := c.str("wait_gen"), c.float("base"), c.float("factor"), c.float("max_value"), c.float("interval"), c.str("jitter"), c.int("max_tries")
	// value is the n-th value the generator yields (n = attempt).
	value := func(n int) float64 {
		switch gen {
		case "constant":
			return iv
		case "fibo":
			a, b := 1.0, 1.0
			for i := 1; i < n; i++ {
				if mv > 0 && a >= mv {
					return mv
				}
				a, b = b, a+b
				if math.IsInf(a, 1) {
					break
				}
			}
			if mv > 0 && a >= mv {
				return mv
			}
			return a
		}
		a := factor * pyPow(base, n-1)
		if mv > 0 && !(a < mv) {
			return mv
		}
		return a
	}
	genText := map[string]string{
		"expo":     fmt.Sprintf("value = %s * %s ** (attempt - 1), or max_value once it is not below it (_wait_gen.py 24-31)", fmtNum(factor), fmtNum(base)),
		"fibo":     "value = 1, 1, 2, 3, 5, ... by attempt, or max_value once it is not below it (_wait_gen.py 43-52)",
		"constant": fmt.Sprintf("value = interval %s (_wait_gen.py 64-72)", fmtNum(iv)),
	}[gen]
	if mv > 0 {
		genText += fmt.Sprintf(", max_value %s", fmtNum(mv))
	}
	summary := map[string]string{"expo": fmt.Sprintf("%s * %s^(attempt-1) s", fmtNum(factor), fmtNum(base)), "fibo": "fib(attempt) s", "constant": fmtNum(iv) + " s flat"}[gen]
	draw := ""
	switch jit {
	case "full_jitter":
		genText += "; seconds = random.uniform(0, value) (_jitter.py 18-28)"
		summary = "uniform(0, " + summary + ")"
		draw = "random.uniform(0, value) = value * r"
	case "random_jitter":
		genText += "; seconds = value + random.random() (_jitter.py 6-15)"
		summary += " + [0, 1) s"
		draw = "random.random() = r"
	}
	exh, term := "max_tries None: retried until it succeeds", "none (with max_tries: the exception is raised, raise_on_giveup)"
	if mt > 0 {
		exh, term = fmt.Sprintf("max_tries %d: gives up when tries == %[1]d (_sync.py 107-111)", mt), "the last exception is raised (raise_on_giveup True), after on_giveup"
	}
	return &model{
		name:         "backoff",
		release:      "2.2.1",
		system:       "backoff (Python), @backoff.on_exception(backoff." + gen + ", Exception)",
		version:      "backoff 2.2.1 (Debian python3-backoff 2.2.1-1)",
		source:       pyBackoffRef + "_wait_gen.py (expo 7-31, fibo 34-52, constant 55-72); " + pyBackoffRef + "_jitter.py (random_jitter 6-15, full_jitter 18-28); " + pyBackoffRef + "_common.py (_next_wait 34-56); " + pyBackoffRef + "_sync.py (retry_exception 79-120); " + pyBackoffRef + "_decorator.py (on_exception defaults 123-137)",
		summary:      fmt.Sprintf("%s; %s", summary, attemptsText(int(mt))),
		formula:      "attempt = tries; " + genText,
		draw:         draw,
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  int(mt),
		onExhaustion: policy.Discard,
		jitter:       jit != "None",
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			v := value(n)
			switch jit {
			case "full_jitter":
				return pySeconds(0 + (v-0)*d.next())
			case "random_jitter":
				return pySeconds(v + d.next())
			}
			return pySeconds(v)
		},
	}, nil
}

const rqRef = "https://github.com/rq/rq/blob/v1.13.0/rq/"

var rqSettings = []setting{
	{key: "max", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "Retry(max=N): retries after the first run; 0 is no Retry (RQ's default: a failed job is not retried)"},
	{key: "interval", kind: kIntList, def: "0", lo: 0, hi: 1 << 40, help: "Retry(interval=...): whole seconds, one number or a list written 10/30/60"},
}

func rqModel(c conf) (*model, error) {
	mx, iv := c.int("max"), c.list("interval")
	l := int64(len(iv))
	formula := fmt.Sprintf("retries_left = max - (attempt - 1); index = max(len(intervals) - retries_left, 0); delay_s = intervals[index] "+
		"(Job.get_retry_interval, job.py 1344-1356), intervals %v; 0 enqueues the job again at once (job.py 1368-1375)", iv)
	summary := fmt.Sprintf("intervals %v by retries left", iv)
	if l == 1 {
		summary = fmt.Sprintf("%d s flat", iv[0])
	}
	exh, term, ma := "no Retry: the failed job is not retried", "moved to the FailedJobRegistry (status failed)", 1
	if mx > 0 {
		ma, exh = int(mx+1), fmt.Sprintf("Retry(max=%d): retried while retries_left > 0 (worker.py 1224), so %d runs", mx, mx+1)
	}
	return &model{
		name:         "rq",
		release:      "1.13.0",
		system:       "RQ (Python, Redis), Retry",
		version:      "rq 1.13.0 (Debian python3-rq 1.13.0-1)",
		source:       rqRef + "job.py (Retry 1476-1504, get_retry_interval 1344-1356, retry 1358-1375); " + rqRef + "worker.py (handle_job_failure 1224-1247)",
		summary:      fmt.Sprintf("%s; %s, then failed", summary, attemptsText(ma)),
		formula:      formula,
		draw:         "",
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  ma,
		onExhaustion: policy.DeadLetter,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			left := mx - int64(n-1)
			idx := max(l-left, 0)
			if idx >= l {
				idx = l - 1 // past the retries: the profile repeats the last interval
			}
			return satSeconds(iv[idx])
		},
	}, nil
}
