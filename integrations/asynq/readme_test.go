package asynqretry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/errmatch"
	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
	"github.com/retrykit/retrykit/internal/readmecheck"
	"github.com/retrykit/retrykit/policy"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/asynq/README.md"

// readmeMain is the repository's integrations guide: its go blocks that
// use this package are checked too.
const readmeMain = "../../docs/integrations.md"

// readmeSnippetInstall is the README's "The lines you add".
func readmeSnippetInstall(cfg asynq.Config, redisOpt asynq.RedisClientOpt, mux asynq.Handler, policyJSON string) error {
	rk, err := asynqretry.Parse([]byte(policyJSON)) // or asynqretry.New(p) with a *policy.Policy
	if err != nil {
		return err
	}
	rk.Install(&cfg) // RetryDelayFunc = rk.RetryDelay
	srv := asynq.NewServer(redisOpt, cfg)
	return srv.Start(rk.Handler(mux)) // or mux.Use(rk.Handler)
}

// readmeSnippetClassify is the README's handler error.
func readmeSnippetClassify() error {
	return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
}

// readmeSnippetSnooze is the README's snooze.
func readmeSnippetSnooze() error {
	return errmatch.Snoozed(time.Minute) // not ready: asynq runs it again, no retry counted
}

// readmeSnippetEnqueue is the README's enqueue.
func readmeSnippetEnqueue(client *asynq.Client, payload []byte, own *policy.Policy) error {
	task := asynqretry.NewTask("charge", payload, own) // carries own in a header, sets MaxRetry
	_, err := client.Enqueue(task)
	return err
}

// The snippets do what the README says (the server and enqueue ones run
// against Redis in TestReadmeSnippetsServer).
func TestReadmeSnippetsRun(t *testing.T) {
	if err := readmeSnippetInstall(asynq.Config{}, asynq.RedisClientOpt{}, asynq.NewServeMux(), `{"max_attempts":-1}`); err == nil {
		t.Error("an invalid policy was accepted")
	}
	if r := errmatch.RequestOf(readmeSnippetSnooze()); r.Kind != errmatch.Snooze || r.Delay != time.Minute {
		t.Errorf("snooze snippet: %+v", r)
	}
	if typ, code, ok := errmatch.Classify(readmeSnippetClassify()); !ok || typ != "payment.declined" || code != errmatch.CodeDeadLetter {
		t.Errorf("Classify: %q %q %v", typ, code, ok)
	}
}

// TestReadmeSnippetsServer runs the install and enqueue snippets against
// Redis: the task is stored with the policy's MaxRetry and worked.
func TestReadmeSnippetsServer(t *testing.T) {
	e := newEnv(t, 7)
	done := make(chan struct{}, 1)
	mux := asynq.NewServeMux()
	mux.HandleFunc("charge", func(context.Context, *asynq.Task) error { done <- struct{}{}; return nil })
	cfg := asynq.Config{Queues: map[string]int{"default": 1}, LogLevel: asynq.FatalLevel, TaskCheckInterval: 20 * time.Millisecond}
	if err := readmeSnippetInstall(cfg, e.opt, mux, `{"max_attempts":5}`); err != nil {
		t.Fatal(err)
	}
	client := asynq.NewClient(e.opt)
	defer client.Close()
	if err := readmeSnippetEnqueue(client, nil, mustPolicy(`{"max_attempts":4}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the enqueued task did not run")
	}
}

// TestReadmeSnippets: every go block of the module's README and of its
// example's README, and each block of docs/integrations.md that uses
// this package, is line for line the body of a readmeSnippet function of
// this file, so each snippet compiles (and the tests above run it).
func TestReadmeSnippets(t *testing.T) {
	bodies, err := readmecheck.Compiled("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct{ path, contains string }{
		{"README.md", ""}, {readmeExample, ""}, {readmeMain, "asynqretry."},
	} {
		missing, err := readmecheck.Missing(bodies, src.path, src.contains)
		if err != nil {
			t.Error(err)
		}
		for _, b := range missing {
			t.Errorf("%s: this go block is not compiled by a readmeSnippet function of readme_test.go:\n%s", src.path, b)
		}
	}
}
