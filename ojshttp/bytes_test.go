package ojshttp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/ojshttp"
)

// raw sends body and returns the status and the answer's bytes.
func (ts *testServer) raw(method, path, body string) (int, []byte) {
	ts.t.Helper()
	req, _ := http.NewRequest(method, ts.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ojshttp.MediaType)
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// bigArgs is a PUSH body whose args weigh about n bytes.
func bigArgs(queue string, n int, retry string) string {
	return fmt.Sprintf(`{"type":"t","args":[%q],"options":{"queue":%q,"retry":%s}}`, strings.Repeat("a", n), queue, retry)
}

// answerLimit is the most an answer may weigh: the documented cut
// (8 MiB) plus one job at its limits.
const answerLimit = 8<<20 + 3<<20

// TestAckResultCountsAgainstMaxBytes: ACK results are job data; an ACK
// whose result the server cannot hold is refused with 429 queue_full and
// the job stays active, so the results held never pass WithMaxBytes.
func TestAckResultCountsAgainstMaxBytes(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxBytes(2_000_000))
	result := `"` + strings.Repeat("r", 300_000) + `"`
	held, refused := 0, 0
	for i := 0; i < 12; i++ {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "ack"}})
		id := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"ack"}})["job"].(map[string]any)["id"].(string)
		code, m := s.do("POST", "/ojs/v1/workers/ack", `{"job_id":"`+id+`","result":`+result+`}`)
		switch code {
		case 200:
			held++
		case 429:
			refused++
			if e := m["error"].(map[string]any); e["code"] != "queue_full" {
				t.Fatalf("refused ACK: %v", m)
			}
			if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["state"]; st != "active" {
				t.Fatalf("a refused ACK left the job %v, want active", st)
			}
		default:
			t.Fatalf("ACK: %d %v", code, m)
		}
	}
	if refused == 0 || held*300_000 > 2_000_000 {
		t.Fatalf("%d results of 300 KB held under WithMaxBytes(2 MB), %d refused", held, refused)
	}
}

// TestErrorHistoryCountsAgainstMaxBytes: the details of FAIL requests are
// kept in the error history and count against WithMaxBytes; a FAIL beyond
// it is refused with 429 and the job stays active.
func TestErrorHistoryCountsAgainstMaxBytes(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxBytes(600_000))
	details := `{"d":"` + strings.Repeat("d", 40_000) + `"}`
	refused := false
	for i := 0; i < 3 && !refused; i++ {
		q := fmt.Sprintf("f%d", i)
		id := job(s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"`+q+`","retry":{"max_attempts":100,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false}}}`))["id"].(string)
		for k := 0; k < 25; k++ {
			s.advance(time.Second)
			s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{q}})
			code, m := s.do("POST", "/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"type":"e","message":"m","details":`+details+`}}`)
			if code == 429 {
				if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["state"]; st != "active" {
					t.Fatalf("a refused FAIL left the job %v, want active", st)
				}
				refused = true
				break
			}
			if code != 200 {
				t.Fatalf("FAIL: %d %v", code, m)
			}
		}
	}
	if !refused {
		t.Fatal("75 failures of 40 KB details accepted under WithMaxBytes(600 KB)")
	}
}

// TestFetchClaimsWhatItDelivers: a FETCH of many large jobs answers at
// most about 8 MiB and claims only the jobs it carries; the rest stay
// available for the next FETCH.
func TestFetchClaimsWhatItDelivers(t *testing.T) {
	s := newTestServer(t)
	const n = 10 // 10 MB: more than one answer carries
	for i := 0; i < n; i++ {
		s.must(201, "POST", "/ojs/v1/jobs", bigArgs("big", 1_000_000, `{}`))
	}
	code, b := s.raw("POST", "/ojs/v1/workers/fetch", `{"queues":["big"],"count":10}`)
	var m struct{ Jobs []json.RawMessage }
	if err := json.Unmarshal(b, &m); code != 200 || err != nil {
		t.Fatalf("fetch: %d %v", code, err)
	}
	if len(b) > answerLimit || len(m.Jobs) == 0 || len(m.Jobs) == n {
		t.Fatalf("FETCH count 10 of 1 MB jobs: %d jobs in %d bytes", len(m.Jobs), len(b))
	}
	st := s.must(200, "GET", "/ojs/v1/queues/big/stats", nil)["stats"].(map[string]any)
	if st["active"] != float64(len(m.Jobs)) || st["available"] != float64(n-len(m.Jobs)) {
		t.Fatalf("after a FETCH that carried %d jobs: %v", len(m.Jobs), st)
	}
}

// TestDeadLetterPagesCutBySize: a dead letter page of large jobs is cut
// by bytes with has_more, and following the offsets lists every job once.
func TestDeadLetterPagesCutBySize(t *testing.T) {
	s := newTestServer(t)
	const n = 10 // 10 MB: more than one page carries
	for i := 0; i < n; i++ {
		id := job(s.must(201, "POST", "/ojs/v1/jobs", bigArgs("dl", 1_000_000, `{"max_attempts":1,"on_exhaustion":"dead_letter"}`)))["id"].(string)
		s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"dl"}})
		s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"message": "x"}})
	}
	seen := map[string]bool{}
	for offset, pages := 0, 0; ; pages++ {
		code, b := s.raw("GET", fmt.Sprintf("/ojs/v1/dead-letter?limit=100&offset=%d", offset), "")
		var m struct {
			Jobs       []struct{ ID string }
			Pagination struct {
				HasMore bool `json:"has_more"`
			}
		}
		if err := json.Unmarshal(b, &m); code != 200 || err != nil {
			t.Fatalf("page: %d %v", code, err)
		}
		if len(b) > answerLimit || len(m.Jobs) == 0 {
			t.Fatalf("page %d: %d jobs in %d bytes", pages, len(m.Jobs), len(b))
		}
		for _, j := range m.Jobs {
			if seen[j.ID] {
				t.Fatalf("job %s listed twice", j.ID)
			}
			seen[j.ID] = true
		}
		offset += len(m.Jobs)
		if !m.Pagination.HasMore {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("the pages listed %d of %d dead letters", len(seen), n)
	}
}

// TestEventsDoNotCopyLargeResults: job.completed carries a result only up
// to 4 KiB (result_bytes beyond), so the event log does not hold a second
// copy of every result.
func TestEventsDoNotCopyLargeResults(t *testing.T) {
	s := newTestServer(t, ojshttp.WithEvents(ojshttp.NewEvents(0)))
	for i := 0; i < 4; i++ {
		id := job(s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"ev"}}`))["id"].(string)
		s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"ev"}})
		s.must(200, "POST", "/ojs/v1/workers/ack", `{"job_id":"`+id+`","result":"`+strings.Repeat("r", 1_000_000)+`"}`)
	}
	code, b := s.raw("GET", "/ojs/v1/events?limit=1000", "")
	if code != 200 || len(b) > 1<<20 || !strings.Contains(string(b), `"result_bytes":1000002`) {
		t.Fatalf("events after 4 results of 1 MB: %d, %d bytes", code, len(b))
	}
}
