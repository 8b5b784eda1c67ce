package conformance_test

// Hostile adapters (a runner no adapter can hang): each test feeds the
// runner one input a hostile tester tried and asserts the plain
// message and a bound counted like a benchmark counts (processes left,
// process starts, bytes allocated), never a wall-clock time.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// hostileTrick misbehaves for the hostile modes of the test adapter
// (fakeAdapter in adapter_test.go); it returns for every other mode.
func hostileTrick(mode string, req protocol.Request) {
	if req.Op != protocol.OpMatch {
		return
	}
	switch {
	case mode == "crash-slow":
		// Dies on every request, late enough for the runner to have
		// pipelined several: the first death blames nobody.
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintln(os.Stderr, "crashing on every match")
		os.Exit(4)
	case mode == "hang-always":
		time.Sleep(time.Hour)
	case req.ErrorType == "long.line":
		// An answer line of 2 MiB, twice the protocol's limit.
		w := bufio.NewWriter(os.Stdout)
		fmt.Fprintf(w, `{"id":%d,"match":false,"pad":"`, req.ID)
		w.WriteString(strings.Repeat("x", 2<<20))
		w.WriteString("\"}\n")
		w.Flush()
		time.Sleep(time.Hour)
	}
}

// wrapped returns a Process running the test adapter in mode through
// "sh -c script", the adapter's command line being "$0" (script must exec
// or run it) and $1 a file the script may write to. The sh process is the
// adapter's process-group leader.
func wrapped(t *testing.T, mode, script, file string, opts ...protocol.Option) *protocol.Process {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs sh and /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), adapterEnv+"="+mode)
	argv := []string{"sh", "-c", script, exe, file}
	p := protocol.NewProcess(argv, append([]protocol.Option{protocol.WithEnv(env)}, opts...)...)
	t.Cleanup(func() { p.Close() })
	return p
}

// starts reads the pids that a wrapper script appended to file, one per
// started adapter process.
func starts(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q", file, b)
		}
		pids = append(pids, n)
	}
	return pids
}

// groupMembers returns the processes of process group pgid, zombies
// included (kill(-pgid, 0) would still find those), read from /proc.
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		if f[0] == "Z" {
			continue // exited; only its parent (here often init, which may reap late) has yet to collect it
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, e.Name()+" "+s[:i+1]+" state "+f[0]+" ppid "+f[1])
		}
	}
	return out
}

func TestHostileGrandchildEndedWithTheGroup(t *testing.T) {
	// An adapter run as sh -c "sleep 1000 & exec retrykit adapter" kept the runner
	// alive after the report until the grandchild exited.
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := wrapped(t, "plain", `echo $$ >> "$1"; sleep 1000 & exec "$0" -test.run='^$'`, pidFile)
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	if !rep.OK() {
		t.Fatalf("the adapter itself is healthy: %+v", rep.Totals)
	}
	pids := starts(t, pidFile)
	if len(pids) != 1 {
		t.Fatalf("want one adapter process, started %v", pids)
	}
	if n := groupMembers(t, pids[0]); len(n) != 2 {
		t.Fatalf("before Close the group holds the adapter and its sleep, got %q", n)
	}
	p.Close() // would wait 1000 s for the sleep without process groups
	if left := groupMembers(t, pids[0]); len(left) != 0 {
		t.Fatalf("processes of the adapter's group left after Close: %q", left)
	}
}

func TestHostileCrashOnEverythingCostsTwoRestarts(t *testing.T) {
	// PROTOCOL.md section 6 says two restarts, the runner made
	// three. The first death (several requests in flight) blames nobody,
	// the replay blames one per process: starts = 1 + 2 restarts.
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := wrapped(t, "crash-slow", `echo $$ >> "$1"; exec "$0" -test.run='^$'`, pidFile)
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	p.Close()
	if rep.Totals.Error != len(suite.Vectors) || rep.Totals.Pass+rep.Totals.Fail != 0 {
		t.Fatalf("every vector must be an error: %+v", rep.Totals)
	}
	crashes := 0
	for _, r := range rep.Results {
		if strings.Contains(r.Reason, "adapter crash") {
			crashes++
		} else if !strings.Contains(r.Reason, "not restarted again") {
			t.Errorf("%s: unexpected reason %q", r.ID, r.Reason)
		}
	}
	if pids := starts(t, pidFile); len(pids) != 3 || crashes != 2 {
		t.Fatalf("want 3 processes (2 restarts) and 2 crashes blamed, got %d processes %v and %d crashes", len(pids), pids, crashes)
	}
}

