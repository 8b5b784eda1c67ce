package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	_ "unsafe" // go:linkname

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/retrykit/retrykit/profile"
)

// grpc-go keeps both of its delays unexported: the connection backoff in
// internal/backoff (Exponential.Backoff, which a ClientConn calls with its
// addrConn's backoffIdx) and the retry delay inline in stream.go
// (csAttempt.shouldRetry). Both are run for real here, three ways:
//
//   - Exponential.Backoff itself, pulled in by go:linkname and sampled like
//     the other Go libraries (defaults and configurations, any attempt);
//   - real ClientConns and a real grpc.Server on in-memory connections
//     (net.Pipe) inside a testing/synctest bubble, whose clock moves only
//     when every goroutine waits, so the time between a channel's failed
//     dial and its next dial, or between two attempts of one RPC reaching
//     the server, is exactly the duration grpc-go armed its timer with: the
//     delays are read exactly, 2000 times per attempt;
//   - the same over TCP loopback on the wall clock, where a gap can only be
//     longer than the delay (so the low bound is strict, the high one gets a
//     scheduling tolerance), to show the bubble changes nothing.

// grpcModule is the grpc-go module whose code runs.
const grpcModule = "google.golang.org/grpc"

// grpcExponential has the layout of grpc-go's internal/backoff.Exponential,
// a struct holding one backoff.Config (internal/backoff/backoff.go).
type grpcExponential struct {
	Config backoff.Config
}

// grpcDefaultExponential is internal/backoff.DefaultExponential, the
// strategy a ClientConn uses without grpc.WithConnectParams.
//
//go:linkname grpcDefaultExponential google.golang.org/grpc/internal/backoff.DefaultExponential
var grpcDefaultExponential grpcExponential

// grpcExponentialBackoff is internal/backoff.Exponential.Backoff, the
// method value with its receiver as the first argument.
//
//go:linkname grpcExponentialBackoff google.golang.org/grpc/internal/backoff.Exponential.Backoff
func grpcExponentialBackoff(bc grpcExponential, retries int) time.Duration

// grpcBackoffSampler samples Exponential.Backoff for the delay after attempt
// n: a ClientConn passes its backoffIdx, the failures before this one
// (clientconn.go, resetTransportAndUnlock), so retries = n - 1.
func grpcBackoffSampler(cfg backoff.Config) sampler {
	return func(n int) (time.Duration, time.Duration) {
		d := grpcExponentialBackoff(grpcExponential{Config: cfg}, n-1)
		return d, d
	}
}

// TestGRPCConnectBackoffReal samples grpc-go's own Exponential.Backoff at
// its defaults against the grpc_connect vectors and profile.Bounds.
func TestGRPCConnectBackoffReal(t *testing.T) {
	t.Logf("real implementation: %s %s, internal/backoff.Exponential.Backoff (go:linkname)", grpcModule, moduleVersion(t, grpcModule))
	// The linked variable must read back as grpc's exported DefaultConfig:
	// proof that the struct layout matches and the link resolved.
	if grpcDefaultExponential.Config != backoff.DefaultConfig {
		t.Fatalf("internal/backoff.DefaultExponential reads %+v, want backoff.DefaultConfig %+v: the linked layout does not match", grpcDefaultExponential.Config, backoff.DefaultConfig)
	}
	sampledSystem{
		profile: "grpc_connect",
		upTo:    40,
		sample:  grpcBackoffSampler(grpcDefaultExponential.Config),
	}.check(t)
}

