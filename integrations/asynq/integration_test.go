package asynqretry_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

// slack is how long after a handler returns asynq may store the retry, and
// how late the forwarder (every 50ms) may run it on a loaded CI machine.
const slack = 750 * time.Millisecond

// startSlack is how long after the second its retry was stored for an
// attempt may start: the forwarder's poll, then a worker's fetch, on a
// loaded CI machine (a start 752 ms after was seen). The second stored is
// held to slack above, so a retry stored late still fails; this bound only
// says that asynq ran what it stored.
const startSlack = 2 * time.Second

// checkSchedule asserts, for a task whose runs all failed, that asynq's
// retry set held retry k at the first whole Unix second at or after the
// failure of attempt k plus delays[k] (asynq keeps whole seconds; RetryDelay
// rounds up), and that attempt k+1 started no earlier than the policy's
// delay and no later than that second plus startSlack.
func checkSchedule(t *testing.T, runs []run, scores []int64, delays []time.Duration) {
	t.Helper()
	if len(runs) != len(delays)+1 || len(scores) != len(delays) {
		t.Fatalf("got %d runs and %d retry scores, want %d and %d (runs %+v, scores %v)", len(runs), len(scores), len(delays)+1, len(delays), runs, scores)
	}
	for k, d := range delays {
		if runs[k].Retried != k || runs[k+1].Retried != k+1 {
			t.Fatalf("runs %d,%d have retry counts %d,%d", k, k+1, runs[k].Retried, runs[k+1].Retried)
		}
		due := runs[k].End.Add(d)
		lo, hi := ceilSecond(due), ceilSecond(due.Add(slack))
		if scores[k] < lo || scores[k] > hi {
			t.Errorf("retry %d stored for second %d, want %d..%d (failure %v + %v)", k+1, scores[k], lo, hi, runs[k].End.Format(time.StampMilli), d)
		}
		next := runs[k+1].Start
		latest := time.Unix(scores[k], 0).Add(startSlack)
		if next.Before(due) || next.Before(time.Unix(scores[k], 0)) || next.After(latest) {
			t.Errorf("attempt %d started at %v, want from %v (failure + %v) to %v", k+2, next.Format(time.StampMilli), due.Format(time.StampMilli), d, latest.Format(time.StampMilli))
		}
	}
}

