package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// A system may be watched in more than one configuration (failsafe-go: its
// defaults, and two configured backoffs); each is a probe of its own.
//
// A probe runs only when the newest release differs from the pinned one
// (the pinned checks already cover it otherwise), or when
// RETRYKIT_DRIFT_ALL=1. RETRYKIT_DRIFT_<PROFILE>=VERSION (for example
// RETRYKIT_DRIFT_AWS_GO=v1.47.7, or RETRYKIT_DRIFT_FAILSAFE=v0.4.1 for every
// failsafe configuration) checks that version instead of the newest: the
// way to see the watch fail on purpose. TestDriftCatchesAWS147 and
// TestDriftCatchesFailsafe041 do it on every run.

// driftSystem is one Go library, or one configuration of it, under the
// drift watch.
type driftSystem struct {
	profile string // the profile its current release should match; names RETRYKIT_DRIFT_<PROFILE>
	// spec is the profile text compared when it is not the bare profile: a
	// configuration in the system's own setting names, which code sets up
	// the same way through the library's API.
	spec   string
	module string // the module to go get
	upTo   int    // attempts sampled
	// imports are the probe's imports beyond probeImports (which it must
	// not repeat), one a line.
	imports string
	// code completes the probe's main package: it must define
	//
	//	func delay(n int) (lo, hi time.Duration)
	//
	// an interval known to hold one real delay after attempt n (lo == hi
	// where the library returns a Duration), and
	//
	//	func maxAttempts() int
	//
	// the attempts the library's own retry loop makes before giving up (0
	// for no limit), or -1 where its API does not reach that loop. It may
	// set retried (in an init func) to stop the sampling at the attempts
	// after which the library waited.
	code string
	// adapt, when set, rewrites the probe for release v, for a release
	// that names its API differently from the pinned one.
	adapt func(v, src string) string
	// test builds the probe as a test of its package main, for code that
	// needs a *testing.T (a synctest bubble): probeTestMain's TestProbe
	// sets probeT and writes the result to a file; the version is the one
	// the probe's module resolved (a test binary lists no dependencies).
	test bool
}

// name is the subtest's name: the profile text compared.
func (s driftSystem) name() string {
	if s.spec != "" {
		return s.spec
	}
	return s.profile
}

// probeResult is what a probe prints.
type probeResult struct {
	Version  string         `json:"version"`
	Attempts []probeAttempt `json:"attempts"`
	// MaxAttempts is the attempts the library's own retry loop made before
	// giving up: 0 for no limit, -1 when its API does not reach that loop.
	MaxAttempts int `json:"max_attempts"`
}

// probeAttempt is the range of the real delays sampled after attempt N.
type probeAttempt struct {
	N   int   `json:"n"`
	Min int64 `json:"min_ns"`
	Max int64 `json:"max_ns"`
}

// probeImports are every probe's imports; probeHelpers uses each of them,
// so no probe's code can leave one unused.
const probeImports = `
	"encoding/json"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"time"
`

// probeHelpers completes every probe: main prints result(upTo, module),
// which samples delay after attempts 1 to upTo (os.Args[1]), asks
// maxAttempts, and names the version of module (os.Args[2]) the probe was
// built with.
const probeHelpers = `
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

// retried, when a probe sets it to 0 or more, is the last attempt after
// which the library waited: the attempts above it are not sampled.
var retried = -1

// sample calls delay 2000 times for attempt n.
func sample(n int) probeAttempt {
	a := probeAttempt{N: n, Min: math.MaxInt64, Max: math.MinInt64}
	for range 2000 {
		var lo, hi time.Duration = delay(n)
		a.Min, a.Max = min(a.Min, int64(lo)), max(a.Max, int64(hi))
	}
	return a
}

// result samples attempts 1 to upTo, asks maxAttempts, and names the
// version of module the probe was built with.
func result(upTo int, module string) probeResult {
	if retried >= 0 {
		upTo = min(upTo, retried)
	}
	var res probeResult
	for n := 1; n <= upTo; n++ {
		res.Attempts = append(res.Attempts, sample(n))
	}
	res.MaxAttempts = maxAttempts()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				res.Version = d.Version
			}
		}
	}
	return res
}

func main() {
	upTo, _ := strconv.Atoi(os.Args[1])
	json.NewEncoder(os.Stdout).Encode(result(upTo, os.Args[2]))
}
`