// grpcConnectConfigs are backoff.Configs grpc-go accepts (WithConnectParams
// validates nothing), each with the profile settings that name it.
var grpcConnectConfigs = []struct {
	spec     string
	cfg      backoff.Config
	attempts []int
}{
	{"grpc_connect:Multiplier=1.005", backoff.Config{BaseDelay: time.Second, Multiplier: 1.005, Jitter: 0.2, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 10, 100, 960, 961, 2000}},
	{"grpc_connect:Multiplier=1.005,Jitter=0", backoff.Config{BaseDelay: time.Second, Multiplier: 1.005, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 500, 961, 5000}},
	{"grpc_connect:Multiplier=1", backoff.Config{BaseDelay: time.Second, Multiplier: 1, Jitter: 0.2, MaxDelay: 120 * time.Second}, []int{1, 2, 50}},
	{"grpc_connect:Multiplier=0.5", backoff.Config{BaseDelay: time.Second, Multiplier: 0.5, Jitter: 0.2, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 10, 1200}},
	{"grpc_connect:Multiplier=-2", backoff.Config{BaseDelay: time.Second, Multiplier: -2, Jitter: 0.2, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 4, 5, 9, 10}},
	{"grpc_connect:BaseDelay=100ms,Multiplier=3,MaxDelay=1s", backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 3, Jitter: 0.2, MaxDelay: time.Second}, []int{1, 2, 3, 4, 5, 6}},
	{"grpc_connect:BaseDelay=5s,MaxDelay=1s", backoff.Config{BaseDelay: 5 * time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}, []int{1, 2, 3}},
	{"grpc_connect:Jitter=0", backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 11, 12, 13, 14}},
	{"grpc_connect:Jitter=1", backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 1, MaxDelay: 120 * time.Second}, []int{1, 2, 12}},
	// Above 1 the low end goes below 0, which grpc-go returns as 0.
	{"grpc_connect:Jitter=2", backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 2, MaxDelay: 120 * time.Second}, []int{1, 2, 3, 12}},
	{"grpc_connect:Jitter=1000000,Multiplier=0.5", backoff.Config{BaseDelay: time.Second, Multiplier: 0.5, Jitter: 1e6, MaxDelay: 120 * time.Second}, []int{1, 2, 20}},
	// MaxDelay near the largest Duration, without jitter, so the real
	// float64 stays below 2^63 (past it Go's conversion is
	// implementation-specific and the profile saturates, RK-52).
	{"grpc_connect:Multiplier=1.01,MaxDelay=2562047h,Jitter=0", backoff.Config{BaseDelay: time.Second, Multiplier: 1.01, MaxDelay: 2562047 * time.Hour}, []int{1, 100, 2000, 4000}},
}

// TestGRPCConnectConfigured samples Exponential.Backoff with configured
// backoff.Configs, multipliers near 1, at 1, below 1 and negative among
// them, against the configured profile's Bounds.
func TestGRPCConnectConfigured(t *testing.T) {
	for _, c := range grpcConnectConfigs {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v (grpc-go accepts %+v)", c.spec, err, c.cfg)
		}
		for _, n := range c.attempts {
			lo, hi := p.Bounds(n)
			checkSampled(t, c.spec, n, lo, hi, grpcBackoffSampler(c.cfg))
		}
	}
}

// pooled replays delays collected from real runs: pool[n] holds the delays
// observed after attempt n, and each call returns the next one in turn, so
// [checkSampled]'s 2000 calls see each of 2000 real delays once.
func pooled(t *testing.T, pool map[int][]time.Duration) sampler {
	t.Helper()
	next := map[int]int{}
	return func(n int) (time.Duration, time.Duration) {
		ds := pool[n]
		if len(ds) == 0 {
			t.Fatalf("no real delay was observed after attempt %d", n)
		}
		d := ds[next[n]%len(ds)]
		next[n]++
		return d, d
	}
}

