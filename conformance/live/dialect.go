// The dialect probe: before the checks, which interval form and which
// error type field the server reads (docs/decisions.md RK-207).

package live

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// reading is what the probe found of one dialect choice.
type reading uint8

const (
	unknown  reading = iota // the probe could not tell
	honoured                // read and obeyed
	ignored                 // accepted and not obeyed
	rejected                // refused at PUSH (4xx)
)

func (r reading) String() string {
	return [...]string{"could not be told", "honoured", "accepted and ignored", "rejected at PUSH"}[r]
}

// dialect is what the probe found.
type dialect struct {
	iso, ms     reading // initial_interval (ISO 8601), initial_interval_ms
	typ, code   reading // the error type in error.type, in error.code
	probeErrors []string
}

// probeDelay is the first delay of the probe's policies: far from the
// default PT1S either way, and never awaited.
const probeDelay = 30 * time.Second

// probe pushes one job per form and reads the first FAIL answer of each:
// a 30s interval in ISO 8601 or in milliseconds is honoured when the
// delay is 30s, ignored when it is the default 1s; an error type in
// error.type or in error.code alone is read when a non_retryable_errors
// entry equal to it ends the job. It returns the report's figures.
func (e *env) probe(ctx context.Context) []string {
	d := &dialect{}
	e.dialect = d
	interval := func(pol map[string]any) reading {
		q := e.queue("probe")
		id, status, err := e.c.pushStatus(ctx, q, "retrykit.live.probe", pol)
		switch {
		case err != nil:
			d.probeErrors = append(d.probeErrors, err.Error())
			return unknown
		case id == "":
			return rejected
		}
		_ = status
		if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
			d.probeErrors = append(d.probeErrors, err.Error())
			return unknown
		}
		a, ex, err := e.nackOK(ctx, id, failure{Type: "external.probe", Message: "retrykit dialect probe"})
		if err != nil {
			d.probeErrors = append(d.probeErrors, err.Error())
			return unknown
		}
		next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
		if a.State != "retryable" || next.IsZero() {
			return unknown
		}
		lo, hi := e.delayRange(ex, next)
		switch {
		case lo <= probeDelay+time.Second && hi >= probeDelay-time.Second:
			return honoured
		case hi < 2*time.Second:
			return ignored
		}
		return unknown
	}
	d.iso = interval(map[string]any{"max_attempts": 3, "initial_interval": "PT30S", "max_interval": "PT30S", "jitter": false})
	d.ms = interval(map[string]any{"max_attempts": 3, "initial_interval_ms": 30000, "max_interval_ms": 30000, "jitter": false})
	typeField := func(f failure) reading {
		q := e.queue("probe")
		pol := map[string]any{"max_attempts": 3, "initial_interval": "PT30S", "max_interval": "PT30S", "jitter": false, "non_retryable_errors": []string{"external.probe_stop"}}
		id, err := e.c.push(ctx, q, "retrykit.live.probe", pol)
		if err == nil {
			_, err = e.await(ctx, q, id, time.Time{}, 0)
		}
		var a *nackAnswer
		var ex *exchange
		if err == nil {
			a, ex, err = e.c.nack(ctx, id, f)
		}
		switch {
		case err != nil:
			d.probeErrors = append(d.probeErrors, err.Error())
			return unknown
		case a == nil && ex != nil && ex.status >= 400 && ex.status < 500:
			return rejected
		case a == nil:
			return unknown
		case a.State == "discarded":
			return honoured
		case a.State == "retryable":
			return ignored
		}
		return unknown
	}
	d.typ = typeField(failure{Type: "external.probe_stop", Message: "retrykit dialect probe"})
	d.code = typeField(failure{Code: "external.probe_stop", Message: "retrykit dialect probe"})
	var fits []string
	switch {
	case d.iso == honoured:
		fits = append(fits, "--interval-form iso")
	case d.ms == honoured:
		fits = append(fits, "--interval-form ms")
	}
	switch {
	case d.typ == honoured:
		fits = append(fits, "--error-type-field type")
	case d.code == honoured:
		fits = append(fits, "--error-type-field code")
	}
	s := fmt.Sprintf("dialect probe: initial_interval (ISO 8601) %v, initial_interval_ms %v; the error type in error.type %v, in error.code alone %v", d.iso, d.ms, d.typ, d.code)
	if len(fits) > 0 {
		s += "; flags that fit: " + strings.Join(fits, ", ")
	}
	if len(d.probeErrors) > 0 {
		s += "; probe errors: " + trunc(strings.Join(d.probeErrors, "; "), 300)
	}
	return []string{s}
}

// dialectWarning says when the run's flags do not fit what the probe found.
func (e *env) dialectWarning() string {
	d := e.dialect
	if d == nil {
		return ""
	}
	var w []string
	if e.cfg.intervalMs && d.ms != honoured && d.iso == honoured {
		w = append(w, fmt.Sprintf("--interval-form ms, but the server's initial_interval_ms is %v while initial_interval is honoured: --interval-form iso fits", d.ms))
	}
	if !e.cfg.intervalMs && d.iso != honoured && d.ms == honoured {
		w = append(w, fmt.Sprintf("--interval-form iso, but the server's initial_interval is %v while initial_interval_ms is honoured: --interval-form ms fits", d.iso))
	}
	if e.sendsType() && d.typ != honoured && d.code == honoured {
		w = append(w, fmt.Sprintf("--error-type-field type, but the server's error.type is %v while error.code is read: --error-type-field code fits", d.typ))
	}
	if !e.sendsType() && d.code != honoured && d.typ == honoured {
		w = append(w, fmt.Sprintf("--error-type-field code, but the server's error.code is %v while error.type is read: --error-type-field type fits", d.code))
	}
	if len(w) == 0 {
		return ""
	}
	return "the run's dialect flags do not fit the server (dialect probe): " + strings.Join(w, "; ")
}