// probeTestMain runs a test-built probe (driftSystem.test): its
// arguments are upTo and the file the result is written to.
const probeTestMain = `package main

import (
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"testing"
)

// probeT is the test the probe runs in, for code that needs one.
var probeT *testing.T

func TestProbe(t *testing.T) {
	probeT = t
	upTo, _ := strconv.Atoi(flag.Arg(0))
	data, err := json.Marshal(result(upTo, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag.Arg(1), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
`

// probeSource is s's probe program, adapted to release v.
func probeSource(s driftSystem, v string) string {
	src := "package main\n\nimport (" + probeImports + "\n" + s.imports + "\n)\n" + s.code + probeHelpers
	if s.adapt != nil {
		src = s.adapt(v, src)
	}
	return src
}

// failsafeProbe is the probe of failsafe-go's retry policy built by
// retrypolicy.NewBuilder[any]() followed by options: it runs 400 always
// failing executions side by side through the real executor (each sleeps
// its real delays, so the configured delays are a few milliseconds) and
// reads each delay from OnRetryScheduled.
func failsafeProbe(options string) string {
	return `
const executions = 400

var (
	runs     [executions][]time.Duration
	attempts [executions]int
	next     int
)

func init() {
	var wg sync.WaitGroup
	for i := range executions {
		wg.Go(func() { runs[i], attempts[i] = execute() })
	}
	wg.Wait()
	for i := range executions {
		if attempts[i] != attempts[0] || len(runs[i]) != len(runs[0]) {
			panic("executions disagree: " + strconv.Itoa(attempts[0]) + " and " + strconv.Itoa(attempts[i]) + " attempts")
		}
	}
	retried = len(runs[0])
}

func execute() (delays []time.Duration, n int) {
	rp := retrypolicy.NewBuilder[any]()` + options + `.OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[any]) {
		delays = append(delays, e.Delay)
	}).Build()
	_, _ = failsafe.With[any](rp).Get(func() (any, error) {
		n++
		return nil, errors.New("drift probe")
	})
	return delays, n
}

func delay(n int) (time.Duration, time.Duration) {
	d := runs[next%executions][n-1]
	next++
	return d, d
}

func maxAttempts() int { return attempts[0] }
`
}

const failsafeImports = `
	"errors"
	"sync"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
`

// failsafeAPI rewrites the probe for releases before the API it uses:
// failsafe.With came in v0.9.0 (failsafe.NewExecutor before), and
// retrypolicy.NewBuilder in v0.7.0 (retrypolicy.Builder before).
func failsafeAPI(v, src string) string {
	if releaseBefore(v, 0, 9) {
		src = strings.ReplaceAll(src, "failsafe.With[any](rp)", "failsafe.NewExecutor[any](rp)")
	}
	if releaseBefore(v, 0, 7) {
		src = strings.ReplaceAll(src, "retrypolicy.NewBuilder[any]()", "retrypolicy.Builder[any]()")
	}
	return src
}

// releaseBefore reports whether module version v (vMAJOR.MINOR.…) is
// older than major.minor; false when v does not read as one.
func releaseBefore(v string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(v, "v%d.%d.", &ma, &mi); err != nil {
		return false
	}
	return ma < major || ma == major && mi < minor
}