// grpcChannelGaps runs `channels` real ClientConns, each in its own synctest
// bubble, whose dialer records the (bubble) time of each dial and refuses
// it; it returns, for attempt n = 1..dials-1, the time from dial n to dial
// n+1 of every channel. The dial fails at once and the bubble's clock stands
// still while goroutines run, so each gap is exactly the backoff grpc-go
// armed its timer with after the failed attempt.
func grpcChannelGaps(t *testing.T, opts []grpc.DialOption, dials, channels int) map[int][]time.Duration {
	t.Helper()
	gaps := map[int][]time.Duration{}
	for range channels {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var at []time.Time
			enough := make(chan struct{})
			dialer := func(context.Context, string) (net.Conn, error) {
				mu.Lock()
				defer mu.Unlock()
				at = append(at, time.Now())
				if len(at) == dials {
					close(enough)
				}
				return nil, errors.New("retrykit verify: connection refused")
			}
			cc, err := grpc.NewClient("passthrough:///retrykit-verify-refused", append([]grpc.DialOption{
				grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			cc.Connect()
			<-enough
			if err := cc.Close(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for n := 1; n < dials; n++ {
				gaps[n] = append(gaps[n], at[n].Sub(at[n-1]))
			}
		})
	}
	return gaps
}

// TestGRPCConnectChannel runs real ClientConns against a dialer that
// refuses: at grpc-go's defaults (no WithConnectParams) and with configured
// ConnectParams, the wait from each failed connection attempt to the next is
// read exactly, 2000 channels each, and must lie within the profile's
// Bounds for that attempt, reaching both ends; and each channel keeps
// dialing (no attempt limit).
func TestGRPCConnectChannel(t *testing.T) {
	t.Logf("real implementation: %s %s, ClientConn reconnecting (synctest bubble)", grpcModule, moduleVersion(t, grpcModule))
	for _, c := range []struct {
		spec  string
		opts  []grpc.DialOption
		dials int
	}{
		// The defaults reach MaxDelay at the 12th attempt.
		{"grpc_connect", nil, 14},
		{"grpc_connect:BaseDelay=10ms,Multiplier=2,Jitter=0.5,MaxDelay=100ms", []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 2, Jitter: 0.5, MaxDelay: 100 * time.Millisecond}})}, 7},
		{"grpc_connect:Multiplier=0.5,Jitter=0", []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: time.Second, Multiplier: 0.5, MaxDelay: 120 * time.Second}})}, 5},
	} {
		t.Run(c.spec, func(t *testing.T) {
			p, err := profile.Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if p.MaxAttempts() != 0 {
				t.Errorf("profile %s has MaxAttempts %d; a grpc-go channel reconnects without limit", c.spec, p.MaxAttempts())
			}
			gaps := grpcChannelGaps(t, c.opts, c.dials, samples)
			sample := pooled(t, gaps)
			for n := 1; n < c.dials; n++ {
				lo, hi := p.Bounds(n)
				smin, smax := checkSampled(t, c.spec, n, lo, hi, sample)
				t.Logf("attempt %d: %d channels waited [%v, %v]; profile.Bounds [%v, %v]", n, len(gaps[n]), smin, smax, lo, hi)
			}
		})
	}
}

// TestGRPCConnectLoopback is TestGRPCConnectChannel on the wall clock: one
// ClientConn dials a TCP loopback port that refuses. A gap also holds the
// refused dial and scheduling, so it must be at least the profile's low
// bound and at most its high bound plus a tolerance.
func TestGRPCConnectLoopback(t *testing.T) {
	const tolerance = 100 * time.Millisecond
	spec := "grpc_connect:BaseDelay=20ms,Multiplier=1.6,Jitter=0.2,MaxDelay=100ms"
	p, err := profile.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // the port now refuses
	const dials = 9
	var mu sync.Mutex
	var at []time.Time
	enough := make(chan struct{})
	var d net.Dialer
	cc, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 100 * time.Millisecond}}),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			mu.Lock()
			at = append(at, time.Now())
			if len(at) == dials {
				close(enough)
			}
			mu.Unlock()
			return d.DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cc.Connect()
	select {
	case <-enough:
	case <-time.After(20 * time.Second):
		t.Fatalf("the channel dialed %d times in 20s, want %d", len(at), dials)
	}
	cc.Close()
	mu.Lock()
	defer mu.Unlock()
	for n := 1; n < dials; n++ {
		gap := at[n].Sub(at[n-1])
		lo, hi := p.Bounds(n)
		if gap < lo || gap > hi+tolerance {
			t.Errorf("%s: attempt %d: waited %v, want within [%v, %v] (+%v scheduling)", spec, n, gap, lo, hi, tolerance)
		}
		t.Logf("attempt %d: waited %v; profile.Bounds [%v, %v]", n, gap, lo, hi)
	}
}

// pipeListener is a net.Listener of in-memory connections (net.Pipe), so a
// grpc.Server and its clients can live in one synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial is the client's dialer: one end of a new pipe, the other accepted.
func (l *pipeListener) dial(ctx context.Context, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "retrykit-verify-pipe" }

// grpcRetryMethod is the method every test RPC calls; the server answers
// it (and everything else) UNAVAILABLE.
const grpcRetryMethod = "/retrykit.verify.Fail/Call"

