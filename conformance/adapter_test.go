package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// The test binary doubles as a misbehaving adapter: with
// RETRYKIT_TEST_ADAPTER set, TestMain serves the reference through
// protocol.Serve but misbehaves on match requests whose error_type names
// a trick ("crash.me", "hang.me", "bad.line", "malformed.answer").

const adapterEnv = "RETRYKIT_TEST_ADAPTER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(adapterEnv); mode != "" {
		os.Exit(fakeAdapter(mode))
	}
	os.Exit(m.Run())
}

type trickImpl struct{ mode string }

func (t trickImpl) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation = "trick-" + t.mode
	if t.mode == "protocol2" {
		h.Protocol = 2
	}
	return h, err
}

func (t trickImpl) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	hostileTrick(t.mode, req) // hostile_test.go
	switch req.ErrorType {
	case "crash.me":
		fmt.Fprintln(os.Stderr, "panic: the adapter fell over on purpose")
		os.Exit(3)
	case "hang.me":
		time.Sleep(time.Hour)
	case "bad.line":
		os.Stdout.WriteString("this is not JSON\n")
		time.Sleep(time.Hour)
	}
	if t.mode == "crash-always" && req.Op == protocol.OpMatch {
		fmt.Fprintln(os.Stderr, "crashing on every match")
		os.Exit(4)
	}
	return conformance.Reference().Do(ctx, req)
}

// malformedWriter rewrites answers to "malformed.answer" requests.
func fakeAdapter(mode string) int {
	impl := trickImpl{mode: mode}
	if mode == "slowstart" {
		// An interpreter that takes its time to start on a loaded machine.
		time.Sleep(1500 * time.Millisecond)
	}
	if mode == "malformed" {
		r, w, _ := os.Pipe()
		go func() {
			_ = protocol.Serve(context.Background(), impl, os.Stdin, w)
			w.Close()
		}()
		buf := make([]byte, 0, 1<<16)
		tmp := make([]byte, 4096)
		for {
			n, err := r.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := strings.IndexByte(string(buf), '\n')
				if i < 0 {
					break
				}
				line := string(buf[:i])
				buf = buf[i+1:]
				if strings.Contains(line, `"match":false`) && strings.Contains(line, `"id":3,`) {
					line = strings.Replace(line, `"match":false`, `"match":"no"`, 1)
				}
				os.Stdout.WriteString(line + "\n")
			}
			if err != nil {
				return 0
			}
		}
	}
	if err := protocol.Serve(context.Background(), impl, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// trickSuite is a match-only suite: ordinary vectors around a few tricks.
func trickSuite(t *testing.T, tricks ...string) *conformance.Suite {
	t.Helper()
	var vs []string
	n := 0
	add := func(typ string, match bool) {
		n++
		vs = append(vs, fmt.Sprintf(`{"id":"t-%04d","requirement":"RET-18","section":"6.2","description":"%s","flags":[],"input":{"patterns":["auth.x"],"error_type":%q},"expected":{"match":%v}}`, n, typ, typ, match))
	}
	for i := 0; i < 5; i++ {
		add("auth.x", true)
		add("other", false)
	}
	for _, tr := range tricks {
		add(tr, false)
	}
	for i := 0; i < 5; i++ {
		add("auth.x", true)
	}
	file := `{"schema_version":1,"suite_version":"0.0.1","spec_version":"1.0.0-rc.1","kind":"match","notes":{"kind":"test"},"vectors":[` + strings.Join(vs, ",") + `]}`
	s, err := conformance.Load(mapFS{"match.json": []byte(file)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func selfAdapter(t *testing.T, mode string, opts ...protocol.Option) *protocol.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), adapterEnv+"="+mode)
	p := protocol.NewProcess([]string{exe, "-test.run=^$"}, append([]protocol.Option{protocol.WithEnv(env)}, opts...)...)
	t.Cleanup(func() { p.Close() })
	return p
}

func only(rep *conformance.Report, s conformance.Status) []conformance.Result { return rep.Filter(s) }

func TestExternalHealthyAdapter(t *testing.T) {
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite).Run(context.Background(), selfAdapter(t, "plain"))
	if !rep.OK() || rep.Totals.Pass != len(suite.Vectors)+1 { // + the jitter check
		t.Fatalf("healthy adapter: %+v\n%v", rep.Totals, rep.Results)
	}
	if rep.Implementation.Implementation != "trick-plain" {
		t.Errorf("hello not taken from the adapter: %+v", rep.Implementation)
	}
}

func TestExternalCrashIsErrorAndRestartsOnce(t *testing.T) {
	suite := trickSuite(t, "crash.me")
	p := selfAdapter(t, "crash-once")
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	errs := only(rep, conformance.StatusError)
	if len(errs) != 1 || errs[0].Description != "crash.me" {
		t.Fatalf("want exactly the crashing vector as error, got %+v", errs)
	}
	if !strings.Contains(errs[0].Stderr, "fell over on purpose") || !strings.Contains(errs[0].Reason, "exit status 3") {
		t.Errorf("error lacks stderr or exit status: reason %q stderr %q", errs[0].Reason, errs[0].Stderr)
	}
	if rep.Totals.Fail != 0 || rep.Totals.Pass != len(suite.Vectors)-1 {
		t.Errorf("after the restart every other vector must pass: %+v", rep.Totals)
	}
}

