package diagnose

import (
	"encoding/json"
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
)

// caseOp answers the ops of the timeouts and dead-letter extensions with
// e's bugs: the §9.1 boundary taken inclusively (bugBudgetInclusive), a
// timed-out attempt not counted (bugTimeoutNotAttempt), one replay more
// than max_replays (bugReplayOffByOne). Without them it answers as the
// reference. ok is false for a draw the model cannot know.
func (e engine) caseOp(req protocol.Request) (protocol.Response, bool) {
	resp := protocol.Response{ID: req.ID}
	bad := func(typ string, err error) (protocol.Response, bool) { return reject(req.ID, typ, err.Error()), true }
	var c protocol.TimeoutCase
	if err := json.Unmarshal(req.Case, &c); err != nil {
		return bad(protocol.ErrorInvalidRequest, err)
	}
	out := func(v map[string]any) (protocol.Response, bool) {
		resp.Result, _ = json.Marshal(v)
		return resp, true
	}
	b := budget.Default()
	if c.Timeouts != nil && req.Op != protocol.OpReplay {
		var err error
		if b, err = budget.Parse(c.Timeouts); err != nil {
			return bad(protocol.ErrorInvalidRequest, err)
		}
	}
	ms := func(v *int64) (time.Time, bool) {
		if v == nil || *v < 0 {
			return time.Time{}, false
		}
		return protocol.CaseEpoch.Add(time.Duration(*v) * time.Millisecond), true
	}
	switch req.Op {
	case protocol.OpExtensionDecide:
		return e.extensionDecide(req.ID, c, out)
	case protocol.OpTimeoutDecide:
		p, err := policy.Parse(c.Policy)
		if err != nil {
			return bad(protocol.ErrorPolicyInvalid, err)
		}
		created, ok1 := ms(c.CreatedAtMS)
		now, ok2 := ms(c.NowMS)
		if !ok1 || !ok2 || c.Attempt < 1 || now.Before(created) {
			return reject(req.ID, protocol.ErrorInvalidRequest, "bad case"), true
		}
		if c.Rand == nil && p.Spec().Jitter {
			return resp, false
		}
		r := 0.0
		if c.Rand != nil {
			r = *c.Rand
		}
		n := int(min(c.Attempt, 1<<40))
		f := policy.Failure{Attempt: n}
		if c.Error != nil {
			f.ErrorType, f.Code = c.Error.Type, errmatch.Code(c.Error.Code)
		}
		if e.has(bugTimeoutNotAttempt) && (f.ErrorType == budget.ErrorTypeTimeout || f.ErrorType == budget.ErrorTypeStalled) {
			f.Attempt = max(n-1, 1)
		}
		d, err := p.DecideAt(f, r)
		if err != nil {
			return bad(protocol.ErrorInvalidRequest, err)
		}
		s := b.Spec()
		exh := p.Spec().OnExhaustion.String()
		action, delay := d.Action.String(), d.Delay
		if s.TotalTimeout != 0 && d.Reason != policy.ReasonHandlerCode {
			used := now.Sub(created)
			switch {
			case used > s.TotalTimeout:
				action = exh
			case action == "retry":
				end := sat.AddInt(sat.AddInt(used, delay), s.Timeout)
				if s.TotalTimeout < end || e.has(bugBudgetInclusive) && s.TotalTimeout == end {
					action = exh
				}
			}
		}
		res := map[string]any{"action": action}
		if action == "retry" {
			res["delay_ns"] = int64(delay)
		}
		return out(res)
	case protocol.OpTimeoutExpiry:
		since, ok1 := ms(c.SinceMS)
		now, ok2 := ms(c.NowMS)
		if !ok1 || !ok2 {
			return reject(req.ID, protocol.ErrorInvalidRequest, "bad case"), true
		}
		checks := map[string]func(a, b time.Time) (budget.Expiry, bool){
			"execution": b.Execution, "stalled": b.Stalled, "total": b.Total, "enqueue_ttl": b.EnqueueTTL}
		check, ok := checks[c.Kind]
		if !ok {
			return reject(req.ID, protocol.ErrorInvalidRequest, "unknown kind"), true
		}
		x, expired := check(since, now)
		if !expired {
			return out(map[string]any{"expired": false})
		}
		return out(map[string]any{"expired": true, "type": x.Type(), "timeout_kind": string(x.Kind),
			"limit_seconds": x.LimitSeconds(), "elapsed_seconds": x.ElapsedSeconds()})
	case protocol.OpReplay:
		rs, err := replay.Parse(c.Rules)
		if err != nil {
			return bad(protocol.ErrorInvalidRequest, err)
		}
		if c.Letter == nil {
			return reject(req.ID, protocol.ErrorInvalidRequest, "no letter"), true
		}
		at, ok := ms(c.Letter.DiscardedAtMS)
		if !ok {
			return reject(req.ID, protocol.ErrorInvalidRequest, "bad discarded_at_ms"), true
		}
		st, err := replay.ReadMeta(c.Letter.Meta)
		if err != nil {
			return bad(protocol.ErrorInvalidRequest, err)
		}
		l := replay.Letter{ErrorType: c.Letter.ErrorType, Queue: c.Letter.Queue, Type: c.Letter.Type, DiscardedAt: at}
		for _, rule := range rs.Rules() {
			limit := rule.MaxReplays
			if e.has(bugReplayOffByOne) {
				limit++
			}
			if rule.Match(l) && st.Count < limit {
				return out(map[string]any{"replay": true, "rule": rule.Name,
					"at_ms": at.Add(rule.Delay).Sub(protocol.CaseEpoch).Milliseconds(), "replay_count": st.Count + 1})
			}
		}
		return out(map[string]any{"replay": false})
	}
	return resp, false
}