func TestHostileHungAdapterWithGrandchild(t *testing.T) {
	// A death cost 40 s with --timeout 2s when something the
	// adapter started kept its output open. Every timeout ends the whole
	// group, so each process costs one timeout and nothing is left; the
	// second timeout of a run gives the adapter up (PROTOCOL.md section 6),
	// so a silent adapter costs two processes and two timeouts.
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := wrapped(t, "hang-always", `echo $$ >> "$1"; sleep 1000 & exec "$0" -test.run='^$'`, pidFile,
		protocol.WithTimeout(2*time.Second)) // generous for a loaded machine under -race
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	p.Close()
	if rep.Totals.Error != len(suite.Vectors) {
		t.Fatalf("every vector must be an error: %+v", rep.Totals)
	}
	timeouts := 0
	for _, r := range rep.Results {
		if strings.Contains(r.Reason, "adapter timeout: no answer") && strings.Contains(r.Reason, "within 2s") {
			timeouts++
		}
	}
	pids := starts(t, pidFile)
	if len(pids) != 3 || timeouts != 2 {
		t.Fatalf("want 3 processes and 2 timeouts blamed, got %v and %d", pids, timeouts)
	}
	// The requests never sent are explained as a give-up after timeouts,
	// not "after crashing".
	dead := false
	for _, c := range rep.Causes {
		if c.Class == "adapter-dead" {
			dead = true
			if !strings.Contains(c.Explanation, "timeout") {
				t.Errorf("adapter-dead explained as %q", c.Explanation)
			}
		}
	}
	if !dead && len(suite.Vectors) > 3 {
		t.Errorf("no adapter-dead cause among %+v", rep.Causes)
	}
	for _, pid := range pids {
		if left := groupMembers(t, pid); len(left) != 0 {
			t.Errorf("group %d not ended: %q", pid, left)
		}
	}
}

func TestHostileOverlongAnswerLine(t *testing.T) {
	// An answer over 1 MiB said "bufio.Scanner: token too long".
	// It is a protocol error in plain words; the runner reads no more than
	// the limit of it, and the vectors after it pass on the restarted
	// adapter.
	alloc := func(suite *conformance.Suite) (*conformance.Report, uint64) {
		p := selfAdapter(t, "plain")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
		runtime.ReadMemStats(&after)
		return rep, after.TotalAlloc - before.TotalAlloc
	}
	suite := trickSuite(t, "long.line")
	rep, withLong := alloc(suite)
	errs := only(rep, conformance.StatusError)
	if len(errs) != 1 || errs[0].Description != "long.line" ||
		!strings.Contains(errs[0].Reason, "answer line longer than the protocol's limit of 1 MiB (1048576 bytes, newline included)") {
		t.Fatalf("want the long line as one plain protocol error, got %+v", errs)
	}
	if rep.Totals.Pass != len(suite.Vectors)-1 {
		t.Errorf("%+v", rep.Totals)
	}
	// Against the same run with an ordinary vector in place of the trick:
	// the 2 MiB line costs one 1 MiB line buffer plus a restart (pipes,
	// buffers), less than keeping the line would.
	_, base := alloc(trickSuite(t, "other"))
	if extra := int64(withLong) - int64(base); extra > 4<<20 {
		t.Errorf("the 2 MiB answer line cost %d bytes more than an ordinary answer", extra)
	} else {
		t.Logf("a 2 MiB answer line costs %d bytes more than an ordinary answer", extra)
	}
}

// scripted is an in-process implementation: the reference, with hello and
// some answers replaced.
type scripted struct {
	hello  func(*protocol.Hello)
	answer func(protocol.Request, *protocol.Response)
}

func (s scripted) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	if s.hello != nil {
		s.hello(&h)
	}
	return h, err
}

func (s scripted) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	resp, err := conformance.Reference().Do(ctx, req)
	if s.answer != nil {
		s.answer(req, &resp)
	}
	return resp, err
}

