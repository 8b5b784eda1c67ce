// Command ojsload loads an OJS server over the HTTP binding with concurrent
// workers and checks that no job is lost or duplicated; it also measures
// push→fetch→ack throughput for docs/benchmarks.md.
//
//	go run ./cmd/ojsload --server http://127.0.0.1:8080 [--workers 50] [--jobs 20000] [--fail 0.3]
//
// The jobs go to --queues queues unique to the run (round robin; several,
// so that a server's per-queue retention of finished jobs, such as retrykit
// serve's 10000 per queue and state, keeps every one for INFO), under a policy of 3
// attempts, 1ms delays and no jitter, with non_retryable_errors
// ["load.fatal.*"]. The workers fetch, then ACK or FAIL each delivery at
// random (--fail is the share of deliveries failed; a tenth of those with a
// non-retryable type). The run then checks, for every job:
//
//  1. no duplicate: each attempt n delivered once, never to a second
//     worker while the first still holds it, never after its terminal
//     answer, and every ACK and FAIL accepted (a 409 means the delivery
//     was not the job's active one);
//  2. it reached exactly one terminal answer: an ACK, or a FAIL answered
//     discarded (attempts spent, or non-retryable);
//  3. INFO shows the matching state (completed or discarded) and attempt.
//
// A job not terminal within --deadline is lost. Exit status 0 when every
// job passes, 1 otherwise, 2 on bad usage. The report line gives jobs/s
// (jobs over the wall time from the first PUSH to the last terminal
// answer) and requests/s.
//
// It is test machinery, not part of retrykit's API: standard library only.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// maxAnswer bounds an answer read from the server.
const maxAnswer = 1 << 20

type loader struct {
	base    string
	hc      *http.Client
	queues  []string
	fail    float64
	checkAt bool
	reqs    atomic.Int64
	mu      sync.Mutex
	jobs    map[string]*track
	pending atomic.Int64 // jobs not yet terminal
}

