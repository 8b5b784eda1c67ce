package budget

import (
	"strconv"
	"time"
)

// Kind is the timeout_kind of an expiry (ojs-timeouts §8).
//
// The zero value is not a kind. A Kind is a plain string, safe to share.
type Kind string

// The four kinds of §8.
const (
	KindExecution  Kind = "execution"   // the execution timeout of one attempt
	KindTotal      Kind = "total"       // total_timeout, from created_at
	KindEnqueueTTL Kind = "enqueue_ttl" // enqueue_ttl, before the first fetch
	KindStalled    Kind = "stalled"     // heartbeat_timeout, between heartbeats
)

// The error types of an expired limit (ojs-timeouts §8).
const (
	ErrorTypeTimeout      = "timeout"
	ErrorTypeStalled      = "stalled"
	ErrorTypeTotalTimeout = "total_timeout"
	ErrorTypeEnqueueTTL   = "enqueue_ttl_expired"
)

// Expiry is an expired limit: the error object §8 stores on the job.
//
// The zero value is not an expiry. An Expiry is a plain value, safe to copy.
type Expiry struct {
	Kind    Kind
	Limit   time.Duration // the limit that was passed (for KindExecution the timeout, without the grace period)
	Elapsed time.Duration // the time measured against it
}

// Type returns the error type of the expiry's kind: "timeout",
// "total_timeout", "enqueue_ttl_expired" or "stalled".
func (e Expiry) Type() string {
	switch e.Kind {
	case KindExecution:
		return ErrorTypeTimeout
	case KindTotal:
		return ErrorTypeTotalTimeout
	case KindEnqueueTTL:
		return ErrorTypeEnqueueTTL
	case KindStalled:
		return ErrorTypeStalled
	}
	return ""
}

// LimitSeconds returns the limit in whole seconds (limits are whole
// seconds).
func (e Expiry) LimitSeconds() int64 { return int64(e.Limit / time.Second) }

// ElapsedSeconds returns the elapsed time rounded up to a whole second, so
// that it is never below LimitSeconds for a passed limit (RK-219): 300.2 s
// is 301, 300 s is 300; a negative time is 0.
func (e Expiry) ElapsedSeconds() int64 {
	if e.Elapsed <= 0 {
		return 0
	}
	s := int64(e.Elapsed / time.Second)
	if e.Elapsed%time.Second != 0 {
		s++
	}
	return s
}

// Message returns the stored error's message, e.g. "Job execution exceeded
// timeout of 300 seconds" (§8).
func (e Expiry) Message() string {
	n := strconv.FormatInt(e.LimitSeconds(), 10)
	switch e.Kind {
	case KindExecution:
		return "Job execution exceeded timeout of " + n + " seconds"
	case KindTotal:
		return "Job exceeded total timeout of " + n + " seconds"
	case KindEnqueueTTL:
		return "Job was not started within its enqueue TTL of " + n + " seconds"
	case KindStalled:
		return "Job stalled: no heartbeat within " + n + " seconds"
	}
	return "Job exceeded a limit of " + n + " seconds"
}

// MarshalJSON writes the §8 error object: type, message, timeout_kind,
// limit_seconds, elapsed_seconds.
func (e Expiry) MarshalJSON() ([]byte, error) {
	b := []byte(`{"type":`)
	b = strconv.AppendQuote(b, e.Type())
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, e.Message())
	b = append(b, `,"timeout_kind":`...)
	b = strconv.AppendQuote(b, string(e.Kind))
	b = append(b, `,"limit_seconds":`...)
	b = strconv.AppendInt(b, e.LimitSeconds(), 10)
	b = append(b, `,"elapsed_seconds":`...)
	b = strconv.AppendInt(b, e.ElapsedSeconds(), 10)
	return append(b, '}'), nil
}

// exceeded reports whether the time from start to now passes limit. A limit
// is passed only when strictly more time has elapsed (§7.1 "now() -
// started_at > timeout + grace_period", §7.3 likewise; RK-216).
func exceeded(kind Kind, limit, slack time.Duration, start, now time.Time) (Expiry, bool) {
	elapsed := now.Sub(start) // time.Time.Sub saturates
	if elapsed <= limit+slack {
		return Expiry{}, false
	}
	return Expiry{Kind: kind, Limit: limit, Elapsed: elapsed}, true
}

// Execution reports whether an attempt started at startedAt has passed its
// execution timeout at now: now − startedAt > timeout + grace_period
// (§7.1). The Expiry's Limit is the timeout.
func (b *Budget) Execution(startedAt, now time.Time) (Expiry, bool) {
	s := b.get().spec
	return exceeded(KindExecution, s.Timeout, s.GracePeriod, startedAt, now)
}

// Stalled reports whether an active job last heard from at lastBeat (its
// last heartbeat, or its start) is stalled at now: now − lastBeat >
// heartbeat_timeout (§7.3). The Expiry's Elapsed is the time since
// lastBeat (RK-219).
func (b *Budget) Stalled(lastBeat, now time.Time) (Expiry, bool) {
	return exceeded(KindStalled, b.get().spec.HeartbeatTimeout, 0, lastBeat, now)
}

// Total reports whether a job created at createdAt has passed its total
// timeout at now: now − created_at > total_timeout (§5.2). Never true
// without a total timeout.
func (b *Budget) Total(createdAt, now time.Time) (Expiry, bool) {
	s := b.get().spec
	if s.TotalTimeout == 0 {
		return Expiry{}, false
	}
	return exceeded(KindTotal, s.TotalTimeout, 0, createdAt, now)
}

// EnqueueTTL reports whether a job created at createdAt and never fetched
// has passed its enqueue TTL at now: now − created_at > enqueue_ttl (§5.3).
// Never true without an enqueue TTL. The TTL governs only the wait for the
// first attempt (RK-218); callers do not ask once the job has run.
func (b *Budget) EnqueueTTL(createdAt, now time.Time) (Expiry, bool) {
	s := b.get().spec
	if s.EnqueueTTL == 0 {
		return Expiry{}, false
	}
	return exceeded(KindEnqueueTTL, s.EnqueueTTL, 0, createdAt, now)
}