// TestScheduleAndExhaustion: tasks that always fail run max_attempts times
// (asynq's retry count going 0..max_attempts-1), each retry due at the
// policy's delay, and end archived with the decision in their last error.
func TestScheduleAndExhaustion(t *testing.T) {
	e := newEnv(t, 1)
	// Default policy: delays 0.5s, 1s, 2s; a per-task policy: 1s, 1s.
	rk, err := asynqretry.Parse([]byte(`{"max_attempts":4,"initial_interval":"PT0.5S","jitter":false}`))
	if err != nil {
		t.Fatal(err)
	}
	e.server(rk, 4)
	idDef := e.enqueue(asynq.NewTask("script", payload("fail"), asynqretry.MaxRetry(rk.Policy(nil))))
	own := mustPolicy(`{"max_attempts":3,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false,"on_exhaustion":"dead_letter"}`)
	idOwn := e.enqueue(asynqretry.NewTask("script", payload("fail"), own, asynq.MaxRetry(20)))
	e.waitDone(2, 20*time.Second)

	for _, tc := range []struct {
		id       string
		maxRetry int
		lastErr  string
		delays   []time.Duration
	}{
		{idDef, 3, "asynqretry: discard (exhausted): attempt 4 failed", []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{idOwn, 2, "asynqretry: dead_letter (exhausted): attempt 3 failed", []time.Duration{time.Second, time.Second}},
	} {
		ti := e.info(tc.id)
		if ti.State != asynq.TaskStateArchived || ti.Retried != tc.maxRetry || ti.MaxRetry != tc.maxRetry || ti.LastErr != tc.lastErr {
			t.Errorf("task %s: state %v retried %d max_retry %d last error %q, want archived %d %d %q",
				tc.id, ti.State, ti.Retried, ti.MaxRetry, ti.LastErr, tc.maxRetry, tc.maxRetry, tc.lastErr)
		}
		checkSchedule(t, e.runs.get(tc.id), e.watch.get(tc.id), tc.delays)
	}
}

// TestEarlyEnd: error types and handler codes end tasks before their
// retries run out, archived with the decision in the last error.
func TestEarlyEnd(t *testing.T) {
	e := newEnv(t, 2)
	rk, err := asynqretry.Parse([]byte(`{"max_attempts":5,"initial_interval":"PT0.1S","jitter":false,`+
		`"non_retryable_errors":["validation.*"]}`),
		asynqretry.WithTypePolicy("short", mustPolicy(`{"max_attempts":2,"initial_interval":"PT0.1S","on_exhaustion":"dead_letter"}`)))
	if err != nil {
		t.Fatal(err)
	}
	e.server(rk, 8)
	dl := mustPolicy(`{"max_attempts":5,"initial_interval":"PT0.1S","jitter":false,` +
		`"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}`)
	cases := []struct {
		name     string
		task     *asynq.Task
		opts     []asynq.Option
		state    asynq.TaskState
		attempts int
		lastErr  string
	}{
		{"non-retryable type, discard", asynqretry.NewTask("script", payload("fail", "validation.bad_input"), rk.Policy(nil)), nil,
			asynq.TaskStateArchived, 2, "asynqretry: discard (non_retryable): validation.bad_input: attempt 2 failed"},
		{"non-retryable type, dead_letter", asynqretry.NewTask("script", payload("validation.bad_input"), dl), nil,
			asynq.TaskStateArchived, 1, "asynqretry: dead_letter (non_retryable): validation.bad_input: attempt 1 failed"},
		{"retryable type", asynqretry.NewTask("script", payload("external.timeout", "external.timeout", "ok"), rk.Policy(nil)), nil,
			asynq.TaskStateCompleted, 3, "external.timeout: attempt 2 failed"},
		{"DISCARD code", asynqretry.NewTask("script", payload("x.y/DISCARD"), rk.Policy(nil)), nil,
			asynq.TaskStateArchived, 1, "asynqretry: discard (handler_code): x.y: attempt 1 failed"},
		{"FAIL code", asynqretry.NewTask("script", payload("fail", "fail", "x.y/FAIL"), rk.Policy(nil)), nil,
			asynq.TaskStateArchived, 3, "asynqretry: discard (handler_code): x.y: attempt 3 failed"},
		{"DEAD_LETTER code", asynqretry.NewTask("script", payload("fail", "x.y/DEAD_LETTER"), rk.Policy(nil)), nil,
			asynq.TaskStateArchived, 2, "asynqretry: dead_letter (handler_code): x.y: attempt 2 failed"},
		{"RETRY code is the policy", asynqretry.NewTask("script", payload("x.y/RETRY", "ok"), rk.Policy(nil)), nil,
			asynq.TaskStateCompleted, 2, "x.y: attempt 1 failed"},
		{"unknown code is kept", asynqretry.NewTask("script", payload("x.y/MAYBE"), rk.Policy(nil)), nil,
			asynq.TaskStateArchived, 1, "asynqretry: dead_letter (handler_code): x.y: attempt 1 failed\n" +
				`policy: failure code: unknown handler code "MAYBE" (want RETRY, DISCARD, DEAD_LETTER or FAIL)`},
		// asynq's own MaxRetry below the policy's: asynq archives first.
		{"asynq MaxRetry lower", asynq.NewTask("script", payload("fail")), []asynq.Option{asynq.MaxRetry(1)},
			asynq.TaskStateArchived, 2, "attempt 2 failed"},
		// A task without a policy and with asynq's default MaxRetry (25)
		// ends at the default policy's max_attempts.
		{"default policy, asynq default MaxRetry", asynq.NewTask("script", payload("fail")), nil,
			asynq.TaskStateArchived, 5, "asynqretry: discard (exhausted): attempt 5 failed"},
		{"type policy", asynq.NewTask("short", payload("fail")), nil,
			asynq.TaskStateArchived, 2, "asynqretry: dead_letter (exhausted): attempt 2 failed"},
		{"unreadable policy header", asynq.NewTaskWithHeaders("script", payload("fail", "validation.x"), map[string]string{asynqretry.HeaderKey: `{"max_attempts":-1}`}), nil,
			asynq.TaskStateArchived, 2, "asynqretry: discard (non_retryable): validation.x: attempt 2 failed\n" +
				"asynqretry: task script header retrykit-policy: policy: max_attempts: must be a non-negative integer, got -1"},
	}
	ids := make([]string, len(cases))
	for i, tc := range cases {
		ids[i] = e.enqueue(tc.task, tc.opts...)
	}
	e.waitDone(len(cases), 30*time.Second)
	for i, tc := range cases {
		ti := e.info(ids[i])
		runs := e.runs.get(ids[i])
		if ti.State != tc.state || ti.Retried != tc.attempts-1 || len(runs) != tc.attempts || ti.LastErr != tc.lastErr {
			t.Errorf("%s: state %v retried %d runs %d last error\n%q, want %v %d %d\n%q",
				tc.name, ti.State, ti.Retried, len(runs), ti.LastErr, tc.state, tc.attempts-1, tc.attempts, tc.lastErr)
		}
	}
}

// TestPerTaskPolicy: NewTask stores the policy in the task's header and
// maps max_attempts to MaxRetry.
func TestPerTaskPolicy(t *testing.T) {
	e := newEnv(t, 3)
	own := mustPolicy(`{"max_attempts":7,"initial_interval":"PT0.2S","jitter":false}`)
	id := e.enqueue(asynqretry.NewTask("script", payload("ok"), own, asynq.MaxRetry(99)))
	ti := e.info(id)
	if ti.MaxRetry != 6 {
		t.Errorf("MaxRetry = %d, want 6 (max_attempts 7 - 1)", ti.MaxRetry)
	}
	got := mustPolicy(ti.Headers[asynqretry.HeaderKey])
	if !got.Equal(own) {
		t.Errorf("header %s = %s, want the policy", asynqretry.HeaderKey, ti.Headers[asynqretry.HeaderKey])
	}
	rk := asynqretry.New(nil)
	if p := rk.Policy(asynq.NewTaskWithHeaders("x", nil, ti.Headers)); !p.Equal(own) {
		t.Errorf("Policy of the stored task = %s", mustJSON(p))
	}
	zero := e.enqueue(asynqretry.NewTask("script", payload("ok"), mustPolicy(`{"max_attempts":0}`)))
	if ti := e.info(zero); ti.MaxRetry != 0 {
		t.Errorf("max_attempts 0: MaxRetry = %d, want 0", ti.MaxRetry)
	}
}

// TestManyTasks: a few thousand tasks with scripted failures, worked by
// three servers at once, all end in their expected state with their
// expected attempt counts, and none is lost or run too often.
func TestManyTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the load test")
	}
	const n = 3000
	e := newEnv(t, 4)
	rk, err := asynqretry.Parse([]byte(`{"max_attempts":3,"initial_interval":"PT0.05S","max_interval":"PT0.2S","jitter":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.server(rk, 20)
	}
	scripts := [][]string{
		{"ok"},
		{"fail", "ok"},
		{"fail"},
		{"fail", "x.y/DEAD_LETTER"},
		{"x.y/DISCARD"},
	}
	start := time.Now()
	want := map[string][]string{}
	for i := range n {
		s := scripts[i%len(scripts)]
		id := e.enqueue(asynq.NewTask("script", payload(s...)), asynqretry.MaxRetry(rk.Policy(nil)))
		want[id] = s
	}
	qi := e.waitDone(n, 3*time.Minute)
	t.Logf("%d tasks worked in %v", n, time.Since(start))
	wantCompleted := 2 * n / len(scripts)
	if qi.Completed != wantCompleted || qi.Archived != n-wantCompleted {
		t.Errorf("completed %d archived %d, want %d %d", qi.Completed, qi.Archived, wantCompleted, n-wantCompleted)
	}
	seen := 0
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){e.insp.ListCompletedTasks, e.insp.ListArchivedTasks} {
		for page := 1; ; page++ {
			tis, err := list(queue, asynq.PageSize(1000), asynq.Page(page))
			if err != nil {
				t.Fatal(err)
			}
			if len(tis) == 0 {
				break
			}
			for _, ti := range tis {
				seen++
				s, ok := want[ti.ID]
				if !ok {
					t.Errorf("unknown task %s", ti.ID)
					continue
				}
				delete(want, ti.ID)
				state, attempts, lastErr := expectScript(s)
				if ti.State != state || ti.Retried != attempts-1 || len(e.runs.get(ti.ID)) != attempts || !strings.HasPrefix(ti.LastErr, lastErr) {
					t.Errorf("task %s %v: state %v retried %d runs %d last error %q, want %v %d %d %q...",
						ti.ID, s, ti.State, ti.Retried, len(e.runs.get(ti.ID)), ti.LastErr, state, attempts-1, attempts, lastErr)
				}
			}
		}
	}
	if seen != n || len(want) != 0 {
		t.Errorf("read back %d tasks, %d missing", seen, len(want))
	}
}

// expectScript is the outcome of a script under TestManyTasks's policy
// (3 attempts, on_exhaustion discard).
func expectScript(s []string) (asynq.TaskState, int, string) {
	for i := 1; i <= 3; i++ {
		switch st := step(s, i); {
		case st == "ok":
			if i == 1 {
				return asynq.TaskStateCompleted, 1, ""
			}
			return asynq.TaskStateCompleted, i, "attempt"
		case strings.HasSuffix(st, "/DEAD_LETTER"):
			return asynq.TaskStateArchived, i, "asynqretry: dead_letter (handler_code)"
		case strings.HasSuffix(st, "/DISCARD"):
			return asynq.TaskStateArchived, i, "asynqretry: discard (handler_code)"
		}
	}
	return asynq.TaskStateArchived, 3, "asynqretry: discard (exhausted)"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// ceilSecond is the first whole Unix second at or after t.
func ceilSecond(t time.Time) int64 {
	if t.Nanosecond() == 0 {
		return t.Unix()
	}
	return t.Unix() + 1
}
