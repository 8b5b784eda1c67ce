package jetstreamretry_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// envServer names the nats-server binary the tests start; without it they
// look for nats-server on the PATH. With CI=true a missing binary fails the
// tests instead of skipping them.
const envServer = "RETRYKIT_NATS_SERVER"

func serverBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(envServer); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		msg := "no nats-server: set " + envServer + " or put nats-server on the PATH (go install github.com/nats-io/nats-server/v2@latest)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// node is one nats-server process with JetStream on loopback.
type node struct {
	name string
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

// kill stops the node at once (SIGKILL), as a crash would.
func (n *node) kill() {
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
}

// startNodes starts n JetStream servers, clustered when n > 1, and stops
// them at the end of the test.
func startNodes(t testing.TB, n int) []*node {
	t.Helper()
	return startNodesWith(t, n, "")
}

// startNodesWith is startNodes with each server also reading the
// configuration text conf (none when empty), such as "max_payload: 16384".
func startNodesWith(t testing.TB, n int, conf string) []*node {
	t.Helper()
	bin := serverBinary(t)
	dir := t.TempDir()
	ports, cports := make([]int, n), make([]int, n)
	for i := range n {
		ports[i], cports[i] = freePort(t), freePort(t)
	}
	var nodes []*node
	for i := range n {
		name := fmt.Sprintf("rk-%d", i)
		args := []string{"-js", "-a", "127.0.0.1", "-p", strconv.Itoa(ports[i]), "-n", name, "-sd", filepath.Join(dir, name)}
		if conf != "" {
			path := filepath.Join(dir, name+".conf")
			if err := os.WriteFile(path, []byte(conf+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "-c", path)
		}
		if n > 1 {
			var routes []string
			for j := range n {
				if j != i {
					routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(cports[j]))
				}
			}
			args = append(args, "--cluster_name", "rk", "--cluster", "nats://127.0.0.1:"+strconv.Itoa(cports[i]), "--routes", strings.Join(routes, ","))
		}
		cmd := exec.Command(bin, args...)
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		nd := &node{name: name, url: "nats://127.0.0.1:" + strconv.Itoa(ports[i]), cmd: cmd, done: make(chan struct{})}
		go func() { _ = cmd.Wait(); logf.Close(); close(nd.done) }()
		nodes = append(nodes, nd)
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-nd.done:
			case <-time.After(10 * time.Second):
				nd.kill()
			}
		})
	}
	for _, nd := range nodes {
		deadline := time.Now().Add(20 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", strings.TrimPrefix(nd.url, "nats://"), time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, nd.name+".log"))
				t.Fatalf("%s did not listen: %v\n%s", nd.name, err, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nodes
}

// connect connects to the given nodes (any of them), reconnecting for ever.
func connect(t testing.TB, nodes ...*node) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.url)
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// createStream creates a stream, retrying while a cluster elects its
// leaders.
func createStream(t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := js.CreateStream(ctx, cfg)
		cancel()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("create stream %s: %v", cfg.Name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// delivery is one delivery of a message to a handler.
type delivery struct {
	attempt int
	start   time.Time
	end     time.Time
}

// journal records every delivery per message id (the payload).
type journal struct {
	mu sync.Mutex
	m  map[string][]delivery
}

func (j *journal) add(id string, d delivery) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string][]delivery{}
	}
	j.m[id] = append(j.m[id], d)
}

func (j *journal) get(id string) []delivery {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]delivery(nil), j.m[id]...)
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errScript = errors.New("scripted failure")