var driftSystems = []driftSystem{
	{profile: "aws_go", module: "github.com/aws/aws-sdk-go-v2", upTo: 12, imports: `
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithymiddle "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
`, code: `
var std = retry.NewStandard()

func delay(n int) (time.Duration, time.Duration) {
	d, err := std.RetryDelay(n, errors.New("drift probe"))
	if err != nil {
		panic(err)
	}
	return d, d
}

func maxAttempts() int {
	attempts := 0
	mw := retry.NewAttemptMiddleware(std, smithyhttp.RequestCloner)
	next := smithymiddle.FinalizeHandlerFunc(func(ctx context.Context, in smithymiddle.FinalizeInput) (smithymiddle.FinalizeOutput, smithymiddle.Metadata, error) {
		attempts++
		resp := &smithyhttp.Response{Response: &http.Response{StatusCode: 500, Header: http.Header{}}}
		return smithymiddle.FinalizeOutput{}, smithymiddle.Metadata{}, &smithyhttp.ResponseError{Response: resp, Err: errors.New("HTTP 500")}
	})
	mw.HandleFinalize(context.Background(), smithymiddle.FinalizeInput{Request: smithyhttp.NewStackRequest()}, next)
	return attempts
}
`},
	{profile: "river", module: "github.com/riverqueue/river", upTo: 30, imports: `
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
`, code: `
var policy = &river.DefaultClientRetryPolicy{}

func delay(n int) (time.Duration, time.Duration) {
	job := &rivertype.JobRow{Attempt: n, Errors: make([]rivertype.AttemptError, n-1)}
	before := time.Now().Round(0)
	at := policy.NextRetry(job)
	after := time.Now().Round(0)
	return at.Sub(after), at.Sub(before)
}

func maxAttempts() int { return river.MaxAttemptsDefault }
`},
	{profile: "asynq", module: "github.com/hibiken/asynq", upTo: 30, imports: `
	"errors"

	"github.com/hibiken/asynq"
`, code: `
var task = asynq.NewTask("drift", nil)

func delay(n int) (time.Duration, time.Duration) {
	d := asynq.DefaultRetryDelayFunc(n-1, errors.New("drift probe"), task)
	return d, d
}

func maxAttempts() int { return -1 }
`},
	{profile: "gax", module: "github.com/googleapis/gax-go/v2", upTo: 40, imports: `
	gax "github.com/googleapis/gax-go/v2"
`, code: `
func delay(n int) (time.Duration, time.Duration) {
	var bo gax.Backoff
	var d time.Duration
	for range n {
		d = bo.Pause()
	}
	return d, d
}

func maxAttempts() int { return -1 }
`},
	{profile: "cenkalti", module: "github.com/cenkalti/backoff/v5", upTo: 20, imports: `
	backoff "github.com/cenkalti/backoff/v5"
`, code: `
func delay(n int) (time.Duration, time.Duration) {
	b := backoff.NewExponentialBackOff()
	b.Reset()
	var d time.Duration
	for range n {
		d = b.NextBackOff()
	}
	return d, d
}

func maxAttempts() int { return -1 }
`},
	{profile: "retryablehttp", module: "github.com/hashicorp/go-retryablehttp", upTo: 40, imports: `
	retryablehttp "github.com/hashicorp/go-retryablehttp"
`, code: `
func delay(n int) (time.Duration, time.Duration) {
	c := retryablehttp.NewClient()
	d := c.Backoff(c.RetryWaitMin, c.RetryWaitMax, n-1, nil)
	return d, d
}

func maxAttempts() int { return retryablehttp.NewClient().RetryMax + 1 }
`},
	{profile: "retry_go", module: "github.com/avast/retry-go/v5", upTo: 9, imports: `
	retry "github.com/avast/retry-go/v5"
`, code: `
type timer struct{ waits []time.Duration }

func (t *timer) After(d time.Duration) <-chan time.Time {
	t.waits = append(t.waits, d)
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

// waits runs an always-failing Do with the recording timer.
func waits() []time.Duration {
	tm := &timer{}
	_ = retry.New(retry.WithTimer(tm)).Do(func() error { return os.ErrNotExist })
	return tm.waits
}

func delay(n int) (time.Duration, time.Duration) {
	d := waits()[n-1]
	return d, d
}

func maxAttempts() int { return len(waits()) + 1 }
`},
	{profile: "go_retry", module: "github.com/sethvargo/go-retry", upTo: 40, imports: `
	retry "github.com/sethvargo/go-retry"
`, code: `
func delay(n int) (time.Duration, time.Duration) {
	b := retry.NewExponential(time.Second)
	var d time.Duration
	for range n {
		d, _ = b.Next()
	}
	return d, d
}

func maxAttempts() int { return -1 }
`},
	{profile: "temporal", module: "go.temporal.io/server", upTo: 70, imports: `
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/server/common/backoff"
	"go.temporal.io/server/common/retrypolicy"
`, code: `
var policy = func() *commonpb.RetryPolicy {
	p := &commonpb.RetryPolicy{}
	retrypolicy.EnsureDefaults(p, retrypolicy.DefaultDefaultRetrySettings)
	return p
}()

func delay(n int) (time.Duration, time.Duration) {
	d := backoff.CalculateExponentialRetryInterval(policy, int32(n))
	return d, d
}

func maxAttempts() int { return int(policy.GetMaximumAttempts()) }
`},
	// failsafe-go's executor sleeps each delay it schedules, so its
	// configured probes use delays of a few milliseconds: a backoff with
	// jitter, and a backoff by a factor that is not a power of two, whose
	// delays (no jitter) must match to the nanosecond.
	{profile: "failsafe", module: "github.com/failsafe-go/failsafe-go", upTo: 2, imports: failsafeImports,
		code: failsafeProbe(""), adapt: failsafeAPI},
	{profile: "failsafe", spec: "failsafe:MaxRetries=5,Delay=1ms,MaxDelay=8ms,JitterFactor=0.5", module: "github.com/failsafe-go/failsafe-go", upTo: 5, imports: failsafeImports,
		code: failsafeProbe(".WithMaxRetries(5).WithBackoff(time.Millisecond, 8*time.Millisecond).WithJitterFactor(0.5)"), adapt: failsafeAPI},
	{profile: "failsafe", spec: "failsafe:MaxRetries=7,Delay=1ms,MaxDelay=8ms,DelayFactor=1.3", module: "github.com/failsafe-go/failsafe-go", upTo: 7, imports: failsafeImports,
		code: failsafeProbe(".WithMaxRetries(7).WithBackoffFactor(time.Millisecond, 8*time.Millisecond, 1.3)"), adapt: failsafeAPI},
}

