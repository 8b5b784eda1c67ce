package ojshttp_test

import (
	"slices"
	"testing"
)

// ojs-core §5: higher priority is fetched first, FIFO among equals; the
// named levels HIGH, NORMAL, LOW are 10, 0, -10, shown as numbers (RK-190).
func TestPriorityOrdersFetch(t *testing.T) {
	s := newTestServer(t)
	push := func(p any) string {
		j := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "pq", "priority": p}}))
		return j["id"].(string)
	}
	low, high, normal := push(-10), push(10), push(0)
	named := push("high")
	lowName := push("Low")
	top := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "queue": "pq", "priority": 100}))["id"].(string)
	var got []string
	var prios []float64
	for {
		f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"pq"}})
		js := f["jobs"].([]any)
		if len(js) == 0 {
			break
		}
		got = append(got, js[0].(map[string]any)["id"].(string))
		prios = append(prios, js[0].(map[string]any)["priority"].(float64))
	}
	if want := []string{top, high, named, normal, low, lowName}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
	if want := []float64{100, 10, 10, 0, -10, -10}; !slices.Equal(prios, want) {
		t.Fatalf("priorities %v, want %v", prios, want)
	}
	for _, p := range []any{101, -101, 1.5, "urgent", true} {
		s.must(400, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"priority": p}})
	}
}
