package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
)

// The drift watch: each verified Go library's newest release (the module
// proxy's @latest) is run through the same checks as the pinned one. One
// go.mod cannot hold two versions of a module, so each check builds a small
// probe program in a temporary module of its own (go mod init, go get
// MODULE@VERSION, go run) that samples the library's real code and prints
// what it saw as JSON; the test compares that with package profile.
//
// A probe runs only when the newest release differs from the pinned one
// (the pinned checks already cover it otherwise), or when
// RETRYKIT_DRIFT_ALL=1. RETRYKIT_DRIFT_<PROFILE>=VERSION (for example
// RETRYKIT_DRIFT_AWS_GO=v1.47.7) checks that version instead of the newest:
// the way to see the watch fail on purpose. TestDriftCatchesAWS147 does it
// on every run.

// driftSystem is one Go library under the drift watch.
type driftSystem struct {
	profile string // the profile its current release should match
	module  string // the module to go get
	upTo    int    // attempts sampled
	// probe is the body of the probe's main package: it must define
	// func run(upTo int) probeResult, given the helpers in probeHelpers.
	// With test set it is a test file instead and defines
	// func run(t *testing.T, upTo int) probeResult, given probeTestHelpers
	// (for probes that need a synctest bubble).
	probe string
	test  bool
}

// probeResult is what a probe prints.
type probeResult struct {
	Version  string         `json:"version"`
	Attempts []probeAttempt `json:"attempts"`
	// MaxAttempts is the attempts the library's own retry loop made before
	// giving up (0: not reachable through its API, or unlimited).
	MaxAttempts int `json:"max_attempts"`
}

// probeAttempt is the range of the real delays sampled after attempt N.
type probeAttempt struct {
	N   int   `json:"n"`
	Min int64 `json:"min_ns"`
	Max int64 `json:"max_ns"`
}

// probeHelpers is shared by every probe: sample draws f many times.
const probeHelpers = probeCommon + probeMain

// probeTestHelpers is probeHelpers for a probe run by go test: TestProbe
// writes the result to the file named by its second argument.
const probeTestHelpers = probeCommon + `
func TestProbe(t *testing.T) {
	upTo, _ := strconv.Atoi(flag.Arg(0))
	res := run(t, upTo)
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag.Arg(1), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
`

const probeCommon = `
type probeAttempt struct {
	N   int   ` + "`json:\"n\"`" + `
	Min int64 ` + "`json:\"min_ns\"`" + `
	Max int64 ` + "`json:\"max_ns\"`" + `
}

type probeResult struct {
	Version     string         ` + "`json:\"version\"`" + `
	Attempts    []probeAttempt ` + "`json:\"attempts\"`" + `
	MaxAttempts int            ` + "`json:\"max_attempts\"`" + `
}

// sample calls f 2000 times; f returns an interval known to hold the real
// delay.
func sample(n int, f func() (time.Duration, time.Duration)) probeAttempt {
	a := probeAttempt{N: n, Min: math.MaxInt64, Max: math.MinInt64}
	for range 2000 {
		lo, hi := f()
		a.Min, a.Max = min(a.Min, int64(lo)), max(a.Max, int64(hi))
	}
	return a
}
`

const probeMain = `
func main() {
	upTo, _ := strconv.Atoi(os.Args[1])
	res := run(upTo)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == os.Args[2] {
				res.Version = d.Version
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(res)
}
`

var driftSystems = []driftSystem{
	{profile: "aws_go", module: "github.com/aws/aws-sdk-go-v2", upTo: 12, probe: `
import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithymiddle "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func run(upTo int) probeResult {
	std := retry.NewStandard()
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			d, err := std.RetryDelay(n, errors.New("drift probe"))
			if err != nil {
				panic(err)
			}
			return d, d
		}))
	}
	mw := retry.NewAttemptMiddleware(std, smithyhttp.RequestCloner)
	next := smithymiddle.FinalizeHandlerFunc(func(ctx context.Context, in smithymiddle.FinalizeInput) (smithymiddle.FinalizeOutput, smithymiddle.Metadata, error) {
		res.MaxAttempts++
		resp := &smithyhttp.Response{Response: &http.Response{StatusCode: 500, Header: http.Header{}}}
		return smithymiddle.FinalizeOutput{}, smithymiddle.Metadata{}, &smithyhttp.ResponseError{Response: resp, Err: errors.New("HTTP 500")}
	})
	mw.HandleFinalize(context.Background(), smithymiddle.FinalizeInput{Request: smithyhttp.NewStackRequest()}, next)
	return res
}
`},
	{profile: "river", module: "github.com/riverqueue/river", upTo: 30, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func run(upTo int) probeResult {
	policy := &river.DefaultClientRetryPolicy{}
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			job := &rivertype.JobRow{Attempt: n, Errors: make([]rivertype.AttemptError, n-1)}
			before := time.Now().Round(0)
			at := policy.NextRetry(job)
			after := time.Now().Round(0)
			return at.Sub(after), at.Sub(before)
		}))
	}
	res.MaxAttempts = river.MaxAttemptsDefault
	return res
}
`},
	{profile: "asynq", module: "github.com/hibiken/asynq", upTo: 30, probe: `