func TestExternalSecondCrashIsNotRestarted(t *testing.T) {
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite, conformance.WithParallelism(1), conformance.WithJitterSamples(0)).
		Run(context.Background(), selfAdapter(t, "crash-always"))
	if rep.Totals.Error != len(suite.Vectors) || rep.Totals.Fail != 0 || rep.Totals.Pass != 0 {
		t.Fatalf("every vector must be an error, none a failure: %+v", rep.Totals)
	}
	errs := only(rep, conformance.StatusError)
	if !strings.Contains(errs[0].Reason, "crash") || !strings.Contains(errs[1].Reason, "crash") {
		t.Errorf("first two errors should be the two crashes: %q, %q", errs[0].Reason, errs[1].Reason)
	}
	if !strings.Contains(errs[2].Reason, "not restarted") {
		t.Errorf("third error should say the adapter was not restarted again: %q", errs[2].Reason)
	}
}

func TestExternalTimeout(t *testing.T) {
	suite := trickSuite(t, "hang.me")
	p := selfAdapter(t, "hang", protocol.WithTimeout(3*time.Second)) // generous: a loaded CI machine under -race must not time out healthy requests
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	errs := only(rep, conformance.StatusError)
	if len(errs) != 1 || errs[0].Description != "hang.me" || !strings.Contains(errs[0].Reason, "timeout") {
		t.Fatalf("want the hanging vector as a timeout error, got %+v", errs)
	}
	if rep.Totals.Pass != len(suite.Vectors)-1 {
		t.Errorf("requests stuck behind the hung one must be resent and pass: %+v", rep.Totals)
	}
}

// An adapter slow to start is not given up at hello for the per-request
// timeout: the hello has its own, longer deadline (WithStartTimeout).
func TestExternalSlowStartIsNotATimeout(t *testing.T) {
	p := selfAdapter(t, "slowstart", protocol.WithTimeout(500*time.Millisecond))
	if _, err := p.Hello(context.Background()); err != nil {
		t.Fatalf("an adapter answering hello after 1.5 s, per-request timeout 0.5 s: %v", err)
	}
	if n := p.Timeouts(); n != 0 {
		t.Errorf("%d timeouts counted for a slow start", n)
	}
	short := selfAdapter(t, "slowstart", protocol.WithTimeout(200*time.Millisecond), protocol.WithStartTimeout(300*time.Millisecond))
	_, err := short.Hello(context.Background())
	var ae *protocol.AdapterError
	if !errors.As(err, &ae) || ae.Kind != protocol.FailureTimeout {
		t.Fatalf("start timeout 0.3 s, hello after 1.5 s: %v, want a timeout AdapterError", err)
	}
}

func TestExternalBadLine(t *testing.T) {
	suite := trickSuite(t, "bad.line")
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), selfAdapter(t, "badline"))
	errs := only(rep, conformance.StatusError)
	if len(errs) != 1 || !strings.Contains(errs[0].Reason, "protocol") || !strings.Contains(errs[0].Reason, "this is not JSON") {
		t.Fatalf("want one protocol error naming the line, got %+v", errs)
	}
	if rep.Totals.Fail != 0 || rep.Totals.Pass != len(suite.Vectors)-1 {
		t.Errorf("%+v", rep.Totals)
	}
}

func TestExternalMalformedAnswerIsErrorWithoutRestart(t *testing.T) {
	suite := trickSuite(t)
	// Wire id 1 is hello; id 3 is the second vector ("other", match false).
	rep := conformance.NewRunner(suite, conformance.WithParallelism(1), conformance.WithJitterSamples(0)).
		Run(context.Background(), selfAdapter(t, "malformed"))
	errs := only(rep, conformance.StatusError)
	if len(errs) != 1 || !strings.Contains(errs[0].Reason, "malformed answer") {
		t.Fatalf("want one malformed-answer error, got %+v", errs)
	}
	if rep.Totals.Pass != len(suite.Vectors)-1 {
		t.Errorf("%+v", rep.Totals)
	}
}

func TestExternalWrongProtocolVersion(t *testing.T) {
	suite := trickSuite(t)
	rep := conformance.NewRunner(suite).Run(context.Background(), selfAdapter(t, "protocol2"))
	if rep.Totals.Error != len(suite.Vectors) || !strings.Contains(rep.Results[0].Reason, "protocol 2") {
		t.Fatalf("a protocol-2 adapter must make every vector an error: %+v %q", rep.Totals, rep.Results[0].Reason)
	}
}

func TestExternalMissingProgram(t *testing.T) {
	suite := trickSuite(t)
	p := protocol.NewProcess([]string{"/nonexistent/adapter"})
	defer p.Close()
	rep := conformance.NewRunner(suite).Run(context.Background(), p)
	if rep.Totals.Error != len(suite.Vectors) || rep.OK() {
		t.Fatalf("%+v", rep.Totals)
	}
}
