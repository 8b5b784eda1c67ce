package live_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// TestJitterModeWithoutSpreadFailsAfterTwoRounds: a server whose every
// jitter draw is 0.9 (full jitter of 10 s always 9 s) or 0.1
// (decorrelated always 12 s) never reaches the far side of the mode's
// range: http-ext-jitter-mode observes a second round of jobs and then
// fails, naming the mode and all the jobs seen.
func TestJitterModeWithoutSpreadFailsAfterTwoRounds(t *testing.T) {
	for _, tc := range []struct {
		draw backoff.Fixed
		want string
	}{
		{0.9, "full: none of 24 first delays (2 rounds of 12 jobs) is on the far side of 5s"},
		{0.1, "decorrelated: none of 16 first delays (2 rounds of 8 jobs) is on the far side of 15s"},
	} {
		hs := httptest.NewServer(ojshttp.New(executor.New(executor.WithRand(tc.draw))))
		rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0), live.WithIDs("http-ext-jitter-mode"))
		hs.Close()
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Status != conformance.StatusFail || !strings.Contains(rep.Results[0].Reason, tc.want) {
			t.Errorf("draw %v: results %+v, want a failure saying %q", tc.draw, rep.Results, tc.want)
		}
	}
}