import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
)

func run(upTo int) probeResult {
	task := asynq.NewTask("drift", nil)
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			d := asynq.DefaultRetryDelayFunc(n-1, errors.New("drift probe"), task)
			return d, d
		}))
	}
	return res
}
`},
	{profile: "gax", module: "github.com/googleapis/gax-go/v2", upTo: 40, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	gax "github.com/googleapis/gax-go/v2"
)

func run(upTo int) probeResult {
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			var bo gax.Backoff
			var d time.Duration
			for range n {
				d = bo.Pause()
			}
			return d, d
		}))
	}
	return res
}
`},
	{profile: "cenkalti", module: "github.com/cenkalti/backoff/v5", upTo: 20, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	backoff "github.com/cenkalti/backoff/v5"
)

func run(upTo int) probeResult {
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			b := backoff.NewExponentialBackOff()
			b.Reset()
			var d time.Duration
			for range n {
				d = b.NextBackOff()
			}
			return d, d
		}))
	}
	return res
}
`},
	{profile: "retryablehttp", module: "github.com/hashicorp/go-retryablehttp", upTo: 40, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

func run(upTo int) probeResult {
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			c := retryablehttp.NewClient()
			d := c.Backoff(c.RetryWaitMin, c.RetryWaitMax, n-1, nil)
			return d, d
		}))
	}
	res.MaxAttempts = retryablehttp.NewClient().RetryMax + 1
	return res
}
`},
	{profile: "retry_go", module: "github.com/avast/retry-go/v5", upTo: 9, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	retry "github.com/avast/retry-go/v5"
)

type timer struct{ waits []time.Duration }

func (t *timer) After(d time.Duration) <-chan time.Time {
	t.waits = append(t.waits, d)
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func run(upTo int) probeResult {
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			tm := &timer{}
			_ = retry.New(retry.WithTimer(tm)).Do(func() error { return os.ErrNotExist })
			return tm.waits[n-1], tm.waits[n-1]
		}))
	}
	tm := &timer{}
	_ = retry.New(retry.WithTimer(tm)).Do(func() error { return os.ErrNotExist })
	res.MaxAttempts = len(tm.waits) + 1
	return res
}
`},
	{profile: "go_retry", module: "github.com/sethvargo/go-retry", upTo: 40, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	retry "github.com/sethvargo/go-retry"
)

func run(upTo int) probeResult {
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			b := retry.NewExponential(time.Second)
			var d time.Duration
			for range n {
				d, _ = b.Next()
			}
			return d, d
		}))
	}
	return res
}
`},
	{profile: "temporal", module: "go.temporal.io/server", upTo: 70, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/server/common/backoff"
	"go.temporal.io/server/common/retrypolicy"
)

func run(upTo int) probeResult {
	policy := &commonpb.RetryPolicy{}
	retrypolicy.EnsureDefaults(policy, retrypolicy.DefaultDefaultRetrySettings)
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			d := backoff.CalculateExponentialRetryInterval(policy, int32(n))
			return d, d
		}))
	}
	res.MaxAttempts = int(policy.GetMaximumAttempts())
	return res
}
`},
}

// grpcProbes are the drift probes of grpc-go: its connection backoff
// through go:linkname, its retry delays and attempt limit through a real
// ClientConn and Server in a synctest bubble (as grpc_test.go does).
var grpcProbes = []driftSystem{
	{profile: "grpc_connect", module: "google.golang.org/grpc", upTo: 40, probe: `
import (
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"
	_ "unsafe"

	_ "google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

type exponential struct{ Config backoff.Config }

//go:linkname defaultExponential google.golang.org/grpc/internal/backoff.DefaultExponential
var defaultExponential exponential

//go:linkname exponentialBackoff google.golang.org/grpc/internal/backoff.Exponential.Backoff
func exponentialBackoff(bc exponential, retries int) time.Duration

func run(upTo int) probeResult {
	if defaultExponential.Config != backoff.DefaultConfig {
		panic("internal/backoff.DefaultExponential does not read as backoff.DefaultConfig: the linked layout changed")
	}
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			d := exponentialBackoff(defaultExponential, n-1)
			return d, d
		}))
	}
	return res
}
`},
	{profile: "grpc_retry", module: "google.golang.org/grpc", upTo: 8, test: true, probe: `