func embeddedSuite(t *testing.T) *conformance.Suite {
	t.Helper()
	s, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHostileCoarseResolutionRefused(t *testing.T) {
	// A hello with resolution_ns 9223372036854775807 with 0 for every answer
	// passed 235 vectors. The handshake refuses it, with the reason.
	zero := int64(0)
	impl := scripted{
		hello: func(h *protocol.Hello) { h.ResolutionNS = math.MaxInt64 },
		answer: func(_ protocol.Request, r *protocol.Response) {
			if r.NS != nil {
				r.NS = &zero
			}
			if r.DelayNS != nil {
				r.DelayNS = &zero
			}
		},
	}
	suite := embeddedSuite(t)
	rep := conformance.NewRunner(suite).Run(context.Background(), impl)
	if rep.Totals.Pass != 0 || rep.Totals.Error != len(suite.Vectors) {
		t.Fatalf("want every vector an error, none passing: %+v", rep.Totals)
	}
	want := "resolution_ns 9223372036854775807 is coarser than the suite can judge: at most 1000000000 (1 s)"
	if !strings.Contains(rep.Results[0].Reason, want) {
		t.Fatalf("reason %q lacks %q", rep.Results[0].Reason, want)
	}
	// The coarsest accepted resolution still tells 0 from the default
	// first delay of 1 s.
	impl.hello = func(h *protocol.Hello) { h.ResolutionNS = protocol.MaxResolutionNS }
	rep = conformance.NewRunner(suite, conformance.WithIDs("delay-0001")).Run(context.Background(), impl)
	if rep.Totals.Fail != 1 {
		t.Fatalf("a delay of 0 must fail at resolution 1 s: %+v %v", rep.Totals, rep.Results)
	}
}

func TestHostileFloat64SaturatedAnswersCompared(t *testing.T) {
	// A float64 implementation answering 2^63 for the saturated
	// 2^63 − 1 ns was reported as a malformed answer (12 vectors). The
	// answers below go through the wire in the notations float64
	// implementations write.
	if runtime.GOOS != "linux" {
		t.Skip("needs sh and sed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	suite := embeddedSuite(t)
	sat := 0
	for _, v := range suite.Vectors {
		var want struct {
			NS      *int64 `json:"ns"`
			DelayNS *int64 `json:"delay_ns"`
		}
		_ = json.Unmarshal(v.Expected, &want)
		if want.NS != nil && *want.NS == math.MaxInt64 || want.DelayNS != nil && *want.DelayNS == math.MaxInt64 {
			sat++
		}
	}
	t.Logf("%d vectors expect the saturated maximum", sat)
	if sat < 12 {
		t.Fatalf("the suite has %d vectors expecting the saturated maximum, want at least 12", sat)
	}
	for _, notation := range []string{"9223372036854775808", "9.223372036854776e18", "9223372036854776000"} {
		script := `"$0" -test.run='^$' | sed -u 's/"delay_ns":9223372036854775807/"delay_ns":` + notation +
			`/; s/"ns":9223372036854775807/"ns":` + notation + `/'`
		env := append(os.Environ(), adapterEnv+"=plain")
		p := protocol.NewProcess([]string{"sh", "-c", script, exe}, protocol.WithEnv(env))
		rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
		p.Close()
		if rep.Totals.Error != 0 || rep.Totals.Fail != 0 {
			var bad []string
			for _, r := range rep.Results {
				if r.Status != conformance.StatusPass {
					bad = append(bad, r.ID+": "+r.Reason)
				}
			}
			t.Errorf("%s: %+v\n%s", notation, rep.Totals, strings.Join(bad, "\n"))
		}
	}
}

func TestHostileLongDurationInAnswer(t *testing.T) {
	// The duration "PT1." + a million zeros + "1S" in an answer
	// stalled the runner 23 s per answer. It is a failure with a plain
	// reason, judged with work linear in the answer.
	long := "PT1." + strings.Repeat("0", 1_000_000) + "1S"
	impl := scripted{answer: func(req protocol.Request, r *protocol.Response) {
		if r.Effective == nil {
			return
		}
		var m map[string]any
		_ = json.Unmarshal(r.Effective, &m)
		m["initial_interval"] = long
		r.Effective, _ = json.Marshal(m)
	}}
	suite := embeddedSuite(t)
	var ids []string
	for _, v := range suite.Vectors {
		if v.Kind == conformance.KindValidate && strings.Contains(string(v.Expected), "initial_interval") {
			ids = append(ids, v.ID)
		}
		if len(ids) == 20 {
			break
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep := conformance.NewRunner(suite, conformance.WithIDs(ids...), conformance.WithJitterSamples(0)).Run(context.Background(), impl)
	runtime.ReadMemStats(&after)
	if rep.Totals.Fail != len(ids) {
		t.Fatalf("want %d failures: %+v", len(ids), rep.Totals)
	}
	want := "initial_interval: got a duration string of 1000006 bytes, longer than the 256 the runner reads"
	for _, r := range rep.Results {
		if !strings.Contains(r.Reason, want) {
			t.Fatalf("%s: reason %q lacks %q", r.ID, r.Reason, want)
		}
		if len(r.Got) > 8<<10 {
			t.Errorf("%s: the report keeps %d bytes of the answer", r.ID, len(r.Got))
		}
	}
	// Linear: a few copies of each 1 MB answer (building it here, encoding,
	// decoding), nothing per character.
	perAnswer := (after.TotalAlloc - before.TotalAlloc) / uint64(len(ids))
	if perAnswer > 16*uint64(len(long)) {
		t.Errorf("judging allocated %d bytes per 1 MB answer", perAnswer)
	}
}

// hugeScenarioJSON is the huge scenario (see hugeScenario in scenario/bounds_test.go) as a request's steps and as
// a scenario file: 2 000 jobs enqueued, then 2 000 fetches.
func hugeScenarioJSON() (steps string, file []byte) {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < 4000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < 2000 {
			fmt.Fprintf(&b, `{"at_ms":%d,"op":"enqueue","job":{"id":"j%04d","type":"t","queue":"q"},"expect":{}}`, i, i)
		} else {
			fmt.Fprintf(&b, `{"at_ms":%d,"op":"fetch","queues":["q"],"expect":{}}`, i)
		}
	}
	b.WriteByte(']')
	steps = b.String()
	file = []byte(`{"schema_version":1,"suite_version":"0.0.1","spec_version":"1.0.0-rc.1","kind":"scenario","notes":{"kind":"test"},` +
		`"scenarios":[{"id":"scn-huge","requirement":"CORE-T02","section":"ojs-core 6.3","description":"2000 jobs, 4000 steps","config":{},"steps":` +
		steps + `}]}`)
	return steps, file
}

func TestHostileHugeScenarioRefusedAtLoad(t *testing.T) {
	_, file := hugeScenarioJSON()
	match := `{"schema_version":1,"suite_version":"0.0.1","spec_version":"1.0.0-rc.1","kind":"match","notes":{"kind":"test"},"vectors":[` +
		`{"id":"t-0001","requirement":"RET-18","section":"6.2","description":"x","flags":[],"input":{"patterns":["a"],"error_type":"a"},"expected":{"match":true}}]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := conformance.Load(mapFS{"match.json": []byte(match)}, mapFS{"huge.json": file})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a scenario whose answer would be 734 MB was loaded")
	}
	for _, want := range []string{"scn-huge", "524288 bytes", "split the scenario"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 128<<20 {
		t.Errorf("loading allocated %d bytes", alloc)
	}
}

func TestHostileHugeScenarioRequestToReference(t *testing.T) {
	// What "retrykit adapter" does with the request: one short rejection,
	// with work bounded by the answer limit (4.4 GB and a 734 MB answer
	// before).
	steps, _ := hugeScenarioJSON()
	line := `{"id":7,"op":"scenario","config":{},"steps":` + steps + "}\n"
	var out strings.Builder
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := protocol.Serve(context.Background(), conformance.Reference(), strings.NewReader(line), &out); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	var resp protocol.Response
	if err := json.Unmarshal([]byte(out.String()), &resp); err != nil {
		t.Fatalf("%v: %.300s", err, out.String())
	}
	if resp.ID != 7 || resp.Error == nil || resp.Error.Type != protocol.ErrorInvalidRequest ||
		!strings.Contains(resp.Error.Message, "split the scenario") || out.Len() > 1<<10 {
		t.Fatalf("answer of %d bytes: %.300s", out.Len(), out.String())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("answering allocated %d bytes", alloc)
	} else {
		t.Logf("answered in %d bytes, %d bytes allocated", out.Len(), alloc)
	}
}

// A failing answer is reported as the adapter wrote it: a delay_ns of 1e30
// (read as the saturated 2^63 − 1 ns for the comparison) shows as 1e30 on
// the got line, not as the clamped number the adapter never sent.
func TestReportShowsTheAnswerAsSent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs sh and sed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `"$0" -test.run='^$' | sed -u 's/"delay_ns":[0-9]*/"delay_ns":1e30/'`
	p := protocol.NewProcess([]string{"sh", "-c", script, exe}, protocol.WithEnv(append(os.Environ(), adapterEnv+"=plain")))
	defer p.Close()
	rep := conformance.NewRunner(embeddedSuite(t), conformance.WithIDs("delay-0001")).Run(context.Background(), p)
	if rep.Totals.Fail != 1 {
		t.Fatalf("want delay-0001 to fail: %+v", rep.Totals)
	}
	if got := string(rep.Results[0].Got); !strings.Contains(got, `"delay_ns":1e30`) {
		t.Errorf("got %s, want the answer as sent, with \"delay_ns\":1e30", got)
	}
	var b strings.Builder
	if err := rep.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `got:    {"id":1,"delay_ns":1e30}`) || !strings.Contains(b.String(), "delay_ns: got 1e30 (read as 9223372036854775807), want 5000000000") {
		t.Errorf("text report:\n%s", b.String())
	}
}
