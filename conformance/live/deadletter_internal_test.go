package live

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A dead letter ahead of the page boundary is deleted between two page
// reads (another check retried it): every later entry moves a place
// forward, and the wanted one, first on the second page before the shift,
// is on no page of that read. The lookup must still find it.
func TestDeadLetterFindSurvivesAShiftingList(t *testing.T) {
	var mu sync.Mutex
	list := []string{"a", "b", "want", "c", "d"}
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if off == 2 && reads == 1 {
			list = list[1:] // "a" leaves the list after the first page was read
		}
		reads++
		var jobs []map[string]string
		for i := off; i < len(list) && i < off+2; i++ { // 2 a page, whatever the limit
			jobs = append(jobs, map[string]string{"id": list[i], "queue": "q"})
		}
		w.Header().Set("Content-Type", contentType)
		json.NewEncoder(w).Encode(map[string]any{"jobs": jobs, "pagination": map[string]any{"has_more": off+2 < len(list)}})
	}))
	defer srv.Close()
	c := &client{root: srv.URL, base: srv.URL + "/ojs/v1", hc: srv.Client(), timeout: 5 * time.Second}
	r, err := c.deadLetterFind(context.Background(), "q", "want")
	if err != nil {
		t.Fatal(err)
	}
	if !r.found["want"] {
		t.Fatalf("the wanted dead letter was not found after %d pages (list %v)", r.pages, list)
	}
	if r.pages != 3 {
		t.Errorf("%d pages; want 3: a first read of 2 pages that skips the wanted one, then a second that finds it on its first page", r.pages)
	}
}
