package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

func init() {
	commands["serve"] = command{
		summary: "run retrykit's reference OJS server (HTTP binding, in memory)",
		run:     runServe,
	}
}

// serveStop, if set, replaces the SIGINT/SIGTERM wait (test seam): serve
// shuts down when the channel is closed. serveReady, if set, gets the
// listening address.
var (
	serveStop  <-chan struct{}
	serveReady chan<- string
)

// runServe runs `retrykit serve`.
func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default; port 0 picks a free port)")
	clock := fs.String("clock", "real", "clock: real, or manual (time moves only through POST "+ojshttp.AdminClockPath+")")
	vis := fs.Duration("visibility-timeout", 30*time.Second, "(positive) reservation of a fetched job when the FETCH request sets none")
	grace := fs.Duration("shutdown-timeout", 10*time.Second, "(positive) how long in-flight requests may take to finish on SIGINT/SIGTERM")
	keep := fs.Int("keep-finished", 10000, "(at least 1) finished jobs kept per queue and state (completed, cancelled, discarded), the oldest pruned first, each for at most 24h; over all queues at least 100000 of them and 10000 dead letters")
	maxConns := fs.Int("max-conns", 1024, "(at least 1) connections held at once; a new client beyond it closes the longest idle keep-alive connection, else the slowest one sending below ojshttp.MinRequestRate, or waits while none is")
	idle := fs.Duration("idle-timeout", 30*time.Second, "(positive) how long a keep-alive connection may stay idle between requests")
	maxJobs := fs.Int("max-jobs", ojshttp.DefaultMaxJobs, "(at least 1) jobs held at most, in every state (429 queue_full beyond)")
	maxBytes := fs.Int64("max-bytes", ojshttp.DefaultMaxBytes, "(at least 1) bytes of job data held at most, counting each job's args, meta, extension fields, tags, unique key and policy, retry policy (unless shared), ACK result and FAIL error history, plus a fixed overhead per job (a PUSH, ACK or FAIL beyond: 429 queue_full)")
	allowReset := fs.Bool("allow-reset", false, "serve POST "+ojshttp.ResetPath+", which deletes every job (for test suites run against one server)")
	rulesFile := fs.String("replay-rules", "", "a `FILE` of replay_rules JSON (ojs-dead-letter §7.1): automatic replay of the dead letters of every queue")
	var perQueue queueRules
	fs.Var(&perQueue, "queue-replay-rules", "`QUEUE=FILE`: replay rules of one queue, in place of --replay-rules (repeatable)")
	plant := fs.String("plant", "", "") // test-only: plant bugs (internal/ojsfault); hidden from the usage
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageLine("retrykit serve", fs))
		fmt.Fprintln(fs.Output(), "\nServes retrykit's reference executor over the OJS HTTP binding (/ojs/v1/...).")
		fmt.Fprintln(fs.Output(), "State lives in memory: stopping the server loses every job. It prints the")
		fmt.Fprintln(fs.Output(), "base URL on stdout once listening and shuts down gracefully on SIGINT/SIGTERM.")
		fmt.Fprintln(fs.Output(), "\nflags:")
		writeFlags(fs.Output(), fs) // --plant has no usage: hidden
	}
	pos, err := parseFlags(fs, args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "retrykit serve: unexpected argument %q\n", pos[0])
		return 2
	}
	faults, err := ojsfault.Parse(*plant)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit serve: --plant: %v\n", err)
		return 2
	}
	if *keep < 1 {
		fmt.Fprintf(stderr, "retrykit serve: --keep-finished: must be at least 1, got %d\n", *keep)
		return 2
	}
	if *maxConns < 1 {
		fmt.Fprintf(stderr, "retrykit serve: --max-conns: must be at least 1, got %d\n", *maxConns)
		return 2
	}
	if *maxJobs < 1 {
		fmt.Fprintf(stderr, "retrykit serve: --max-jobs: must be at least 1, got %d\n", *maxJobs)
		return 2
	}
	if *maxBytes < 1 {
		fmt.Fprintf(stderr, "retrykit serve: --max-bytes: must be at least 1, got %d\n", *maxBytes)
		return 2
	}
	if *vis <= 0 {
		fmt.Fprintf(stderr, "retrykit serve: --visibility-timeout: must be positive, got %v\n", *vis)
		return 2
	}
	if *idle <= 0 {
		fmt.Fprintf(stderr, "retrykit serve: --idle-timeout: must be positive, got %v\n", *idle)
		return 2
	}
	if *grace <= 0 {
		fmt.Fprintf(stderr, "retrykit serve: --shutdown-timeout: must be positive, got %v\n", *grace)
		return 2
	}
	if _, port, err := net.SplitHostPort(*addr); err != nil || port == "" {
		fmt.Fprintf(stderr, "retrykit serve: --addr: want HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one), got %q\n", *addr)
		return 2
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit just below the memory bound of the flags
		// (serve_memory.go): the collector works harder near it instead
		// of doubling the heap past it.
		debug.SetMemoryLimit(serveMemoryLimit(*maxBytes, *maxJobs))
	}
	if err := checkAddressSpace(*maxBytes, min(debug.SetMemoryLimit(-1), addressSpaceHeap(*maxBytes))); err != nil {
		fmt.Fprintf(stderr, "retrykit serve: %v\n", err)
		return 2
	}
	ropts, err := replayOptions(*rulesFile, perQueue)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit serve: %v\n", err)
		return 2
	}
	events := ojshttp.NewEvents(0)
	eopts := []executor.Option{executor.WithDefaultVisibilityTimeout(*vis), executor.WithObserver(events),
		executor.WithFinishedRetention(24*time.Hour, *keep), executor.WithFinishedRetentionTotal(max(*keep, 100000)),
		executor.WithRetention(0, max(*keep, 10000))}
	eopts = append(eopts, ropts...)
	sopts := []ojshttp.Option{ojshttp.WithEvents(events), ojshttp.WithMaxJobs(*maxJobs), ojshttp.WithMaxBytes(*maxBytes)}
	switch *clock {
	case "real":
	case "manual":
		c := executor.NewFakeClock(time.Now())
		eopts = append(eopts, executor.WithClock(c))
		sopts = append(sopts, ojshttp.WithManualClock(c))
	default:
		fmt.Fprintf(stderr, "retrykit serve: --clock: must be real or manual, got %q\n", *clock)
		return 2
	}
	if *allowReset {
		sopts = append(sopts, ojshttp.WithReset())
	}
	srv := ojshttp.New(executor.New(eopts...), sopts...)
	ojsfault.Plant(srv, faults)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit serve: %v\n", err)
		return 1
	}
	lim := ojshttp.LimitListener(ln, *maxConns)
	ln = lim
	hs := ojshttp.NewHTTPServer(ln.Addr().String(), srv)
	silent := newSilentConns()
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		silent.track(c, st)
		lim.ConnState(c, st) // idle and slow connections give way to new clients
	}
	hs.ConnContext = lim.ConnContext // a request being handled is never taken for a slow one
	hs.IdleTimeout = *idle
	base := "http://" + dialAddr(ln.Addr())
	fmt.Fprintln(stdout, base)
	if faults != 0 {
		fmt.Fprintf(stderr, "retrykit serve: PLANTED FAULTS (test only): %s\n", faults)
	}
	if *clock == "manual" {
		fmt.Fprintf(stderr, "retrykit serve: manual clock: POST %s%s {\"advance_ms\": N}\n", base, ojshttp.AdminClockPath)
	}
	if serveReady != nil {
		serveReady <- ln.Addr().String()
	}
	stopReclaim := make(chan struct{})
	defer close(stopReclaim)
	go reclaimLoop(srv, stopReclaim)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	stop := serveStop
	if stop == nil {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
		ch := make(chan struct{})
		go func() { <-sig; close(ch) }()
		stop = ch
	}
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "retrykit serve: %v\n", err)
		return 1
	case <-stop:
	}
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(ctx) }()
	silent.closeAll()
	if err := <-shut; err != nil {
		fmt.Fprintf(stderr, "retrykit serve: shutdown: %v\n", err)
		return 1
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "retrykit serve: %v\n", err)
		return 1
	}
	return 0
}

// dialAddr is the address a client on this machine dials for a listener at
// a: an unspecified host (0.0.0.0, ::) is reached through loopback.
func dialAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
}

// usageLine returns the usage line of cmd listing every flag of fs that
// has a description, "[--name PLACEHOLDER]" each, wrapped at helpWidth
// under the command's name, so that it never omits a flag.
func usageLine(cmd string, fs *flag.FlagSet) string {
	prefix := "usage: " + cmd
	var b strings.Builder
	line := prefix
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == "" {
			return
		}
		item := "[--" + f.Name
		if ph, _ := flagPlaceholder(f); ph != "" {
			item += " " + ph
		}
		item += "]"
		if len(line)+1+len(item) > helpWidth && line != prefix {
			b.WriteString(line + "\n")
			line = strings.Repeat(" ", len(prefix))
		}
		line += " " + item
	})
	b.WriteString(line + "\n")
	return b.String()
}