// track is what the workers saw of one job.
type track struct {
	holder     int          // worker holding it, -1 when none
	attempts   map[int]bool // attempts delivered
	terminal   int          // terminal answers received
	state      string       // "completed" or "discarded" by the terminal answer
	lastAtt    int
	duplicates []string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ojsload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "OJS server URL (before /ojs/v1)")
	workers := fs.Int("workers", 50, "concurrent HTTP workers, 1..1000")
	jobs := fs.Int("jobs", 20000, "jobs to push, 1..1000000")
	fail := fs.Float64("fail", 0.3, "share of deliveries failed, 0..1")
	deadline := fs.Duration("deadline", 5*time.Minute, "give up (jobs lost) after this long")
	label := fs.String("label", "", "name of the server in the report line")
	nq := fs.Int("queues", 4, "queues to spread the jobs over, 1..100")
	attempts := fs.Bool("attempts", true, "also check the attempt numbers of FETCH and INFO (1-based, counted at fetch, as the binding's examples show)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *server == "":
		fmt.Fprintln(stderr, "ojsload: --server is required")
		return 2
	case *workers < 1 || *workers > 1000:
		fmt.Fprintf(stderr, "ojsload: --workers: must be in 1..1000, got %d\n", *workers)
		return 2
	case *jobs < 1 || *jobs > 1_000_000:
		fmt.Fprintf(stderr, "ojsload: --jobs: must be in 1..1000000, got %d\n", *jobs)
		return 2
	case *nq < 1 || *nq > 100:
		fmt.Fprintf(stderr, "ojsload: --queues: must be in 1..100, got %d\n", *nq)
		return 2
	case !(*fail >= 0 && *fail <= 1):
		fmt.Fprintf(stderr, "ojsload: --fail: must be in [0, 1], got %v\n", *fail)
		return 2
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = *workers + 8
	var b [4]byte
	_, _ = rand.Read(b[:])
	l := &loader{
		base:    strings.TrimRight(*server, "/") + "/ojs/v1",
		hc:      &http.Client{Transport: tr, Timeout: 30 * time.Second},
		fail:    *fail,
		checkAt: *attempts,
		jobs:    make(map[string]*track, *jobs),
	}
	for i := 0; i < *nq; i++ {
		l.queues = append(l.queues, fmt.Sprintf("ojsload-%s-%d", hex.EncodeToString(b[:]), i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()
	start := time.Now()
	ids, err := l.pushAll(ctx, *jobs, *workers)
	if err != nil {
		fmt.Fprintf(stderr, "ojsload: push: %v\n", err)
		return 1
	}
	pushed := time.Since(start)
	l.pending.Store(int64(len(ids)))
	var wg sync.WaitGroup
	var werr atomic.Value
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.work(ctx, w); err != nil && ctx.Err() == nil {
				werr.CompareAndSwap(nil, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e, ok := werr.Load().(error); ok {
		fmt.Fprintf(stderr, "ojsload: worker: %v\n", e)
		return 1
	}
	reqs := l.reqs.Load()
	problems := l.verify(context.Background(), ids, *workers)
	name := *label
	if name == "" {
		name = *server
	}
	fmt.Fprintf(stdout, "ojsload %s: %d jobs, %d workers, fail %.2f: %.0f jobs/s (%v, pushes %v), %.0f requests/s, %d requests\n",
		name, len(ids), *workers, *fail, float64(len(ids))/elapsed.Seconds(), elapsed.Round(time.Millisecond), pushed.Round(time.Millisecond),
		float64(reqs)/elapsed.Seconds(), reqs)
	var completed, discarded, deliveries int
	for _, t := range l.jobs {
		deliveries += len(t.attempts)
		switch t.state {
		case "completed":
			completed++
		case "discarded":
			discarded++
		}
	}
	fmt.Fprintf(stdout, "ojsload %s: %d completed, %d discarded, %d deliveries; %d problems\n", name, completed, discarded, deliveries, len(problems))
	for i, p := range problems {
		if i == 20 {
			fmt.Fprintf(stdout, "  … and %d more\n", len(problems)-20)
			break
		}
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

// call sends one request and decodes a 2xx answer into out (when not nil).
func (l *loader) call(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/openjobspec+json")
	}
	l.reqs.Add(1)
	resp, err := l.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return resp.StatusCode, err
	}
	if len(data) > maxAnswer {
		return resp.StatusCode, fmt.Errorf("%s %s: answer over %d bytes", method, path, maxAnswer)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d: %.200s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// policy is the retry policy of every job.
var policy = map[string]any{
	"max_attempts": 3, "initial_interval": "PT0.001S", "backoff_coefficient": 1.0,
	"max_interval": "PT0.001S", "jitter": false, "non_retryable_errors": []string{"load.fatal.*"},
}

// pushAll pushes n jobs from `workers` goroutines and returns their ids.
func (l *loader) pushAll(ctx context.Context, n, workers int) ([]string, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				var a struct {
					Job struct {
						ID string `json:"id"`
					} `json:"job"`
				}
				_, err := l.call(ctx, http.MethodPost, "/jobs", map[string]any{
					"type": "load.job", "args": []any{i}, "options": map[string]any{"queue": l.queues[i%len(l.queues)], "retry": policy},
				}, &a)
				if err == nil && a.Job.ID == "" {
					err = errors.New("PUSH answer has no job.id")
				}
				if err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				ids[i] = a.Job.ID
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, dup := l.jobs[id]; dup {
			return nil, fmt.Errorf("PUSH returned id %s twice", id)
		}
		l.jobs[id] = &track{holder: -1, attempts: map[int]bool{}}
	}
	return ids, nil
}

type fetchedJob struct {
	ID      string `json:"id"`
	Attempt *int   `json:"attempt"`
}

// work is one worker: fetch, then ACK or FAIL, until every job is
// terminal.
func (l *loader) work(ctx context.Context, w int) error {
	rng := mrand.New(mrand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
	deliveries := 0
	for l.pending.Load() > 0 {
		if ctx.Err() != nil {
			return nil
		}
		var a struct {
			Jobs []fetchedJob `json:"jobs"`
		}
		if _, err := l.call(ctx, http.MethodPost, "/workers/fetch", map[string]any{
			"queues": l.queues, "count": 1, "worker_id": fmt.Sprintf("ojsload-%d", w),
		}, &a); err != nil {
			return err
		}
		if len(a.Jobs) == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		for _, j := range a.Jobs {
			deliveries++
			l.deliver(w, j)
			// The worker lets go before it answers: once the server has
			// the answer, it may hand the job (retried) to another worker
			// before this one hears back. A job handed out again while
			// its answer is in flight is still caught by its attempt
			// number, or by the terminal answer's conflict.
			l.release(w, j.ID, "")
			r := rng.Float64()
			var terminal string
			switch {
			case r < l.fail:
				typ := "load.flaky"
				if r < l.fail/10 {
					typ = "load.fatal.bad_input"
				}
				var ans struct {
					State string `json:"state"`
				}
				status, err := l.call(ctx, http.MethodPost, "/workers/nack", map[string]any{
					"job_id": j.ID, "error": map[string]any{"type": typ, "code": "handler_error", "message": "ojsload failure"},
				}, &ans)
				if status == http.StatusConflict || status == http.StatusNotFound {
					l.note(j.ID, fmt.Sprintf("FAIL answered HTTP %d: the delivery was not the job's active one", status))
					continue
				}
				if err != nil {
					return fmt.Errorf("FAIL %s (HTTP %d): %w", j.ID, status, err)
				}
				if ans.State == "discarded" {
					terminal = "discarded"
				}
			default:
				status, err := l.call(ctx, http.MethodPost, "/workers/ack", map[string]any{"job_id": j.ID}, nil)
				if status == http.StatusConflict || status == http.StatusNotFound {
					l.note(j.ID, fmt.Sprintf("ACK answered HTTP %d: the delivery was not the job's active one", status))
					continue
				}
				if err != nil {
					return fmt.Errorf("ACK %s (HTTP %d): %w", j.ID, status, err)
				}
				terminal = "completed"
			}
			if terminal != "" {
				l.release(-1, j.ID, terminal)
			}
		}
	}
	return nil
}

// deliver records that worker w received job j.
func (l *loader) deliver(w int, j fetchedJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.jobs[j.ID]
	if t == nil {
		t = &track{holder: -1, attempts: map[int]bool{}}
		l.jobs[j.ID] = t
		t.duplicates = append(t.duplicates, "duplicate: fetched, but never pushed by this run")
	}
	if t.holder >= 0 {
		t.duplicates = append(t.duplicates, fmt.Sprintf("duplicate: delivered to worker %d while worker %d held it", w, t.holder))
	}
	if t.terminal > 0 {
		t.duplicates = append(t.duplicates, "duplicate: delivered again after its terminal answer")
	}
	att := len(t.attempts) + 1
	if j.Attempt != nil && l.checkAt {
		att = *j.Attempt
	}
	if t.attempts[att] {
		t.duplicates = append(t.duplicates, fmt.Sprintf("duplicate: attempt %d delivered twice", att))
	}
	t.attempts[att] = true
	t.holder = w
}

// note records a problem of job id.
func (l *loader) note(id, problem string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.jobs[id]; t != nil && len(t.duplicates) < 10 {
		t.duplicates = append(t.duplicates, problem)
	}
}

// release records the end of worker w's delivery of id.
func (l *loader) release(w int, id, terminal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.jobs[id]
	if t.holder == w {
		t.holder = -1
	}
	if terminal != "" {
		t.terminal++
		t.state = terminal
		if t.terminal == 1 {
			l.pending.Add(-1)
		}
	}
}

// verify checks every job's track and its INFO.
func (l *loader) verify(ctx context.Context, ids []string, workers int) []string {
	var (
		mu       sync.Mutex
		problems []string
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	add := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				id := ids[i]
				l.mu.Lock()
				t := *l.jobs[id]
				l.mu.Unlock()
				for _, d := range t.duplicates {
					add(id + ": " + d)
				}
				switch {
				case t.terminal == 0:
					add(fmt.Sprintf("%s: lost: no terminal answer after %d deliveries", id, len(t.attempts)))
				case t.terminal > 1:
					add(fmt.Sprintf("%s: %d terminal answers", id, t.terminal))
				}
				var a struct {
					Job struct {
						State   string `json:"state"`
						Attempt *int   `json:"attempt"`
					} `json:"job"`
				}
				if _, err := l.call(ctx, http.MethodGet, "/jobs/"+id, nil, &a); err != nil {
					add(fmt.Sprintf("%s: INFO: %v", id, err))
					continue
				}
				if t.terminal > 0 && a.Job.State != t.state {
					add(fmt.Sprintf("%s: INFO state %q, the workers saw %q", id, a.Job.State, t.state))
				}
				if l.checkAt && a.Job.Attempt != nil && *a.Job.Attempt != len(t.attempts) {
					add(fmt.Sprintf("%s: INFO attempt %d, delivered %d times", id, *a.Job.Attempt, len(t.attempts)))
				}
			}
		}()
	}
	wg.Wait()
	return problems
}
