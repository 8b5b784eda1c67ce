package asynqretry_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"pgregory.net/rapid"

	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

// wantRetry is what asynq must store for max_attempts n: n-1 retries, 0
// counting as 1 attempt, and at most 2^31-1, the largest int32 (asynq's task
// message keeps MaxRetry as an int32).
func wantRetry(n int64) int {
	if n <= 1 {
		return 0
	}
	if n-1 > 1<<31-1 {
		return 1<<31 - 1
	}
	return int(n - 1)
}

// TestMaxRetryStoredByAsynq: for max_attempts drawn from the whole int64
// range (the edges of int32 and int64 included), the MaxRetry that asynq
// itself stores and reads back from Redis is max_attempts-1 saturated at
// asynq's int32 limit: never wrapped to a negative or small count
// (2147483649 used to be stored as -2147483648, 4294967298 as 1).
func TestMaxRetryStoredByAsynq(t *testing.T) {
	e := newEnv(t, 5)
	edges := []int64{0, 1, 2, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1 << 32, 1<<32 + 2, math.MaxInt64 - 1, math.MaxInt64}
	check := func(t interface{ Fatalf(string, ...any) }, n int64) {
		pol := mustPolicy(`{"max_attempts":` + strconv.FormatInt(n, 10) + `}`)
		id := e.enqueue(asynqretry.NewTask("script", payload("ok"), pol))
		if got, want := e.info(id).MaxRetry, wantRetry(n); got != want {
			t.Fatalf("max_attempts %d: asynq stored MaxRetry %d, want %d", n, got, want)
		}
	}
	for _, n := range edges {
		check(t, n)
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.OneOf(
			rapid.Int64Range(0, math.MaxInt64),
			rapid.Int64Range(1<<31-4, 1<<31+4),
			rapid.Int64Range(1<<32-4, 1<<32+4),
			rapid.Int64Range(math.MaxInt64-4, math.MaxInt64),
		).Draw(t, "max_attempts")
		check(t, n)
	})
}

// TestHugeMaxAttemptsRetries: a task whose policy allows more attempts than
// asynq can count is retried after its first failure, not archived (the
// wrapped count archived it at once: a silent loss of every retry).
func TestHugeMaxAttemptsRetries(t *testing.T) {
	e := newEnv(t, 6)
	rk := asynqretry.New(nil)
	e.server(rk, 2)
	var ids []string
	for _, n := range []string{"2147483649", "4294967298", "9223372036854775807"} {
		pol := mustPolicy(`{"max_attempts":` + n + `,"initial_interval":"PT0.1S","jitter":false,"backoff_strategy":"none"}`)
		ids = append(ids, e.enqueue(asynqretry.NewTask("script", payload("fail", "fail", "ok"), pol)))
	}
	e.waitDone(len(ids), 20*time.Second)
	for _, id := range ids {
		ti := e.info(id)
		if ti.State != asynq.TaskStateCompleted || ti.Retried != 2 || ti.MaxRetry != asynqretry.MaxRetryLimit {
			t.Errorf("task %s: state %v after %d retries (MaxRetry %d), want completed after 2 retries with MaxRetry %d",
				id, ti.State, ti.Retried, ti.MaxRetry, asynqretry.MaxRetryLimit)
		}
		if len(e.runs.get(id)) != 3 {
			t.Errorf("task %s ran %d times, want 3", id, len(e.runs.get(id)))
		}
	}
}

// TestCacheBoundsHeaderSize: a policy header larger than the cache's key
// limit is still read correctly on every use (it is parsed each time, not
// kept).
func TestCacheBoundsHeaderSize(t *testing.T) {
	pad := strings.Repeat(" ", 64<<10)
	rk := asynqretry.New(nil)
	task := asynq.NewTaskWithHeaders("t", nil, map[string]string{asynqretry.HeaderKey: `{"max_attempts":9` + pad + `}`})
	for range 3 {
		if got := rk.Policy(task).Spec().MaxAttempts; got != 9 {
			t.Fatalf("max_attempts %d, want 9", got)
		}
	}
}