// grpcProbes watch grpc-go: its connection backoff through the linked
// internal/backoff Exponential.Backoff, its retry delays and attempt limit
// through a real ClientConn and Server in a synctest bubble, as
// grpc_test.go reads them.
var grpcProbes = []driftSystem{
	{profile: "grpc_connect", module: "google.golang.org/grpc", upTo: 40, imports: `
	_ "unsafe"

	_ "google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
`, code: `
type exponential struct{ Config backoff.Config }

//go:linkname defaultExponential google.golang.org/grpc/internal/backoff.DefaultExponential
var defaultExponential exponential

//go:linkname exponentialBackoff google.golang.org/grpc/internal/backoff.Exponential.Backoff
func exponentialBackoff(bc exponential, retries int) time.Duration

func init() {
	if defaultExponential.Config != backoff.DefaultConfig {
		panic("internal/backoff.DefaultExponential does not read as backoff.DefaultConfig: the linked layout changed")
	}
}

func delay(n int) (time.Duration, time.Duration) {
	d := exponentialBackoff(defaultExponential, n-1)
	return d, d
}

func maxAttempts() int { return -1 }
`},
	{profile: "grpc_retry", module: "google.golang.org/grpc", upTo: 8, test: true, imports: `
	"context"
	"net"
	"sync"
	"testing"
	"testing/synctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
`, code: `
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

// runs makes rpcs RPCs with A6's example policy (maxAttempts as given) in a
// synctest bubble: each attempt's gap to the next, exact, and the attempts
// each RPC made.
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
			if err := cc.Invoke(context.Background(), "/retrykit.verify.Fail/Call", &emptypb.Empty{}, &emptypb.Empty{}); err == nil {
				t.Fatal("an RPC the server answers UNAVAILABLE succeeded")
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

// retryUpTo is the drift system's upTo: maxAttempts (and the channel's
// WithMaxCallAttempts) one above it, so a delay follows each sampled attempt.
const retryUpTo = 8

var (
	gaps map[int][]time.Duration
	next = map[int]int{}
)

func delay(n int) (time.Duration, time.Duration) {
	if gaps == nil {
		gaps, _ = runs(probeT, retryUpTo+1, []grpc.DialOption{grpc.WithMaxCallAttempts(retryUpTo + 1)}, 2000)
	}
	d := gaps[n][next[n]%len(gaps[n])]
	next[n]++
	return d, d
}

func maxAttempts() int {
	_, made := runs(probeT, 4, nil, 1)
	return made[0]
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
	res, err := tryProbe(t, s, v)
	if err != nil {
		unreachable(t, s.module+"@"+v, err)
	}
	return res
}

// notServed reports whether err is the module proxy's answer that it does
// not serve a version (of the module or of one it needs): a definite
// answer, unlike a proxy that cannot be reached.
func notServed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "403 Forbidden") && strings.Contains(err.Error(), "not available")
}

// servedBelow returns the module's versions after pinned and before v,
// newest first, as the proxy lists them (in semantic version order).
func servedBelow(t *testing.T, module, pinned, v string) []string {
	t.Helper()
	out, err := goTool(t.TempDir(), "list", "-m", "-versions", module)
	if err != nil {
		unreachable(t, "the Go module proxy", err)
	}
	all := strings.Fields(out)
	if len(all) > 0 {
		all = all[1:] // the module path
	}
	lo, hi := slices.Index(all, pinned), slices.Index(all, v)
	if lo < 0 || hi < 0 || hi <= lo+1 {
		return nil
	}
	between := slices.Clone(all[lo+1 : hi])
	slices.Reverse(between)
	return between
}

// tryProbe is runProbe returning what stopped the module's download.
func tryProbe(t *testing.T, s driftSystem, v string) (probeResult, error) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"main.go": probeSource(s, v)}
	if s.test {
		files = map[string]string{"probe_test.go": probeSource(s, v), "probe_main_test.go": probeTestMain}
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "init", "retrykit.dev/driftprobe"}, {"get", s.module + "@" + v}, {"mod", "tidy"}} {
		if _, err := goTool(dir, args...); err != nil {
			return probeResult{}, err
		}
	}
	var out string
	var err error
	if s.test {
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
	return res, nil
}

// driftMismatches compares a probe's samples with the profile: every
// sample inside the profile's bounds, the extremes within 5% of each end,
// and the library's own attempt limit where the probe reached it. Each
// mismatch names the system, the version probed, the profile text
// profName, the pinned version, the attempt and the two delays.
func driftMismatches(s driftSystem, profName, pinned string, res probeResult) []string {
	p, err := profile.Lookup(profName)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	say := func(n int, f string, a ...any) {
		out = append(out, fmt.Sprintf("%s: %s %s (probed) against profile %s (modelled on %s, pinned %s): attempt %d: %s",
			s.profile, s.module, res.Version, profName, p.Release(), pinned, n, fmt.Sprintf(f, a...)))
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
	if res.MaxAttempts >= 0 && res.MaxAttempts != p.MaxAttempts() {
		say(res.MaxAttempts, "the library stops after %d attempts, the profile after %d", res.MaxAttempts, p.MaxAttempts())
	}
	return out
}

// TestDrift checks each Go library's newest release against its profile.
func TestDrift(t *testing.T) {
	for _, s := range slices.Concat(driftSystems, grpcProbes) {
		t.Run(s.name(), func(t *testing.T) {
			pinned := moduleVersion(t, s.module)
			env := "RETRYKIT_DRIFT_" + strings.ToUpper(s.profile)
			v := os.Getenv(env)
			if v == "" {
				v = newestVersion(t, s.module)
			}
			if v == pinned && os.Getenv("RETRYKIT_DRIFT_ALL") != "1" && os.Getenv(env) == "" {
				t.Logf("%s: pinned %s, newest %s: the pinned checks cover it", s.name(), pinned, v)
				return
			}
			res, err := tryProbe(t, s, v)
			if notServed(err) && os.Getenv(env) == "" {
				// the newest release is listed, but the proxy refuses it or
				// a module it needs: the newest release it serves is checked
				newest := v
				for _, w := range servedBelow(t, s.module, pinned, v) {
					if res, err = tryProbe(t, s, w); !notServed(err) {
						v = w
						break
					}
				}
				if notServed(err) {
					t.Logf("%s: newest %s is listed, but the module proxy does not serve it or a module it needs, nor any release after the pinned %s: the pinned checks cover what can be fetched (%v)", s.name(), newest, pinned, tail(err.Error(), 300))
					return
				}
				t.Logf("%s: newest %s is not served by the module proxy (it or a module it needs); probing %s, the newest release after the pinned %s that is", s.name(), newest, v, pinned)
			}
			if err != nil {
				unreachable(t, s.module+"@"+v, err)
			}
			for _, m := range driftMismatches(s, s.name(), pinned, res) {
				t.Error(m)
			}
			limit := fmt.Sprintf("the library stops after %d attempts", res.MaxAttempts)
			switch res.MaxAttempts {
			case -1:
				limit = "its retry loop not reached"
			case 0:
				limit = "the library sets no attempt limit"
			}
			t.Logf("%s: pinned %s, probed %s: %d attempts sampled, %s", s.name(), pinned, res.Version, len(res.Attempts), limit)
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

// TestDriftCatchesFailsafe041 points the watch at failsafe-go v0.4.1,
// whose WithBackoff set the random delay's maximum instead of maxDelay
// (fixed in v0.4.2), so its delays never grew: the backoff with jitter must
// fail from attempt 2 on (0.5-1.5 ms against the profile's 1-3 ms), and a
// fixed 1 ms delay with the same jitter must pass.
func TestDriftCatchesFailsafe041(t *testing.T) {
	const spec = "failsafe:MaxRetries=5,Delay=1ms,MaxDelay=8ms,JitterFactor=0.5"
	i := slices.IndexFunc(driftSystems, func(s driftSystem) bool { return s.spec == spec })
	if i < 0 {
		t.Fatalf("the drift watch has no %s", spec)
	}
	s := driftSystems[i]
	pinned := moduleVersion(t, s.module)
	res := runProbe(t, s, "v0.4.1")
	if res.Version != "v0.4.1" {
		t.Fatalf("probe ran %s", res.Version)
	}
	got := driftMismatches(s, spec, pinned, res)
	if len(got) != 4 {
		t.Fatalf("the drift watch found %d mismatches in failsafe-go v0.4.1 for %s, want 4 (attempts 2-5): %s", len(got), spec, strings.Join(got, "; "))
	}
	if want := "failsafe: github.com/failsafe-go/failsafe-go v0.4.1 (probed) against profile " + spec + " (modelled on 0.9.8, pinned " + pinned + "): attempt 2: real delays ["; !strings.HasPrefix(got[0], want) ||
		!strings.Contains(got[0], "profile delays [1ms, 3ms]") {
		t.Errorf("first mismatch %q, want it to start %q and name both delays", got[0], want)
	}
	t.Logf("as intended, %d mismatches; the first: %s", len(got), got[0])
	if fixed := driftMismatches(s, "failsafe:MaxRetries=5,Delay=1ms,JitterFactor=0.5", pinned, res); len(fixed) > 0 {
		t.Errorf("a fixed delay does not match v0.4.1: %s", strings.Join(fixed, "; "))
	}
}

// TestDriftMismatchesComparesAttemptLimit: a probe that reached the
// library's retry loop is held to the profile's attempt limit (failsafe's
// defaults: MaxRetries 2, so 3 attempts), and one that did not (-1) is not.
func TestDriftMismatchesComparesAttemptLimit(t *testing.T) {
	s := driftSystems[slices.IndexFunc(driftSystems, func(s driftSystem) bool { return s.name() == "failsafe" })]
	delays := []probeAttempt{{N: 1}, {N: 2}}
	if got := driftMismatches(s, "failsafe", "v0.9.8", probeResult{Version: "v9.9.9", Attempts: delays, MaxAttempts: 3}); len(got) > 0 {
		t.Errorf("3 attempts, no wait: %s", strings.Join(got, "; "))
	}
	got := driftMismatches(s, "failsafe", "v0.9.8", probeResult{Version: "v9.9.9", Attempts: delays, MaxAttempts: 4})
	want := "failsafe: github.com/failsafe-go/failsafe-go v9.9.9 (probed) against profile failsafe (modelled on 0.9.8, pinned v0.9.8): attempt 4: the library stops after 4 attempts, the profile after 3"
	if len(got) != 1 || got[0] != want {
		t.Errorf("4 attempts: %q, want [%q]", got, want)
	}
	if got := driftMismatches(s, "failsafe", "v0.9.8", probeResult{Version: "v9.9.9", Attempts: delays, MaxAttempts: -1}); len(got) > 0 {
		t.Errorf("a probe that did not reach the retry loop is held to the limit: %s", strings.Join(got, "; "))
	}
}