// grpcRetryPolicy is a service config with one retryPolicy for
// grpcRetryMethod's service, retrying UNAVAILABLE; durations are written in
// the config's "seconds.nanoss" form.
func grpcRetryPolicy(maxAttempts int, initial, maxBackoff time.Duration, multiplier float64) string {
	secs := func(d time.Duration) string { return fmt.Sprintf("%d.%09ds", d/time.Second, d%time.Second) }
	b, err := json.Marshal(map[string]any{"methodConfig": []any{map[string]any{
		"name": []any{map[string]any{"service": "retrykit.verify.Fail"}},
		"retryPolicy": map[string]any{
			"maxAttempts": maxAttempts, "initialBackoff": secs(initial), "maxBackoff": secs(maxBackoff),
			"backoffMultiplier": multiplier, "retryableStatusCodes": []string{"UNAVAILABLE"},
		},
	}}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// grpcRetryRuns makes `rpcs` unary RPCs, one after another, from a real
// ClientConn with the service config sc (and opts) to a real grpc.Server
// that answers UNAVAILABLE, both in one synctest bubble over net.Pipe. The
// server records the (bubble) time each attempt arrives. It returns, for
// attempt n, the time from attempt n's arrival to attempt n+1's — exactly
// the delay grpc-go drew, since nothing else moves the bubble's clock —
// and how many attempts each RPC made.
func grpcRetryRuns(t *testing.T, sc string, opts []grpc.DialOption, rpcs int) (gaps map[int][]time.Duration, attempts []int) {
	t.Helper()
	gaps = map[int][]time.Duration{}
	synctest.Test(t, func(t *testing.T) {
		lis := newPipeListener()
		var mu sync.Mutex
		var at []time.Time
		srv := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			return status.Error(codes.Unavailable, "retrykit verify: unavailable")
		}))
		served := make(chan error, 1)
		go func() { served <- srv.Serve(lis) }()
		cc, err := grpc.NewClient("passthrough:///retrykit-verify", append([]grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(lis.dial),
			grpc.WithDefaultServiceConfig(sc)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for range rpcs {
			err := cc.Invoke(context.Background(), grpcRetryMethod, &emptypb.Empty{}, &emptypb.Empty{})
			if !grpcRetriesExhausted(err) {
				t.Fatalf("RPC ended with %v, want the last attempt's UNAVAILABLE", err)
			}
			mu.Lock()
			for n := 1; n < len(at); n++ {
				gaps[n] = append(gaps[n], at[n].Sub(at[n-1]))
			}
			attempts = append(attempts, len(at))
			at = nil
			mu.Unlock()
		}
		cc.Close()
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return gaps, attempts
}

// grpcRetriesExhausted reports whether err is how grpc-go v1.84.0 ends an
// RPC whose every attempt was answered UNAVAILABLE: the last status wrapped
// as "max retries exhausted: failed after N attempts: …" (stream.go L857),
// or, when the server's answer beat the request (SendMsg saw io.EOF), that
// text wrapping io.EOF, whose status code is Unknown.
func grpcRetriesExhausted(err error) bool {
	if status.Code(err) == codes.Unavailable {
		return true
	}
	return errors.Is(err, io.EOF) && strings.HasPrefix(err.Error(), "max retries exhausted: failed after ")
}

// TestGRPCRetryReal checks the grpc_retry vectors and profile.Bounds against
// grpc-go's own retries: 2000 RPCs with the profile's retryPolicy (A6's
// example) and maxAttempts raised to 9 (WithMaxCallAttempts) so the delays
// after attempts 1..8 are read; the delay does not depend on maxAttempts
// (stream.go uses numRetriesSincePushback). The decision vectors and
// MaxAttempts are checked on a channel with grpc-go's default cap.
func TestGRPCRetryReal(t *testing.T) {
	t.Logf("real implementation: %s %s, client retries (stream.go) over net.Pipe in a synctest bubble", grpcModule, moduleVersion(t, grpcModule))
	const upTo = 8
	gaps, attempts := grpcRetryRuns(t, grpcRetryPolicy(upTo+1, 100*time.Millisecond, time.Second, 2), []grpc.DialOption{grpc.WithMaxCallAttempts(upTo + 1)}, samples)
	for _, a := range attempts {
		if a != upTo+1 {
			t.Fatalf("an RPC made %d attempts with maxAttempts %d and WithMaxCallAttempts(%[2]d)", a, upTo+1)
		}
	}
	p := vectorProfile(t, "grpc_retry")
	_, made := grpcRetryRuns(t, grpcRetryPolicy(p.MaxAttempts(), 100*time.Millisecond, time.Second, 2), nil, 1)
	sampledSystem{
		profile: "grpc_retry",
		upTo:    upTo,
		sample:  pooled(t, gaps),
		retry:   func(n int) bool { return n < made[0] },
	}.check(t)
}

// grpcRetryConfigs are retry policies grpc-go accepts, with the profile
// settings that name them: the cap, multipliers near 1 and below 1, a
// nanosecond initialBackoff, and maxAttempts above grpc-go's cap of 5.
var grpcRetryConfigs = []struct {
	spec                string
	maxAttempts         int
	initial, maxBackoff time.Duration
	multiplier          float64
}{
	{"grpc_retry:maxAttempts=5,initialBackoff=0.5s,maxBackoff=2s,backoffMultiplier=2", 5, 500 * time.Millisecond, 2 * time.Second, 2},
	{"grpc_retry:maxAttempts=9", 9, 100 * time.Millisecond, time.Second, 2},
	{"grpc_retry:maxAttempts=5,backoffMultiplier=1.005,initialBackoff=1s,maxBackoff=30s", 5, time.Second, 30 * time.Second, 1.005},
	{"grpc_retry:maxAttempts=5,backoffMultiplier=0.5", 5, 100 * time.Millisecond, time.Second, 0.5},
	{"grpc_retry:maxAttempts=4,backoffMultiplier=1000000", 4, 100 * time.Millisecond, time.Second, 1e6},
	{"grpc_retry:maxAttempts=4,backoffMultiplier=1e-300", 4, 100 * time.Millisecond, time.Second, 1e-300},
	{"grpc_retry:maxAttempts=3,initialBackoff=1ns,maxBackoff=1ns", 3, 1, 1, 2},
	{"grpc_retry:maxAttempts=2,initialBackoff=3s,maxBackoff=1s", 2, 3 * time.Second, time.Second, 2},
}

// TestGRPCRetryConfigured runs each configured policy on a channel with
// grpc-go's defaults (maxAttempts capped at 5): 2000 RPCs, every delay
// within the configured profile's Bounds and reaching both ends, and every
// RPC making exactly the profile's MaxAttempts attempts.
func TestGRPCRetryConfigured(t *testing.T) {
	for _, c := range grpcRetryConfigs {
		t.Run(c.spec, func(t *testing.T) {
			p, err := profile.Parse(c.spec)
			if err != nil {
				t.Fatalf("%v (grpc-go accepts it)", err)
			}
			gaps, attempts := grpcRetryRuns(t, grpcRetryPolicy(c.maxAttempts, c.initial, c.maxBackoff, c.multiplier), nil, samples)
			for _, a := range attempts {
				if a != p.MaxAttempts() {
					t.Fatalf("an RPC made %d attempts; profile %s says MaxAttempts %d", a, c.spec, p.MaxAttempts())
				}
			}
			sample := pooled(t, gaps)
			for n := 1; n < p.MaxAttempts(); n++ {
				lo, hi := p.Bounds(n)
				smin, smax := checkSampled(t, c.spec, n, lo, hi, sample)
				t.Logf("attempt %d: %d RPCs waited [%v, %v]; profile.Bounds [%v, %v]", n, len(gaps[n]), smin, smax, lo, hi)
			}
		})
	}
}

// TestGRPCRetryAttempts makes one RPC per maxAttempts on a channel dialed
// with and without grpc.WithMaxCallAttempts and compares the attempts it
// made with the profile's MaxAttempts (grpc-go caps the policy's value at
// the channel's maxCallAttempts, 5 by default or below 2).
func TestGRPCRetryAttempts(t *testing.T) {
	for _, c := range []struct{ maxAttempts, maxCallAttempts int }{
		{2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {9, 0}, {1000, 0}, {math.MaxInt32, 0},
		{9, 7}, {3, 100}, {9, 1}, {9, -5}, {12, 12}, {40, 30},
	} {
		spec := fmt.Sprintf("grpc_retry:maxAttempts=%d,initialBackoff=0.001s", c.maxAttempts)
		var opts []grpc.DialOption
		if c.maxCallAttempts != 0 {
			spec += fmt.Sprintf(",maxCallAttempts=%d", c.maxCallAttempts)
			opts = append(opts, grpc.WithMaxCallAttempts(c.maxCallAttempts))
		}
		p, err := profile.Parse(spec)
		if err != nil {
			t.Errorf("%s: %v (grpc-go accepts it)", spec, err)
			continue
		}
		_, made := grpcRetryRuns(t, grpcRetryPolicy(c.maxAttempts, time.Millisecond, time.Second, 2), opts, 1)
		if made[0] != p.MaxAttempts() {
			t.Errorf("maxAttempts %d, WithMaxCallAttempts %d: grpc-go made %d attempts; profile %s says MaxAttempts %d",
				c.maxAttempts, c.maxCallAttempts, made[0], spec, p.MaxAttempts())
		}
	}
}

// TestGRPCRetryRefusedPolicies gives grpc-go retry policies it rejects
// (maxAttempts below 2, a zero or negative backoff or multiplier): grpc-go
// refuses the channel, and the profile must refuse the same settings.
func TestGRPCRetryRefusedPolicies(t *testing.T) {
	for _, c := range []struct {
		setting             string
		maxAttempts         int
		initial, maxBackoff time.Duration
		multiplier          float64
	}{
		{"maxAttempts=1", 1, time.Second, time.Second, 2},
		{"maxAttempts=0", 0, time.Second, time.Second, 2},
		{"initialBackoff=0s", 4, 0, time.Second, 2},
		{"maxBackoff=0s", 4, time.Second, 0, 2},
		{"backoffMultiplier=0", 4, time.Second, time.Second, 0},
		{"backoffMultiplier=-1", 4, time.Second, time.Second, -1},
	} {
		_, err := grpc.NewClient("passthrough:///retrykit-verify", grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultServiceConfig(grpcRetryPolicy(c.maxAttempts, c.initial, c.maxBackoff, c.multiplier)))
		if err == nil {
			t.Errorf("%s: grpc-go accepted the policy; the test expects it refused", c.setting)
		}
		if _, perr := profile.Parse("grpc_retry:" + c.setting); perr == nil {
			t.Errorf("grpc_retry:%s: the profile accepts what grpc-go refuses (%v)", c.setting, err)
		}
	}
}

// TestGRPCRetryLoopback is the retry check on the wall clock over TCP
// loopback: each gap the server sees holds the delay plus the round trip and
// scheduling, so it must be at least the profile's low bound and at most its
// high bound plus a tolerance; every RPC makes the profile's MaxAttempts.
func TestGRPCRetryLoopback(t *testing.T) {
	const tolerance = 100 * time.Millisecond
	spec := "grpc_retry:maxAttempts=5,initialBackoff=5ms,maxBackoff=40ms,backoffMultiplier=2"
	p, err := profile.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var at []time.Time
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		return status.Error(codes.Unavailable, "retrykit verify: unavailable")
	}))
	go srv.Serve(lis)
	defer srv.Stop()
	cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(grpcRetryPolicy(5, 5*time.Millisecond, 40*time.Millisecond, 2)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	var report []string
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := cc.Invoke(ctx, grpcRetryMethod, &emptypb.Empty{}, &emptypb.Empty{})
		cancel()
		if !grpcRetriesExhausted(err) {
			t.Fatalf("RPC ended with %v, want the last attempt's UNAVAILABLE", err)
		}
		mu.Lock()
		if len(at) != p.MaxAttempts() {
			t.Errorf("an RPC made %d attempts; profile %s says MaxAttempts %d", len(at), spec, p.MaxAttempts())
		}
		for n := 1; n < len(at); n++ {
			gap := at[n].Sub(at[n-1])
			lo, hi := p.Bounds(n)
			if gap < lo || gap > hi+tolerance {
				t.Errorf("%s: attempt %d: the next attempt arrived %v later, want within [%v, %v] (+%v scheduling)", spec, n, gap, lo, hi, tolerance)
			}
			if len(report) < 4 {
				report = append(report, fmt.Sprintf("attempt %d: %v in [%v, %v]", n, gap, lo, hi))
			}
		}
		at = nil
		mu.Unlock()
	}
	t.Logf("first RPC: %s", strings.Join(report, "; "))
}
