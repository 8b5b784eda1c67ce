package live_test

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

var figureNum = regexp.MustCompile(`(\d+) retries`)
var requestsNum = regexp.MustCompile(`requests sent: (\d+)`)

// BenchmarkRun is one full run of the checker against retrykit serve over
// loopback (in process); it reports the checked retries and the requests
// per checked retry besides the time and allocations of a run. Run it with
// -benchtime=3x: each run takes about 2 s, mostly waiting.
func BenchmarkRun(b *testing.B) {
	hs := httptest.NewServer(ojshttp.New(executor.New()))
	defer hs.Close()
	b.ReportAllocs()
	var retries, requests int
	for i := 0; i < b.N; i++ {
		rep, err := live.Run(context.Background(), hs.URL)
		if err != nil || !rep.OK() {
			b.Fatalf("run %d: %v, %+v", i, err, rep.Totals)
		}
		if m := figureNum.FindStringSubmatch(rep.Figures[0]); m != nil {
			n, _ := strconv.Atoi(m[1])
			retries += n
		}
		for _, f := range rep.Figures {
			if m := requestsNum.FindStringSubmatch(f); m != nil {
				n, _ := strconv.Atoi(m[1])
				requests += n
			}
		}
	}
	if retries > 0 {
		b.ReportMetric(float64(retries)/float64(b.N), "retries/run")
		b.ReportMetric(float64(requests)/float64(retries), "requests/retry")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(retries), "ns/retry")
	}
}
