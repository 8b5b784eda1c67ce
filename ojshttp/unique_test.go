package ojshttp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"
)

// uniqueJob is a PUSH body with options.unique u.
func uniqueJob(typ string, args []any, u map[string]any, opts map[string]any) map[string]any {
	o := map[string]any{"unique": u}
	for k, v := range opts {
		o[k] = v
	}
	return map[string]any{"type": typ, "args": args, "options": o}
}

// TestUniqueConflicts follows ojs-unique-jobs §5: reject answers 409
// duplicate naming the existing job; ignore answers 200 with the existing
// job and deduplicated true; replace cancels the existing job and creates
// the new one; an active job is never replaced.
func TestUniqueConflicts(t *testing.T) {
	s := newTestServer(t)
	u := func(on string) map[string]any {
		return map[string]any{"keys": []string{"type", "args"}, "args_keys": []string{"user"}, "on_conflict": on}
	}
	first := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7, "body": "a"}}, u("reject"), nil)))
	_, m := s.do("POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"body": "b", "user": 7}}, u("reject"), nil))
	e := m["error"].(map[string]any)
	d := e["details"].(map[string]any)
	if e["code"] != "duplicate" || d["existing_job_id"] != first["id"] || d["existing_job_state"] != "available" {
		t.Fatalf("reject: %v", m)
	}
	// The key is SHA-256 of the canonical JSON of the dimensions (§4.3).
	sum := sha256.Sum256([]byte(`{"args":{"user":7},"type":"mail.send"}`))
	if d["uniqueness_key"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("uniqueness_key %v", d["uniqueness_key"])
	}
	// Another user, another type: no conflict.
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 8}}, u("reject"), nil))
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("sms.send", []any{map[string]any{"user": 7}}, u("reject"), nil))

	ig := s.must(200, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7}}, u("ignore"), nil))
	if ig["deduplicated"] != true || job(ig)["id"] != first["id"] {
		t.Fatalf("ignore: %v", ig)
	}
	rep := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7, "body": "new"}}, u("replace"), nil)))
	if rep["id"] == first["id"] {
		t.Fatal("replace kept the old job")
	}
	if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+first["id"].(string), nil))["state"]; st != "cancelled" {
		t.Fatalf("replaced job is %v, want cancelled", st)
	}
	// Active: replace falls back to reject.
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}, "count": 10})
	s.must(409, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7}}, u("replace"), nil))
	// Completed is outside the default states: a new job is allowed.
	s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": rep["id"]})
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7}}, u("reject"), nil))
}

// TestUniquePeriodStatesSchedule: period counts from the existing job's
// created_at (§7.2); states may include terminal ones (§6.3);
// replace_except_schedule keeps the existing scheduled_at (§5.3).
func TestUniquePeriodStatesSchedule(t *testing.T) {
	s := newTestServer(t)
	u := map[string]any{"period": "PT1M", "states": []string{"completed", "available"}}
	j := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{}, u, nil)))
	s.advance(59 * time.Second)
	s.must(409, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{}, u, nil))
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}})
	s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": j["id"]})
	s.must(409, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{}, u, nil)) // completed counts
	s.advance(time.Second)
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{}, u, nil)) // period over

	at := start.Add(time.Hour).Format(time.RFC3339)
	res := map[string]any{"keys": []string{"queue"}, "on_conflict": "replace_except_schedule"}
	old := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("n.send", []any{"v1"}, res, map[string]any{"scheduled_at": at, "queue": "n"})))
	later := start.Add(5 * time.Hour).Format(time.RFC3339)
	nw := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("n.send", []any{"v2"}, res, map[string]any{"scheduled_at": later, "queue": "n"})))
	if ts(t, nw["scheduled_at"]) != ts(t, old["scheduled_at"]) || nw["args"].([]any)[0] != "v2" {
		t.Fatalf("replace_except_schedule: old %v new %v", old, nw)
	}
}

// TestUniqueInvalid: invalid policies are 400 invalid_request naming the
// field (§2.2, §6.2).
func TestUniqueInvalid(t *testing.T) {
	s := newTestServer(t)
	for _, u := range []any{
		map[string]any{"keys": []string{"Type"}},
		map[string]any{"keys": []string{"meta"}},
		map[string]any{"keys": []string{"args"}, "args_keys": []string{"missing"}},
		map[string]any{"states": []string{"done"}},
		map[string]any{"states": []string{}},
		map[string]any{"period": "1h"},
		map[string]any{"period": "PT0S"},
		map[string]any{"on_conflict": "merge"},
		map[string]any{"other": 1},
		"reject", nil, []any{},
	} {
		_, m := s.do("POST", "/ojs/v1/jobs", uniqueJob("t", []any{map[string]any{"a": 1}}, nil, map[string]any{"unique": u}))
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != "invalid_request" {
			t.Errorf("unique %v: %v", u, m)
		}
	}
}

// TestUniqueRace: of many concurrent PUSHes of one unique job exactly one
// is created (the check and the insert are atomic).
func TestUniqueRace(t *testing.T) {
	s := newTestServer(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := s.do("POST", "/ojs/v1/jobs", uniqueJob("once", []any{1}, map[string]any{"keys": []string{"args"}}, nil))
			mu.Lock()
			codes[c]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[409] != 31 {
		t.Fatalf("statuses %v, want one 201 and 31 409", codes)
	}
}

// TestUnknownOptionsKept: unknown options are preserved and echoed, never
// a reason to refuse the job (ojs-core §5.5, RK-153).
func TestUnknownOptionsKept(t *testing.T) {
	s := newTestServer(t)
	j := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"metadata": map[string]any{"k": "v"}, "x_flag": true}}))
	got := job(s.must(200, "GET", "/ojs/v1/jobs/"+j["id"].(string), nil))
	if md, _ := got["metadata"].(map[string]any); md["k"] != "v" || got["x_flag"] != true {
		t.Fatalf("unknown options not echoed: %v", got)
	}
}

// TestUniqueBatch: a batch may hold unique jobs; two of them with one key
// conflict; an ignored one answers with the existing job.
func TestUniqueBatch(t *testing.T) {
	s := newTestServer(t)
	u := map[string]any{"keys": []string{"args"}, "on_conflict": "ignore"}
	first := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("b", []any{1}, u, nil)))
	m := s.must(201, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
		uniqueJob("b", []any{2}, u, nil), uniqueJob("b", []any{1}, u, nil)}})
	jobs := m["jobs"].([]any)
	if len(jobs) != 2 || jobs[1].(map[string]any)["id"] != first["id"] || m["deduplicated"].([]any)[0] != 1.0 {
		t.Fatalf("batch: %v", m)
	}
	s.must(409, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
		uniqueJob("b", []any{3}, u, nil), uniqueJob("b", []any{3}, u, nil)}})
}
