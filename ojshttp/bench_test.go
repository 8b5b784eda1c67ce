package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// BenchmarkPushFetchAck is one job's round trip over loopback HTTP: PUSH,
// FETCH, ACK (three requests). ns/op is per job.
func BenchmarkPushFetchAck(b *testing.B) {
	srv := httptest.NewServer(ojshttp.New(executor.New()))
	defer srv.Close()
	c := srv.Client()
	call := func(path string, body []byte) map[string]any {
		resp, err := c.Post(srv.URL+path, ojshttp.MediaType, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode >= 300 {
			b.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		return m
	}
	push := []byte(`{"type":"bench.job","args":[1],"options":{"queue":"bench"}}`)
	fetch := []byte(`{"queues":["bench"]}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call("/ojs/v1/jobs", push)
		f := call("/ojs/v1/workers/fetch", fetch)
		id := f["job"].(map[string]any)["id"].(string)
		call("/ojs/v1/workers/ack", []byte(`{"job_id":"`+id+`"}`))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkNack is one FAIL answered with a retry decision, in process
// (no network): the server's cost per checked retry.
func BenchmarkNack(b *testing.B) {
	e := executor.New()
	h := ojshttp.New(e)
	do := func(path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", path, bytes.NewReader([]byte(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rec := do("/ojs/v1/jobs", `{"type":"b","args":[],"options":{"queue":"n","retry":{"max_attempts":5,"initial_interval":"PT1M"}}}`)
		var m map[string]any
		json.Unmarshal(rec.Body.Bytes(), &m)
		id := m["job"].(map[string]any)["id"].(string)
		do("/ojs/v1/workers/fetch", `{"queues":["n"]}`)
		b.StartTimer()
		if rec := do("/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"type":"x.y","message":"m"}}`); rec.Code != 200 {
			b.Fatal(rec.Body)
		}
	}
}

// BenchmarkPush is one PUSH handled in process (no network), plain and
// with options.unique (a distinct key each time, so every PUSH computes a
// key, checks the index and inserts): the cost unique jobs add.
func BenchmarkPush(b *testing.B) {
	for _, tc := range []struct{ name, opts string }{
		{"plain", `{"queue":"bench"}`},
		{"unique", `{"queue":"bench","unique":{"keys":["args"],"on_conflict":"reject"}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := ojshttp.New(executor.New())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				body := `{"type":"bench.job","args":[` + strconv.Itoa(i) + `,{"user":"u"}],"options":` + tc.opts + `}`
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("POST", "/ojs/v1/jobs", strings.NewReader(body)))
				if rec.Code != 201 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
