package verify_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/profile"
)

// startRedis runs a throwaway redis-server (Debian's) on a free loopback
// port, without persistence, stopped when the test ends.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		missing(t, "redis-server (Debian redis-server)", "not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not start", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAsynqExhaustion runs an always-failing task through asynq's own
// server (processor, retry and archive) on a real Redis and counts the
// runs before asynq archives it: its default MaxRetry, and MaxRetry 2,
// against the profile's MaxAttempts. The retry delay is set to zero so
// that the runs follow each other; the delays are checked elsewhere.
func TestAsynqExhaustion(t *testing.T) {
	addr := startRedis(t)
	opt := asynq.RedisClientOpt{Addr: addr}
	var runs atomic.Int64
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:              1,
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 0 },
		DelayedTaskCheckInterval: 50 * time.Millisecond,
		TaskCheckInterval:        20 * time.Millisecond,
		LogLevel:                 asynq.FatalLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc("retrykit:verify", func(context.Context, *asynq.Task) error {
		runs.Add(1)
		return errors.New("retrykit verify: always fails")
	})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	for _, c := range []struct {
		spec string
		opts []asynq.Option
	}{
		{"asynq", nil},
		{"asynq:MaxRetry=2", []asynq.Option{asynq.MaxRetry(2)}},
		{"asynq:MaxRetry=0", []asynq.Option{asynq.MaxRetry(0)}},
		// MaxRetry(-1) is MaxRetry(0) (client.go 95-99): one run, then archived.
		{"asynq:MaxRetry=-1", []asynq.Option{asynq.MaxRetry(-1)}},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		runs.Store(0)
		info, err := client.Enqueue(asynq.NewTask("retrykit:verify", nil), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ti, err := insp.GetTaskInfo(info.Queue, info.ID)
			if err == nil && ti.State == asynq.TaskStateArchived {
				break
			}
			if err != nil && !strings.Contains(err.Error(), "not found") {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not archived after %d runs", c.spec, runs.Load())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := runs.Load(); got != int64(p.MaxAttempts()) {
			t.Errorf("%s: asynq ran the task %d times before archiving it, the profile says %d attempts", c.spec, got, p.MaxAttempts())
		} else {
			t.Logf("%s: asynq archived the task after %d runs, as the profile says", c.spec, got)
		}
	}
}
