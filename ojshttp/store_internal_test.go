package ojshttp

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// TestPlainEntryPackedInSlot checks that an entry setting only size and
// born is kept without an extra, reads back with the same size and a born
// at most a second later (never earlier: a sweep must not find it older
// than it is), and that an entry with anything else keeps its extra.
func TestPlainEntryPackedInSlot(t *testing.T) {
	st := newStore()
	born := st.epoch.Add(90*time.Minute + 300*time.Millisecond)
	st.put("a", &extra{size: 531, born: born})
	if sl := st.m["a"]; sl.x != nil {
		t.Fatalf("plain entry kept its extra: %+v", sl)
	}
	got := st.get("a")
	if got.size != 531 || got.born.Before(born) || got.born.Sub(born) >= time.Second {
		t.Fatalf("plain entry reads back size %d born %v, want 531 and %v rounded up to the second", got.size, got.born, born)
	}
	if st.weight() != 531 {
		t.Fatalf("weight %d, want 531", st.weight())
	}
	rich := &extra{size: 600, born: born, meta: json.RawMessage(`{"k":1}`)}
	st.put("b", rich)
	if st.m["b"].x != rich || st.get("b") != rich {
		t.Fatalf("entry with meta not kept as is")
	}
	st.update("a", func(x *extra) { x.result = json.RawMessage(`[1,2]`) })
	if x := st.get("a"); x.result == nil || x.size != 531+5 || st.m["a"].x == nil {
		t.Fatalf("after a result: %+v", x)
	}
	if st.weight() != 531+5+600 {
		t.Fatalf("weight %d, want %d", st.weight(), 531+5+600)
	}
	st.drop("a")
	st.drop("b")
	if st.weight() != 0 || len(st.m) != 0 {
		t.Fatalf("after drops: weight %d, %d entries", st.weight(), len(st.m))
	}
	// A restore of a packed entry puts the old one back.
	x := &extra{size: 700, born: born}
	old := st.put("c", x)
	st.restore("c", x, old)
	if _, ok := st.m["c"]; ok || st.weight() != 0 {
		t.Fatalf("restore left the entry (weight %d)", st.weight())
	}
}

// TestJobsSharePolicyText checks that jobs pushed with the same retry
// text hold one parsed policy, a text equal to the defaults the default
// policy itself, and that a text too long to share counts against the
// job's bytes.
func TestJobsSharePolicyText(t *testing.T) {
	e := executor.New()
	s := New(e)
	push := func(retry string) (executor.Job, int64) {
		t.Helper()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/ojs/v1/jobs",
			strings.NewReader(`{"type":"t","args":[],"options":{"retry":`+retry+`}}`)))
		var m struct{ Job struct{ ID string } }
		if json.Unmarshal(rec.Body.Bytes(), &m); rec.Code != 201 {
			t.Fatalf("push: %d %s", rec.Code, rec.Body)
		}
		j, err := e.Get(m.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j, s.store.get(j.ID).size
	}
	a, sa := push(`{"max_attempts":5}`)
	b, sb := push(` {"max_attempts":5} `)
	if a.Policy != b.Policy {
		t.Errorf("two jobs with the retry text {\"max_attempts\":5} hold two policies")
	}
	// The first job brings the policy and pays for it; the second shares it.
	if want := int64(entryOverhead + 2 + len(`{"max_attempts":5}`) + unsharedPolicyCost); sa != want {
		t.Errorf("first job with a new policy: size %d, want %d", sa, want)
	}
	if sb != entryOverhead+2 {
		t.Errorf("job sharing a policy: size %d, want %d", sb, entryOverhead+2)
	}
	if d, _ := push(`{"max_attempts":3,"initial_interval":"PT1S"}`); d.Policy != policy.Default() {
		t.Errorf("a text equal to the defaults holds its own policy")
	}
	long := `{"max_attempts":5,"non_retryable_errors":["` + strings.Repeat("x", 1000) + `"` + strings.Repeat(`,"`+strings.Repeat("y", 1000)+`"`, maxPolicyText/1000) + `]}`
	l, sl := push(long)
	if want := int64(entryOverhead + 2 + len(long) + unsharedPolicyCost); sl != want {
		t.Errorf("unshared policy of %d bytes: job size %d, want %d", len(long), sl, want)
	}
	if l2, _ := push(long); l2.Policy == l.Policy {
		t.Errorf("a policy text over %d bytes was shared", maxPolicyText)
	}
}

// TestServerStructuresCountAgainstMaxBytes checks the job data a PUSH
// counts for the structures the server keeps beside the caller's bytes:
// unknown fields, tags and options.unique. The expected sizes are written
// out from the overheads' definitions.
func TestServerStructuresCountAgainstMaxBytes(t *testing.T) {
	s := New(executor.New())
	size := func(body string) int64 {
		t.Helper()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/ojs/v1/jobs", strings.NewReader(body)))
		var m struct{ Job struct{ ID string } }
		if json.Unmarshal(rec.Body.Bytes(), &m); rec.Code != 201 {
			t.Fatalf("push: %d %s", rec.Code, rec.Body)
		}
		return s.store.get(m.Job.ID).size
	}
	// args [] (2 bytes) and the entry.
	if got, want := size(`{"type":"t","args":[]}`), int64(2+entryOverhead); got != want {
		t.Errorf("plain job: %d, want %d", got, want)
	}
	// Three unknown fields: "xa":1, "xb":22, "xc":"c" (2+1, 2+2, 2+3 bytes).
	if got, want := size(`{"type":"t","args":[],"xa":1,"xb":22,"xc":"c"}`), int64(2+entryOverhead+(3+4+5)+unknownOverhead+3*unknownFieldOverhead); got != want {
		t.Errorf("three unknown fields: %d, want %d", got, want)
	}
	// Two tags "ab" and "c".
	if got, want := size(`{"type":"t","args":[],"options":{"tags":["ab","c"]}}`), int64(2+entryOverhead+(2+tagOverhead)+(1+tagOverhead)); got != want {
		t.Errorf("two tags: %d, want %d", got, want)
	}
	// options.unique {"keys":["args"]} (17 bytes) and its 64-digit key.
	if got, want := size(`{"type":"t","args":[7],"options":{"unique":{"keys":["args"]}}}`), int64(3+entryOverhead+17+64+uniqueOverhead); got != want {
		t.Errorf("unique job: %d, want %d", got, want)
	}
}
