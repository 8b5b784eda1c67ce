package riverretry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
	"github.com/retrykit/retrykit/policy"
)

type policyPolicy = policy.Policy

func mustPolicy(js string) *policy.Policy {
	if js == "" {
		return nil
	}
	p, err := policy.Parse([]byte(js))
	if err != nil {
		panic(err)
	}
	return p
}

func wrap(err error, typ, code string) error { return errmatch.Wrap(err, typ, errmatch.Code(code)) }

// slack is how late River may run a retry after its scheduled time, and how
// long after the failure NextRetry may be called: polling (20ms), the
// completer's batching and a loaded 2-core CI machine.
const slack = 500 * time.Millisecond

// checkSchedule asserts, from the job rows River fetched, that attempt k+1 was
// scheduled exactly delays[k] after attempt k failed (within slack, never
// earlier) and that it did not run before its scheduled time.
func checkSchedule(t *testing.T, runs []run, delays []time.Duration) {
	t.Helper()
	if len(runs) < len(delays)+1 {
		t.Fatalf("got %d failed runs, want at least %d: %+v", len(runs), len(delays)+1, runs)
	}
	for k, want := range delays {
		prev, next := runs[k], runs[k+1]
		if prev.Attempt != k+1 || next.Attempt != k+2 {
			t.Fatalf("runs %d,%d have attempts %d,%d", k, k+1, prev.Attempt, next.Attempt)
		}
		got := next.ScheduledAt.Sub(prev.FailedAt)
		// NextRetry runs after the worker returns, so the scheduled time is
		// at least want after the failure the worker saw.
		if got < want || got > want+slack {
			t.Errorf("attempt %d: scheduled %v after failure of attempt %d, want %v (+%v)", k+2, got, k+1, want, slack)
		}
	}
}

