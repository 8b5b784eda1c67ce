package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
)

// maxCaseMS bounds the *_ms fields of a case: 100 years.
const maxCaseMS = int64(100 * 365 * 24 * time.Hour / time.Millisecond)

func caseMS(name string, v *int64) (time.Time, error) {
	if v == nil {
		return time.Time{}, fmt.Errorf("conformance: case.%s: required", name)
	}
	if *v < 0 || *v > maxCaseMS {
		return time.Time{}, fmt.Errorf("conformance: case.%s: must be from 0 to %d, got %d", name, maxCaseMS, *v)
	}
	return protocol.CaseTime(*v), nil
}

// referenceCase answers timeout_decide, timeout_expiry and replay with the
// budget and replay packages (PROTOCOL.md 3.10).
func referenceCase(req protocol.Request, resp protocol.Response) protocol.Response {
	reject := func(typ string, err error) protocol.Response {
		resp.Error = &protocol.ErrorResult{Type: typ, Message: err.Error()}
		return resp
	}
	var c protocol.TimeoutCase
	if len(req.Case) == 0 {
		return reject(protocol.ErrorInvalidRequest, errors.New("conformance: case: required"))
	}
	if err := json.Unmarshal(req.Case, &c); err != nil {
		return reject(protocol.ErrorInvalidRequest, fmt.Errorf("conformance: case: %w", err))
	}
	result := func(v any) protocol.Response {
		b, err := json.Marshal(v)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		resp.Result = b
		return resp
	}
	readBudget := func() (*budget.Budget, error) {
		if c.Timeouts == nil {
			return budget.Default(), nil
		}
		return budget.Parse(c.Timeouts)
	}
	switch req.Op {
	case protocol.OpTimeoutDecide:
		p, err := policy.Parse(c.Policy)
		if err != nil {
			return reject(protocol.ErrorPolicyInvalid, err)
		}
		b, err := readBudget()
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		created, err := caseMS("created_at_ms", c.CreatedAtMS)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		now, err := caseMS("now_ms", c.NowMS)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		if c.Attempt < 1 {
			return reject(protocol.ErrorInvalidRequest, errors.New("conformance: case.attempt: must be ≥ 1"))
		}
		f := budget.Failure{Failure: policy.Failure{Attempt: clampAttempt(c.Attempt)}, CreatedAt: created, At: now}
		if c.Error != nil {
			f.ErrorType, f.Code = c.Error.Type, errmatch.Code(c.Error.Code)
		}
		var d budget.Decision
		if c.Rand != nil {
			d, err = b.DecideAt(p, f, *c.Rand)
		} else {
			d, err = b.Decide(p, f, backoff.Random())
		}
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		out := map[string]any{"action": d.Action.String()}
		if d.Action == policy.Retry {
			out["delay_ns"] = int64(d.Delay)
		}
		return result(out)
	case protocol.OpTimeoutExpiry:
		b, err := readBudget()
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		since, err := caseMS("since_ms", c.SinceMS)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		now, err := caseMS("now_ms", c.NowMS)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		var check func(start, now time.Time) (budget.Expiry, bool)
		switch budget.Kind(c.Kind) {
		case budget.KindExecution:
			check = b.Execution
		case budget.KindStalled:
			check = b.Stalled
		case budget.KindTotal:
			check = b.Total
		case budget.KindEnqueueTTL:
			check = b.EnqueueTTL
		default:
			return reject(protocol.ErrorInvalidRequest, fmt.Errorf("conformance: case.kind: want execution, stalled, total or enqueue_ttl, got %s", strconv.Quote(c.Kind)))
		}
		e, expired := check(since, now)
		if !expired {
			return result(map[string]any{"expired": false})
		}
		return result(map[string]any{"expired": true, "type": e.Type(), "timeout_kind": string(e.Kind),
			"limit_seconds": e.LimitSeconds(), "elapsed_seconds": e.ElapsedSeconds()})
	case protocol.OpExtensionDecide:
		return extensionDecide(c, reject, result)
	case protocol.OpReplay:
		rs, err := replay.Parse(c.Rules)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		if c.Letter == nil {
			return reject(protocol.ErrorInvalidRequest, errors.New("conformance: case.letter: required"))
		}
		at, err := caseMS("letter.discarded_at_ms", c.Letter.DiscardedAtMS)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		st, err := replay.ReadMeta(c.Letter.Meta)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		r, ok := rs.Next(replay.Letter{ErrorType: c.Letter.ErrorType, Queue: c.Letter.Queue, Type: c.Letter.Type, DiscardedAt: at, Count: st.Count})
		if !ok {
			return result(map[string]any{"replay": false})
		}
		return result(map[string]any{"replay": true, "rule": r.Rule, "at_ms": r.At.Sub(protocol.CaseEpoch).Milliseconds(), "replay_count": r.Count})
	}
	resp.Unsupported = true
	return resp
}

// extensionDecide answers an extension_decide case with package policy
// (docs/extensions.md §3.1): the failure's requested delay, snooze, snooze
// count and previous delay go into the policy.Failure.
func extensionDecide(c protocol.TimeoutCase, reject func(string, error) protocol.Response, result func(any) protocol.Response) protocol.Response {
	p, err := policy.Parse(c.Policy)
	if err != nil {
		return reject(protocol.ErrorPolicyInvalid, err)
	}
	if c.Attempt < 1 {
		return reject(protocol.ErrorInvalidRequest, errors.New("conformance: case.attempt: must be ≥ 1"))
	}
	f := policy.Failure{Attempt: clampAttempt(c.Attempt), PrevDelay: time.Duration(c.PrevDelayNS), Snoozes: clampAttempt(c.Snoozes)}
	if c.Error != nil {
		f.ErrorType, f.Code = c.Error.Type, errmatch.Code(c.Error.Code)
	}
	switch {
	case c.RetryAfterNS != nil && c.SnoozeNS != nil:
		return reject(protocol.ErrorInvalidRequest, errors.New("conformance: case: retry_after_ns and snooze_ns: give one, not both"))
	case c.RetryAfterNS != nil:
		f.Request = errmatch.Request{Kind: errmatch.RetryAfter, Delay: time.Duration(*c.RetryAfterNS)}
	case c.SnoozeNS != nil:
		f.Request = errmatch.Request{Kind: errmatch.Snooze, Delay: time.Duration(*c.SnoozeNS)}
	}
	var d policy.Decision
	if c.Rand != nil {
		d, err = p.DecideAt(f, *c.Rand)
	} else {
		d, err = p.Decide(f, backoff.Random())
	}
	if err != nil {
		return reject(protocol.ErrorInvalidRequest, err)
	}
	out := map[string]any{"action": d.Action.String()}
	if d.Action == policy.Retry {
		out["delay_ns"] = int64(d.Delay)
		out["snoozed"] = d.Reason == policy.ReasonSnoozed
	}
	return result(out)
}