import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "unix"} }
func (l *pipeListener) dial(ctx context.Context, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// runs makes rpcs RPCs with A6's example policy (maxAttempts as given),
// returning each attempt's gaps (exact in the bubble) and the attempts made.
func runs(t *testing.T, maxAttempts int, opts []grpc.DialOption, rpcs int) (map[int][]time.Duration, []int) {
	gaps := map[int][]time.Duration{}
	var made []int
	sc := ` + "`" + `{"methodConfig":[{"name":[{"service":"retrykit.verify.Fail"}],"retryPolicy":{"maxAttempts":` + "`" + ` + strconv.Itoa(maxAttempts) +
		` + "`" + `,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}` + "`" + `
	synctest.Test(t, func(t *testing.T) {
		lis := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		var mu sync.Mutex
		var at []time.Time
		srv := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			return status.Error(codes.Unavailable, "drift probe")
		}))
		go srv.Serve(lis)
		cc, err := grpc.NewClient("passthrough:///drift", append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(lis.dial), grpc.WithDefaultServiceConfig(sc)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for range rpcs {
			if err := cc.Invoke(context.Background(), "/retrykit.verify.Fail/Call", &emptypb.Empty{}, &emptypb.Empty{}); status.Code(err) != codes.Unavailable {
				t.Fatalf("RPC ended with %v", err)
			}
			mu.Lock()
			for n := 1; n < len(at); n++ {
				gaps[n] = append(gaps[n], at[n].Sub(at[n-1]))
			}
			made = append(made, len(at))
			at = nil
			mu.Unlock()
		}
		cc.Close()
		srv.Stop()
	})
	return gaps, made
}