// extensionDecide answers an extension_decide case (the retry extensions
// of docs/extensions.md) as the policy package decides it: no bug of the
// engine touches these features. ok is false for a draw the model cannot
// know.
func (e engine) extensionDecide(id int64, c protocol.TimeoutCase, out func(map[string]any) (protocol.Response, bool)) (protocol.Response, bool) {
	p, err := policy.Parse(c.Policy)
	if err != nil {
		return reject(id, protocol.ErrorPolicyInvalid, err.Error()), true
	}
	if c.Attempt < 1 || (c.RetryAfterNS != nil && c.SnoozeNS != nil) {
		return reject(id, protocol.ErrorInvalidRequest, "bad case"), true
	}
	f := policy.Failure{Attempt: int(min(c.Attempt, 1<<40)), PrevDelay: time.Duration(c.PrevDelayNS), Snoozes: int(max(min(c.Snoozes, 1<<40), -1))}
	if c.Error != nil {
		f.ErrorType, f.Code = c.Error.Type, errmatch.Code(c.Error.Code)
	}
	if c.RetryAfterNS != nil {
		f.Request = errmatch.Request{Kind: errmatch.RetryAfter, Delay: time.Duration(*c.RetryAfterNS)}
	} else if c.SnoozeNS != nil {
		f.Request = errmatch.Request{Kind: errmatch.Snooze, Delay: time.Duration(*c.SnoozeNS)}
	}
	r := 0.5
	if c.Rand != nil {
		r = *c.Rand
	}
	d, err := p.DecideAt(f, r)
	if err != nil {
		return reject(id, protocol.ErrorInvalidRequest, err.Error()), true
	}
	if lo, hi := p.BackoffFor(f.ErrorType).Bounds(f.Attempt); c.Rand == nil && d.Reason == policy.ReasonRetry && lo != hi {
		return protocol.Response{ID: id}, false // the implementation's own draw
	}
	res := map[string]any{"action": d.Action.String()}
	if d.Action == policy.Retry {
		res["delay_ns"], res["snoozed"] = int64(d.Delay), d.Reason == policy.ReasonSnoozed
	}
	return out(res)
}
