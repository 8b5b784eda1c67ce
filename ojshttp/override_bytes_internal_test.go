package ojshttp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/retrykit/retrykit/executor"
)

// TestConcurrentOverridesReserveBytesAtomically: 40 dead-letter retries
// at once, each overriding args with about 1 MB, under WithMaxBytes 5 MB:
// the overrides accepted never take the held bytes past the limit (the
// check and the claim are PUSH's one step), and every refusal is 429
// queue_full naming override.
func TestConcurrentOverridesReserveBytesAtomically(t *testing.T) {
	const maxBytes = 5_000_000
	e := executor.New()
	h := New(e, WithMaxBytes(maxBytes))
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(path, body string) (int, string) {
		resp, err := http.Post(srv.URL+path, MediaType, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const n = 40
	for i := range n {
		q := fmt.Sprintf("q%d", i)
		if c, b := post("/ojs/v1/jobs", `{"type":"t","args":[1],"options":{"queue":"`+q+`","retry":{"max_attempts":1,"on_exhaustion":"dead_letter"}}}`); c != 201 {
			t.Fatalf("push: %d %s", c, b)
		}
		c, b := post("/ojs/v1/workers/fetch", `{"queues":["`+q+`"]}`)
		id := b[strings.Index(b, `"id":"`)+6:]
		id = id[:strings.IndexByte(id, '"')]
		if c != 200 {
			t.Fatalf("fetch: %d %s", c, b)
		}
		if c, b := post("/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"message":"x"}}`); c != 200 {
			t.Fatalf("nack: %d %s", c, b)
		}
	}
	held := h.store.weight()
	args := `["` + strings.Repeat("a", 1_000_000) + `"]`
	grow := int64(len(args) - len(`[1]`))
	fit := (maxBytes - held) / grow // the overrides that fit, one after another
	if fit < 1 || fit >= n {
		t.Fatalf("setup: %d held, %d fit", held, fit)
	}
	dead, _ := e.DeadLetters(executor.DeadLetterQuery{Limit: n})
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for _, d := range dead {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, b := post("/ojs/v1/dead-letter/"+d.ID+"/retry", `{"override":{"args":`+args+`}}`)
			switch {
			case c == 200:
				mu.Lock()
				accepted++
				mu.Unlock()
			case c != 429 || !strings.Contains(b, `"field":"override"`):
				t.Errorf("retry: %d %.300s", c, b)
			}
		}()
	}
	wg.Wait()
	if accepted < 1 || int64(accepted) > fit {
		t.Fatalf("%d overrides accepted, %d fit (held %d, limit %d)", accepted, fit, held, maxBytes)
	}
	if w := h.store.weight(); w > maxBytes {
		t.Fatalf("held %d bytes, limit %d", w, maxBytes)
	}
}
