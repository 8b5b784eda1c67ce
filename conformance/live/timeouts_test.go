package live_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// A server whose manifest does not claim the timeouts extension has the
// timeouts checks reported as not run, never failed; one that claims it
// (retrykit serve) passes them.
func TestTimeoutChecksRunOnlyWhenClaimed(t *testing.T) {
	ids := []string{"http-total-timeout-no-time-left", "http-stalled"}
	srv := ojshttp.New(executor.New())
	unclaimed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ojs/manifest" {
			w.Header().Set("Content-Type", ojshttp.MediaType)
			_, _ = w.Write([]byte(`{"specversion":"1.0","implementation":{"name":"no-timeouts","version":"0"},"extensions":[]}`))
			return
		}
		srv.ServeHTTP(w, r)
	})
	for _, tc := range []struct {
		name    string
		h       http.Handler
		claimed bool
	}{{"unclaimed", unclaimed, false}, {"claimed", srv, true}} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(tc.h)
			defer hs.Close()
			rep, err := live.Run(context.Background(), hs.URL, live.WithIDs(ids...))
			if err != nil {
				t.Fatal(err)
			}
			if tc.claimed {
				if rep.Totals.Pass != 2 || !rep.OK() {
					t.Fatalf("claimed: %+v %v", rep.Totals, rep.Results)
				}
				return
			}
			if len(rep.NotRun) != 2 || rep.Totals.Fail+rep.Totals.Error != 0 {
				t.Fatalf("unclaimed: not run %v, totals %+v", rep.NotRun, rep.Totals)
			}
			for _, r := range rep.Results {
				if r.Status != conformance.StatusPass {
					t.Errorf("%s: %s", r.ID, r.Status)
				}
			}
		})
	}
}
