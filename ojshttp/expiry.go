package ojshttp

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/policy"
)

// Times of a PUSH: scheduled_at and expires_at (RK-180, RK-181).
//
// Each is an RFC 3339 timestamp (ojs-core §5.2), or the relative form the
// official conformance suite sends: "+" and an ISO 8601 duration
// ("+PT5S"), meaning that long after the server's clock reads the
// request — the manual clock's when serve runs one. The public OJS
// servers accept it (ojs-backend-postgres, ojs-backend-sqs: "+PT…"
// resolved against the current time); retrykit takes every duration
// policy.ParseDuration reads after the "+". enqueue_ttl is ojs-timeouts
// §6's integer number of seconds, positive.

// Error types shown for a job discarded by a start deadline (the
// executor records no error entry: no attempt ran).
const (
	// ExpiredErrorType: its expires_at passed before it started.
	ExpiredErrorType = "expired"
	// EnqueueTTLErrorType: its enqueue TTL ran out before its first start
	// (ojs-timeouts §8).
	EnqueueTTLErrorType = "enqueue_ttl_expired"
)

// maxEnqueueTTL bounds enqueue_ttl: 100 years of seconds.
const maxEnqueueTTL = 100 * 365 * 24 * 3600

// pushTime parses a PUSH time field: RFC 3339, or "+" and an ISO 8601
// duration after now. field names it in errors.
func pushTime(field string, v json.RawMessage, now time.Time) (time.Time, *apiError) {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return time.Time{}, invalid(field, "must be an RFC 3339 timestamp or \"+\" and an ISO 8601 duration (\"+PT5S\"), got %s", clip(string(v)))
	}
	if rel, ok := strings.CutPrefix(s, "+"); ok {
		d, err := policy.ParseDuration(rel)
		if err != nil {
			return time.Time{}, invalid(field, "a relative time is \"+\" and an ISO 8601 duration (\"+PT5S\"): %v", err)
		}
		return time.Unix(0, sat.AddInt(now.UnixNano(), int64(d))).UTC(), nil
	}
	t, err := strictjson.Timestamp(s)
	if err != nil {
		return time.Time{}, invalid(field, "must be an RFC 3339 timestamp or \"+\" and an ISO 8601 duration (\"+PT5S\"), got %q", clip(s))
	}
	return t, nil
}

// enqueueTTL parses enqueue_ttl: a positive integer number of seconds.
func enqueueTTL(field string, v json.RawMessage) (time.Duration, *apiError) {
	n, err := intField(v)
	if err != nil || n <= 0 || n > maxEnqueueTTL {
		return 0, invalid(field, "must be a positive integer number of seconds, at most %d (ojs-timeouts §6), got %s", maxEnqueueTTL, clip(string(v)))
	}
	return time.Duration(n) * time.Second, nil
}

// expiryView adds a job's start deadlines to its view and, for a job
// they discarded, the error object that says so (ojs-timeouts §8) and
// no completed_at: it never ran (RK-181).
func expiryView(v map[string]any, j executor.Job) {
	setTime(v, "expires_at", j.ExpiresAt)
	if j.EnqueueTTL > 0 {
		v["enqueue_ttl"] = int64(j.EnqueueTTL / time.Second)
	}
	if j.Expired == executor.NotExpired {
		return
	}
	delete(v, "completed_at")
	e := map[string]any{"occurred_at": stamp(j.FinishedAt)}
	switch j.Expired {
	case executor.ExpiredAt:
		e["type"] = ExpiredErrorType
		e["code"] = ExpiredErrorType
		e["message"] = "the job did not start before its expires_at " + stamp(j.ExpiresAt)
	case executor.DroppedByRateLimit:
		e["type"] = RateLimitedErrorType
		e["code"] = RateLimitedErrorType
		e["message"] = "dropped without running: its rate limit " + strconv.Quote(j.RateLimit.Key) + " was reached and its on_limit is drop"
	case executor.ExpiredEnqueueTTL:
		limit := int64(j.EnqueueTTL / time.Second)
		e["type"] = EnqueueTTLErrorType
		e["code"] = EnqueueTTLErrorType
		e["message"] = "Job was not started within its enqueue TTL of " + strconv.FormatInt(limit, 10) + " seconds"
		e["timeout_kind"] = "enqueue_ttl"
		e["limit_seconds"] = limit
		e["elapsed_seconds"] = int64(j.FinishedAt.Sub(j.CreatedAt) / time.Second)
	}
	v["error"] = e
	v["expired"] = j.Expired.String()
}
