package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// slowProxy serves a correct server (retrykit serve) behind a proxy that
// can make it look slow: answer, called before each request is
// forwarded, may hold the answer back (delay, after forwarding) or
// withhold it (a FETCH answered with no job, not forwarded).
type slowProxy struct {
	mu      sync.Mutex
	fetched map[string]int // jobs handed out, by queue
	// plan decides for one request: op ("FETCH", "FAIL", ...), its
	// queue (FETCH only) and the jobs already handed out from it.
	plan func(op, queue string, handed int) (delay time.Duration, withhold bool)
}

func (p *slowProxy) start(t *testing.T) string {
	t.Helper()
	backend := httptest.NewServer(ojshttp.New(executor.New()))
	t.Cleanup(backend.Close)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		op, queue := "", ""
		switch {
		case strings.HasSuffix(r.URL.Path, "/workers/fetch"):
			op = "FETCH"
			var f struct{ Queues []string }
			_ = json.Unmarshal(body, &f)
			if len(f.Queues) > 0 {
				queue = f.Queues[0]
			}
		case strings.HasSuffix(r.URL.Path, "/workers/nack"):
			op = "FAIL"
		}
		p.mu.Lock()
		delay, withhold := p.plan(op, queue, p.fetched[queue])
		p.mu.Unlock()
		if withhold {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jobs":[]}`))
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, backend.URL+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if op == "FETCH" && bytes.Contains(answer, []byte(`"id"`)) {
			p.mu.Lock()
			p.fetched[queue]++
			p.mu.Unlock()
		}
		time.Sleep(delay)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A correct server whose retries are withheld past the late bound (the
// first three retries it would hand out, FETCH answered with no job) is
// not said to disagree, nor does the run stop: the case is played again,
// and when no play can be observed it is counted inconclusive with the
// reason; the run goes on with its other jobs.
func TestFuzzServerWithheldRetryIsInconclusive(t *testing.T) {
	stalled := map[string]bool{}
	p := &slowProxy{fetched: map[string]int{}, plan: func(op, queue string, handed int) (time.Duration, bool) {
		if op != "FETCH" || handed == 0 {
			return 0, false
		}
		if !stalled[queue] && len(stalled) < 3 {
			stalled[queue] = true
		}
		return 0, stalled[queue]
	}}
	url := p.start(t)
	res, err := live.FuzzServer(context.Background(), url, 20, 1, time.Minute, live.WithLateBound(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs, %d inconclusive, %d replayed: %q", res.Jobs, res.Inconclusive, res.Reobserved, res.Reasons)
	if res.Found != nil || res.Stopped != "" || res.Jobs != 20 {
		t.Fatalf("found %+v, stopped %q after %d jobs of 20", res.Found, res.Stopped, res.Jobs)
	}
	// One case met the three withheld retries: played 3 times, then
	// counted inconclusive. On a busy host another case may miss the
	// 150 ms late bound too and be played again (or be inconclusive as
	// well): each inconclusive case was played again twice first.
	lateBound := slices.ContainsFunc(res.Reasons, func(r string) bool {
		return strings.Contains(r, "not fetchable within 150ms after its next_attempt_at")
	})
	if res.Inconclusive < 1 || res.Reobserved < 2*res.Inconclusive || len(res.Reasons) < 1 || !lateBound {
		t.Errorf("inconclusive %d, replayed %d, reasons %q; want at least 1 case, 2 replays for each, the late bound named", res.Inconclusive, res.Reobserved, res.Reasons)
	}
}

// A correct server whose answers come slowly, some after the client's
// timeout (a FAIL held 400 ms under a 150 ms timeout), is never said to
// disagree: a slow answer widens the window its delay is judged in, and
// an answer not received is played again, or inconclusive.
func TestFuzzServerSlowAnswersNeverDisagree(t *testing.T) {
	var fails, all atomic.Int64
	p := &slowProxy{fetched: map[string]int{}, plan: func(op, _ string, _ int) (time.Duration, bool) {
		// the 2nd and 3rd FAIL held past the timeout, counted among FAILs
		// alone, so how many FETCH polls came before does not move them
		if op == "FAIL" {
			if n := fails.Add(1); n == 2 || n == 3 {
				return 400 * time.Millisecond, false
			}
		}
		if all.Add(1)%3 == 0 {
			return 40 * time.Millisecond, false
		}
		return 0, false
	}}
	url := p.start(t)
	res, err := live.FuzzServer(context.Background(), url, 12, 2, time.Minute, live.WithTimeout(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs, %d inconclusive, %d replayed: %q", res.Jobs, res.Inconclusive, res.Reobserved, res.Reasons)
	if res.Found != nil || res.Stopped != "" || res.Jobs != 12 {
		t.Fatalf("found %+v, stopped %q after %d jobs of 12", res.Found, res.Stopped, res.Jobs)
	}
	if res.Reobserved == 0 {
		t.Errorf("no play repeated, though FAIL answers timed out")
	}
}

// Under CPU load (busy goroutines on every P of this process) a correct
// server is never said to disagree, and the run does not stop: whatever
// it could not observe in time is played again or inconclusive.
func TestFuzzServerUnderCPULoadNeverDisagrees(t *testing.T) {
	hs := httptest.NewServer(ojshttp.New(executor.New()))
	defer hs.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; ; x++ {
				select {
				case <-stop:
					return
				default:
				}
				for range 100_000 {
					x ^= x << 1
				}
			}
		}()
	}
	res, err := live.FuzzServer(context.Background(), hs.URL, 10, 3, time.Minute)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs, %d inconclusive, %d replayed: %q", res.Jobs, res.Inconclusive, res.Reobserved, res.Reasons)
	if res.Found != nil || res.Stopped != "" {
		t.Fatalf("found %+v, stopped %q", res.Found, res.Stopped)
	}
}

// A replay that cannot observe its case in time (every retry withheld)
// says so with ErrInconclusive: not a disagreement, not an agreement.
func TestReplayCaseWithheldIsInconclusive(t *testing.T) {
	p := &slowProxy{fetched: map[string]int{}, plan: func(op, _ string, handed int) (time.Duration, bool) {
		return 0, op == "FETCH" && handed > 0
	}}
	url := p.start(t)
	c := &live.FuzzCase{Policy: map[string]any{"initial_interval": "PT0.01S", "jitter": false, "max_attempts": 2},
		Failures: []live.FuzzFailure{{Type: "fz.timeout"}, {Type: "fz.timeout"}}}
	bad, left, err := live.ReplayCase(context.Background(), url, c, live.WithLateBound(100*time.Millisecond))
	if bad || !errors.Is(err, live.ErrInconclusive) {
		t.Fatalf("disagrees %v, err %v; want inconclusive", bad, err)
	}
	if !strings.Contains(left, "could not remove 0") {
		t.Errorf("cleanup: %q", left)
	}
}