// TestScheduleAndExhaustion: a job that always fails runs max_attempts
// times, each retry scheduled at the policy's delay, and on exhaustion it
// ends as on_exhaustion says, with every attempt's error kept.
func TestScheduleAndExhaustion(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		onExhaustion string
		state        rivertype.JobState
	}{
		{"discard", rivertype.JobStateCancelled},
		{"dead_letter", rivertype.JobStateDiscarded},
	} {
		t.Run(tc.onExhaustion, func(t *testing.T) {
			// Delays 0.2s, 0.4s, 0.8s: exponential, no jitter.
			rk, err := riverretry.Parse([]byte(`{"max_attempts":4,"initial_interval":"PT0.2S","backoff_coefficient":2,` +
				`"jitter":false,"on_exhaustion":"` + tc.onExhaustion + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			var j journal
			e2 := &env{t: t, pool: e.pool, schema: e.schema}
			c := e2.client(rk, scriptWorkers(&j), 5)
			res, err := c.Insert(context.Background(), ScriptArgs{Script: []string{"fail"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Job.MaxAttempts != 4 {
				t.Errorf("inserted max_attempts = %d, want 4 (from the policy)", res.Job.MaxAttempts)
			}
			waitJob(t, c, res.Job.ID, 20*time.Second)
			job := getJob(t, c, res.Job.ID)
			if job.State != tc.state || job.Attempt != 4 || len(job.Errors) != 4 {
				t.Fatalf("final row: state %s attempt %d errors %d, want %s 4 4", job.State, job.Attempt, len(job.Errors), tc.state)
			}
			for i, ae := range job.Errors {
				if ae.Attempt != i+1 {
					t.Errorf("errors[%d].attempt = %d", i, ae.Attempt)
				}
			}
			last := job.Errors[3].Error
			want := "riverretry: " + tc.onExhaustion + " (exhausted): attempt 4 failed"
			if tc.state == rivertype.JobStateCancelled {
				want = "JobCancelError: " + want // River's prefix for a cancelled job's error
			}
			if last != want {
				t.Errorf("last error %q, want %q", last, want)
			}
			checkSchedule(t, j.get(res.Job.ID), []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond})
		})
	}
}

// TestEarlyEnd: error types and handler codes end jobs before their
// attempts run out, in the state the decision maps to.
func TestEarlyEnd(t *testing.T) {
	e := newEnv(t)
	rk, err := riverretry.Parse([]byte(`{"max_attempts":5,"initial_interval":"PT0.05S","jitter":false,` +
		`"non_retryable_errors":["validation.*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(rk, scriptWorkers(nil), 10)
	dlJSON := `{"max_attempts":5,"initial_interval":"PT0.05S","jitter":false,` +
		`"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}`
	cases := []struct {
		name     string
		args     river.JobArgs
		state    rivertype.JobState
		attempts int
		lastErr  string
	}{
		{"non-retryable type, discard", ScriptArgs{Script: []string{"fail", "validation.bad_input"}},
			rivertype.JobStateCancelled, 2, "JobCancelError: riverretry: discard (non_retryable): validation.bad_input: attempt 2 failed"},
		{"non-retryable type, dead_letter", ScriptPolicyArgs{Script: []string{"validation.bad_input"}, Policy: dlJSON},
			rivertype.JobStateDiscarded, 1, "riverretry: dead_letter (non_retryable): validation.bad_input: attempt 1 failed"},
		{"retryable type", ScriptArgs{Script: []string{"external.timeout", "external.timeout", "ok"}},
			rivertype.JobStateCompleted, 3, ""},
		{"DISCARD code", ScriptArgs{Script: []string{"x.y/DISCARD"}},
			rivertype.JobStateCancelled, 1, "JobCancelError: riverretry: discard (handler_code): x.y: attempt 1 failed"},
		{"FAIL code", ScriptArgs{Script: []string{"fail", "fail", "x.y/FAIL"}},
			rivertype.JobStateCancelled, 3, "JobCancelError: riverretry: discard (handler_code): x.y: attempt 3 failed"},
		{"DEAD_LETTER code", ScriptArgs{Script: []string{"fail", "x.y/DEAD_LETTER"}},
			rivertype.JobStateDiscarded, 2, "riverretry: dead_letter (handler_code): x.y: attempt 2 failed"},
		{"panics are retried", ScriptArgs{Script: []string{"panic", "panic", "ok"}},
			rivertype.JobStateCompleted, 3, ""},
		{"RETRY code is the policy", ScriptArgs{Script: []string{"x.y/RETRY", "ok"}},
			rivertype.JobStateCompleted, 2, ""},
		{"unknown code is kept", ScriptArgs{Script: []string{"x.y/MAYBE"}},
			rivertype.JobStateDiscarded, 1, "riverretry: dead_letter (handler_code): x.y: attempt 1 failed\n" +
				`policy: failure code: unknown handler code "MAYBE" (want RETRY, DISCARD, DEAD_LETTER or FAIL)`},
	}
	ids := make([]int64, len(cases))
	for i, tc := range cases {
		res, err := c.Insert(context.Background(), tc.args, nil)
		if err != nil {
			t.Fatalf("%s: insert: %v", tc.name, err)
		}
		ids[i] = res.Job.ID
	}
	e.waitFinal(30 * time.Second)
	for i, tc := range cases {
		job := getJob(t, c, ids[i])
		if job.State != tc.state || job.Attempt != tc.attempts || job.MaxAttempts != 5 {
			t.Errorf("%s: state %s attempt %d max_attempts %d, want %s %d 5", tc.name, job.State, job.Attempt, job.MaxAttempts, tc.state, tc.attempts)
		}
		wantErrs := tc.attempts
		if tc.state == rivertype.JobStateCompleted {
			wantErrs--
		}
		if len(job.Errors) != wantErrs {
			t.Errorf("%s: %d errors kept, want %d", tc.name, len(job.Errors), wantErrs)
			continue
		}
		if tc.lastErr != "" && job.Errors[wantErrs-1].Error != tc.lastErr {
			t.Errorf("%s: last error\n%q, want\n%q", tc.name, job.Errors[wantErrs-1].Error, tc.lastErr)
		}
	}
}

// TestPerJobPolicy: a policy carried by the job's args decides its
// max_attempts and delays; a job without one uses the client default.
func TestPerJobPolicy(t *testing.T) {
	e := newEnv(t)
	rk, err := riverretry.Parse([]byte(`{"max_attempts":2,"initial_interval":"PT0.1S","jitter":false,"backoff_strategy":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	c := e.client(rk, scriptWorkers(&j), 5)
	own := `{"max_attempts":3,"initial_interval":"PT0.3S","jitter":false,"backoff_strategy":"linear","max_interval":"PT1S"}`
	resOwn, err := c.Insert(context.Background(), ScriptPolicyArgs{Script: []string{"fail"}, Policy: own}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resDef, err := c.Insert(context.Background(), ScriptPolicyArgs{Script: []string{"fail"}}, nil) // nil policy: default
	if err != nil {
		t.Fatal(err)
	}
	// A policy given directly in the insert options' metadata.
	resMD, err := c.Insert(context.Background(), ScriptArgs{Script: []string{"fail"}},
		&river.InsertOpts{Metadata: riverretry.Metadata(mustPolicy(`{"max_attempts":4,"initial_interval":"PT0.1S","jitter":false,"backoff_strategy":"none"}`))})
	if err != nil {
		t.Fatal(err)
	}
	// The same key written with a JSON escape: PostgreSQL's jsonb stores it
	// unescaped, and the insert hook must read it as the worker later does.
	resEsc, err := c.Insert(context.Background(), ScriptArgs{Script: []string{"fail"}},
		&river.InsertOpts{Metadata: []byte(`{"retrykit\u005fpolicy":{"max_attempts":3,"initial_interval":"PT0.1S","jitter":false,"backoff_strategy":"none"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFinal(20 * time.Second)

	if jobEsc := getJob(t, c, resEsc.Job.ID); jobEsc.MaxAttempts != 3 || jobEsc.Attempt != 3 || !strings.Contains(string(jobEsc.Metadata), `"retrykit_policy"`) {
		t.Errorf("escaped key: max_attempts %d attempt %d metadata %s, want 3 3 with the key unescaped", jobEsc.MaxAttempts, jobEsc.Attempt, jobEsc.Metadata)
	}

	jobOwn := getJob(t, c, resOwn.Job.ID)
	if jobOwn.MaxAttempts != 3 || jobOwn.Attempt != 3 {
		t.Errorf("per-job policy: max_attempts %d attempt %d, want 3 3", jobOwn.MaxAttempts, jobOwn.Attempt)
	}
	var md map[string]json.RawMessage
	if err := json.Unmarshal(jobOwn.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	if got := mustPolicy(string(md[riverretry.MetadataKey])); !got.Equal(mustPolicy(own)) {
		t.Errorf("metadata %s = %s, want the policy %s", riverretry.MetadataKey, md[riverretry.MetadataKey], own)
	}
	checkSchedule(t, j.get(resOwn.Job.ID), []time.Duration{300 * time.Millisecond, 600 * time.Millisecond})

	jobDef := getJob(t, c, resDef.Job.ID)
	if jobDef.MaxAttempts != 2 || jobDef.Attempt != 2 || strings.Contains(string(jobDef.Metadata), riverretry.MetadataKey) {
		t.Errorf("default policy: max_attempts %d attempt %d metadata %s, want 2 2 without a policy", jobDef.MaxAttempts, jobDef.Attempt, jobDef.Metadata)
	}
	checkSchedule(t, j.get(resDef.Job.ID), []time.Duration{100 * time.Millisecond})

	jobMD := getJob(t, c, resMD.Job.ID)
	if jobMD.MaxAttempts != 4 || jobMD.Attempt != 4 {
		t.Errorf("metadata policy: max_attempts %d attempt %d, want 4 4", jobMD.MaxAttempts, jobMD.Attempt)
	}

	// A hand-written invalid policy in the metadata is refused at insert.
	_, err = c.Insert(context.Background(), ScriptArgs{}, &river.InsertOpts{Metadata: []byte(`{"retrykit_policy":{"max_attempts":-1}}`)})
	if err == nil || !strings.Contains(err.Error(), "riverretry: insert script: metadata retrykit_policy: policy: max_attempts") {
		t.Errorf("invalid metadata policy: err = %v", err)
	}
}

// TestManyJobs: a few thousand jobs with scripted failures, worked by
// three clients at once, all end in their expected state with their
// expected attempt counts, and none is lost or run too often.
func TestManyJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the load test")
	}
	const n = 3000
	e := newEnv(t)
	rk, err := riverretry.Parse([]byte(`{"max_attempts":3,"initial_interval":"PT0.05S","max_interval":"PT0.2S","jitter":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	workers := scriptWorkers(&j)
	inserter := e.client(rk, nil, 0)
	for range 3 {
		e.client(rk, workers, 30)
	}
	scripts := [][]string{
		{"ok"},                      // completed, attempt 1
		{"fail", "ok"},              // completed, attempt 2
		{"fail"},                    // exhausted: cancelled, attempt 3
		{"fail", "x.y/DEAD_LETTER"}, // discarded, attempt 2
		{"x.y/DISCARD"},             // cancelled, attempt 1
	}
	want := map[rivertype.JobState]int{}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: ScriptArgs{Script: scripts[i%len(scripts)]}}
	}
	start := time.Now()
	for lo := 0; lo < n; lo += 500 {
		if _, err := inserter.InsertMany(context.Background(), params[lo:min(lo+500, n)]); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFinal(3 * time.Minute)
	t.Logf("%d jobs worked in %v", n, time.Since(start))

	rows, err := e.pool.Query(context.Background(), "SELECT id, state::text, attempt, args, coalesce(array_length(errors, 1), 0) FROM "+e.schema+".river_job")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	seen := 0
	for rows.Next() {
		var id int64
		var state string
		var attempt, nerr int
		var args ScriptArgs
		if err := rows.Scan(&id, &state, &attempt, &args, &nerr); err != nil {
			t.Fatal(err)
		}
		seen++
		got[state]++
		wantState, wantAttempt := expectScript(args.Script)
		if state != string(wantState) || attempt != wantAttempt {
			t.Errorf("job %d %v: state %s attempt %d, want %s %d", id, args.Script, state, attempt, wantState, wantAttempt)
		}
		wantErrs := wantAttempt
		if wantState == rivertype.JobStateCompleted {
			wantErrs--
		}
		if nerr != wantErrs || len(j.get(id)) != wantErrs {
			t.Errorf("job %d: %d errors in the row, %d failed runs seen, want %d", id, nerr, len(j.get(id)), wantErrs)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != n {
		t.Errorf("%d jobs in the table, want %d", seen, n)
	}
	for _, s := range scripts {
		st, _ := expectScript(s)
		want[st] += n / len(scripts)
	}
	for st, w := range want {
		if got[string(st)] != w {
			t.Errorf("%d jobs %s, want %d (all: %v)", got[string(st)], st, w, got)
		}
	}
}

// expectScript is the outcome a ScriptArgs script must have under
// TestManyJobs's policy (3 attempts, on_exhaustion discard).
func expectScript(s []string) (rivertype.JobState, int) {
	for i := 1; i <= 3; i++ {
		switch st := step(s, i); {
		case st == "ok":
			return rivertype.JobStateCompleted, i
		case strings.HasSuffix(st, "/DEAD_LETTER"):
			return rivertype.JobStateDiscarded, i
		case strings.HasSuffix(st, "/DISCARD"):
			return rivertype.JobStateCancelled, i
		}
	}
	return rivertype.JobStateCancelled, 3
}

func getJob(t *testing.T, c *river.Client[pgxTx], id int64) *rivertype.JobRow {
	t.Helper()
	job, err := c.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("JobGet %d: %v", id, err)
	}
	return job
}

// waitJob polls the job's row until it is in a final state.
func waitJob(t *testing.T, c *river.Client[pgxTx], id int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		job := getJob(t, c, id)
		for _, s := range finalStates {
			if job.State == s {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s (attempt %d) after %v", id, job.State, job.Attempt, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return b
}
