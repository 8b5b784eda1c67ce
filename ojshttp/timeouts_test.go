package ojshttp_test

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/replay"
)

// budgetServer is a server on a manual clock with events and, when rules
// is not nil, automatic replay rules.
func budgetServer(t *testing.T, rules *replay.Rules) *testServer {
	t.Helper()
	c := executor.NewFakeClock(start)
	ev := ojshttp.NewEvents(64)
	opts := []executor.Option{executor.WithClock(c), executor.WithRand(backoff.Fixed(0.5)), executor.WithObserver(ev)}
	if rules != nil {
		opts = append(opts, executor.WithReplayRules(rules))
	}
	e := executor.New(opts...)
	srv := httptest.NewServer(ojshttp.New(e, ojshttp.WithManualClock(c), ojshttp.WithEvents(ev)))
	t.Cleanup(srv.Close)
	return &testServer{t: t, srv: srv, clock: c, exec: e}
}

func (s *testServer) fetchOne(queue string) map[string]any {
	s.t.Helper()
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{queue}})
	jobs := f["jobs"].([]any)
	if len(jobs) != 1 {
		s.t.Fatalf("fetch %s: %v", queue, f)
	}
	return jobs[0].(map[string]any)
}

func (s *testServer) eventTypes(queue string) []string {
	s.t.Helper()
	return eventTypes(s.must(200, "GET", "/ojs/v1/events?queues="+queue, nil))
}

// ojs-timeouts §9.1 end to end: timeout 60 s, total_timeout 600 s, a retry
// every 30 s. A failure at 510 s is retried (the retry ends exactly at the
// deadline); the next failure, at 540.001 s, discards the job at once
// although attempts remain.
func TestServeDiscardsEarlyWhenARetryCannotFinish(t *testing.T) {
	s := budgetServer(t, nil)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "report.generate", "args": []any{},
		"timeout": 60, "total_timeout": 600, "options": map[string]any{"queue": "r",
			"retry": map[string]any{"max_attempts": 10, "initial_interval": "PT30S", "backoff_coefficient": 1, "jitter": false}}}))["id"].(string)
	s.advance(480 * time.Second)
	s.fetchOne("r")
	s.advance(30 * time.Second)
	n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"type": "db.down", "message": "x"}})
	if n["state"] != "retryable" {
		t.Fatalf("failure at 510 s: %v", n)
	}
	s.advance(30 * time.Second)
	s.fetchOne("r")
	s.advance(time.Millisecond)
	n = s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"type": "db.down", "message": "x"}})
	if n["state"] != "discarded" || n["attempt"] != 2.0 {
		t.Fatalf("failure at 540.001 s: %v, want discarded at attempt 2 of 10", n)
	}
	info := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	if info["total_timeout"] != 600.0 || info["timeout"] != 60.0 {
		t.Fatalf("timeout fields not echoed: %v", info)
	}
	s.must(400, "POST", "/ojs/v1/jobs", map[string]any{"type": "a.b", "args": []any{}, "timeout": 300, "total_timeout": 299})
}

// ojs-timeouts §5.5, §7.3, §8, §11.1 end to end: a worker that stops
// sending heartbeats loses its attempt once heartbeat_timeout has passed
// since the last one; the job is retried with error type stalled, the
// error carries the §8 fields, and job.stalled is logged.
func TestServeRetriesAStalledJobWithTypeStalled(t *testing.T) {
	s := budgetServer(t, nil)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "ml.train", "args": []any{},
		"heartbeat_timeout": 60, "options": map[string]any{"queue": "gpu", "visibility_timeout_ms": 3600000,
			"retry": map[string]any{"jitter": false}}}))["id"].(string)
	s.fetchOne("gpu")
	s.advance(30 * time.Second)
	s.must(200, "POST", "/ojs/v1/workers/heartbeat", map[string]any{"job_id": id, "worker_id": "w1"})
	s.advance(60 * time.Second)
	if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["state"]; st != "active" {
		t.Fatalf("60 s after the heartbeat: %v, want active", st)
	}
	s.advance(time.Millisecond)
	info := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	e := info["error"].(map[string]any)
	if info["state"] != "retryable" || e["type"] != "stalled" || e["timeout_kind"] != "stalled" || e["limit_seconds"] != 60.0 || e["elapsed_seconds"] != 61.0 {
		t.Fatalf("after a missed heartbeat: %v", info)
	}
	if got := s.eventTypes("gpu"); !slices.Contains(got, "job.stalled") {
		t.Fatalf("events %v lack job.stalled", got)
	}
	s.advance(time.Second)
	if j := s.fetchOne("gpu"); j["attempt"] != 2.0 {
		t.Fatalf("retry: %v", j)
	}
}

// ojs-dead-letter §7 end to end: a rule with max_replays 2 replays a dead
// letter an hour after each dead-lettering, twice, shown in the dead
// letter list (replay_at, meta ojs.replay_*) and logged as
// dead_letter.replayed; the third time it is left.
func TestServeReplaysADeadLetterTwiceThenLeavesIt(t *testing.T) {
	rules, err := replay.Parse([]byte(`{"replay_rules": [{"name": "db-outage", "filter": {"error_type": "db.down"}, "delay": "PT1H", "max_replays": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := budgetServer(t, rules)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "invoice.generate", "args": []any{},
		"meta":    map[string]any{"tenant": "acme"},
		"options": map[string]any{"queue": "billing", "retry": map[string]any{"max_attempts": 1, "on_exhaustion": "dead_letter"}}}))["id"].(string)
	for round := 1; round <= 3; round++ {
		s.fetchOne("billing")
		n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"type": "db.down", "message": "x"}})
		if n["state"] != "discarded" || n["dead_letter"] != true {
			t.Fatalf("round %d: %v", round, n)
		}
		dl := s.must(200, "GET", "/ojs/v1/dead-letter?queue=billing", nil)["jobs"].([]any)
		if len(dl) != 1 {
			t.Fatalf("round %d: dead letters %v", round, dl)
		}
		d := dl[0].(map[string]any)
		if round <= 2 {
			if at := ts(t, d["replay_at"]); !at.Equal(s.clock.Now().Add(time.Hour)) || d["replay_rule"] != "db-outage" {
				t.Fatalf("round %d: planned replay %v", round, d)
			}
		} else if _, planned := d["replay_at"]; planned {
			t.Fatalf("a third replay planned: %v", d)
		}
		s.advance(time.Hour)
		info := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
		meta := info["meta"].(map[string]any)
		want := min(round, 2)
		if meta["tenant"] != "acme" || meta["ojs.replay_count"] != float64(want) || meta["ojs.replay_rule"] != "db-outage" {
			t.Fatalf("round %d: meta %v", round, meta)
		}
		if round <= 2 && info["state"] != "available" {
			t.Fatalf("round %d: an hour later %v, want available", round, info["state"])
		}
		if round == 3 && info["state"] != "discarded" {
			t.Fatalf("after two replays: %v, want left in the dead letter set", info["state"])
		}
	}
	n := 0
	for _, typ := range s.eventTypes("billing") {
		if typ == "dead_letter.replayed" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d dead_letter.replayed events, want 2", n)
	}
	r := s.must(200, "GET", "/ojs/v1/dead-letter/replay-rules", nil)
	if rs := r["replay_rules"].([]any); len(rs) != 1 || rs[0].(map[string]any)["max_replays"] != 2.0 {
		t.Fatalf("replay-rules: %v", r)
	}
}