func run(t *testing.T, upTo int) probeResult {
	gaps, _ := runs(t, upTo+1, []grpc.DialOption{grpc.WithMaxCallAttempts(upTo + 1)}, 2000)
	var res probeResult
	for n := 1; n <= upTo; n++ {
		i := 0
		res.Attempts = append(res.Attempts, sample(n, func() (time.Duration, time.Duration) {
			d := gaps[n][i%len(gaps[n])]
			i++
			return d, d
		}))
	}
	_, made := runs(t, 4, nil, 1)
	res.MaxAttempts = made[0]
	return res
}
`},
}

// goTool runs the go command in dir with a deadline, returning its stdout.
func goTool(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	// GOTOOLCHAIN=auto: a newer release may need a newer Go, which the
	// module proxy serves as golang.org/toolchain.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=auto")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, tail(errb.String(), 2000))
	}
	return out.String(), nil
}

// unreachable reports a registry or release the drift watch cannot
// reach: a failure when CI=true, a skip otherwise.
func unreachable(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("drift watch: %s not reachable (CI=true, so this fails): %v", what, err)
	}
	t.Skipf("drift watch: %s not reachable: %v", what, err)
}

// newestVersion asks the module proxy for the module's @latest.
func newestVersion(t *testing.T, module string) string {
	t.Helper()
	out, err := goTool(t.TempDir(), "list", "-m", "-f", "{{.Version}}", module+"@latest")
	if err != nil {
		unreachable(t, "the Go module proxy", err)
	}
	return strings.TrimSpace(out)
}

// runProbe builds s's probe against module version v in a fresh module and
// runs it.
func runProbe(t *testing.T, s driftSystem, v string) probeResult {
	t.Helper()
	dir := t.TempDir()
	src, file := "package main\n"+s.probe+probeHelpers, "main.go"
	if s.test {
		src, file = "package main\n"+s.probe+probeTestHelpers, "probe_test.go"
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mod", "init", "retrykit.dev/driftprobe"}, {"get", s.module + "@" + v}, {"mod", "tidy"}} {
		if _, err := goTool(dir, args...); err != nil {
			unreachable(t, s.module+"@"+v, err)
		}
	}
	var out string
	var err error
	if s.test {
		// A test binary carries no dependency list: the version is the
		// one the probe's module resolved.
		resFile := filepath.Join(t.TempDir(), "result.json")
		if _, err = goTool(dir, "test", "-count=1", "-run", "^TestProbe$", ".", "-args", fmt.Sprint(s.upTo), resFile); err == nil {
			var data []byte
			data, err = os.ReadFile(resFile)
			out = string(data)
		}
	} else {
		out, err = goTool(dir, "run", ".", fmt.Sprint(s.upTo), s.module)
	}
	if err != nil {
		t.Fatalf("probe of %s@%s: %v", s.module, v, err)
	}
	var res probeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("probe of %s@%s printed %q: %v", s.module, v, tail(out, 500), err)
	}
	if s.test {
		ver, err := goTool(dir, "list", "-m", "-f", "{{.Version}}", s.module)
		if err != nil {
			t.Fatalf("probe of %s@%s: %v", s.module, v, err)
		}
		res.Version = strings.TrimSpace(ver)
	}
	return res
}

// driftMismatches compares a probe's samples with the profile: every
// sample inside the profile's bounds, the extremes within 5% of each end,
// and the library's own attempt limit where the probe reached it. Each
// mismatch names the system, the version probed, the pinned version, the
// attempt and the two delays.
func driftMismatches(s driftSystem, profName, pinned string, res probeResult) []string {
	p, err := profile.Lookup(profName)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	say := func(n int, f string, a ...any) {
		out = append(out, fmt.Sprintf("%s: %s %s (probed) against profile %s (modelled on %s, pinned %s): attempt %d: %s",
			s.profile, s.module, res.Version, p.Name(), p.Release(), pinned, n, fmt.Sprintf(f, a...)))
	}
	for _, a := range res.Attempts {
		lo, hi := p.Bounds(a.N)
		smin, smax := time.Duration(a.Min), time.Duration(a.Max)
		width := float64(hi - lo)
		switch {
		case smin < lo || smax > hi:
			say(a.N, "real delays [%v, %v], profile delays [%v, %v]", smin, smax, lo, hi)
		case float64(smin-lo) > edge*width || float64(hi-smax) > edge*width:
			say(a.N, "real delays [%v, %v] do not reach both ends of the profile's [%v, %v]", smin, smax, lo, hi)
		}
	}
	if res.MaxAttempts != p.MaxAttempts() && (res.MaxAttempts != 0 || s.profile == "temporal") {
		say(res.MaxAttempts, "the library stops after %d attempts, the profile after %d", res.MaxAttempts, p.MaxAttempts())
	}
	return out
}

// TestDrift checks each Go library's newest release against its profile.
func TestDrift(t *testing.T) {
	for _, s := range append(driftSystems[:len(driftSystems):len(driftSystems)], grpcProbes...) {
		t.Run(s.profile, func(t *testing.T) {
			pinned := moduleVersion(t, s.module)
			env := "RETRYKIT_DRIFT_" + strings.ToUpper(s.profile)
			v := os.Getenv(env)
			if v == "" {
				v = newestVersion(t, s.module)
			}
			if v == pinned && os.Getenv("RETRYKIT_DRIFT_ALL") != "1" && os.Getenv(env) == "" {
				t.Logf("%s: pinned %s, newest %s: the pinned checks cover it", s.profile, pinned, v)
				return
			}
			res := runProbe(t, s, v)
			for _, m := range driftMismatches(s, s.profile, pinned, res) {
				t.Error(m)
			}
			t.Logf("%s: pinned %s, probed %s: %d attempts sampled", s.profile, pinned, res.Version, len(res.Attempts))
		})
	}
}

// TestDriftCatchesAWS147 points the watch at aws-sdk-go-v2 v1.47.7, the
// release before retry behavior 2.1: it must fail for the profile aws_go
// (2 s against 50 ms at the first retry) and pass for aws_go@1.47.
func TestDriftCatchesAWS147(t *testing.T) {
	s := driftSystems[0]
	pinned := moduleVersion(t, s.module)
	res := runProbe(t, s, "v1.47.7")
	if res.Version != "v1.47.7" {
		t.Fatalf("probe ran %s", res.Version)
	}
	got := driftMismatches(s, "aws_go", pinned, res)
	if len(got) == 0 {
		t.Fatal("the drift watch passed aws-sdk-go-v2 v1.47.7 for the profile aws_go; it must fail")
	}
	if want := "aws_go: github.com/aws/aws-sdk-go-v2 v1.47.7 (probed) against profile aws_go (modelled on 1.48.0, pinned " + pinned + "): attempt 1: real delays ["; !strings.HasPrefix(got[0], want) ||
		!strings.Contains(got[0], "profile delays [0s, 49.999999ms]") {
		t.Errorf("first mismatch %q, want it to start %q and name both delays", got[0], want)
	}
	t.Logf("as intended, %d mismatches; the first: %s", len(got), got[0])
	if old := driftMismatches(s, "aws_go@1.47", pinned, res); len(old) > 0 {
		t.Errorf("aws_go@1.47 does not match v1.47.7: %s", strings.Join(old, "; "))
	}
}
