package jetstreamretry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/errmatch"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
	"github.com/retrykit/retrykit/internal/readmecheck"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/jetstream/README.md"

// readmeMain is the repository's integrations guide: its go blocks that
// use this package are checked too.
const readmeMain = "../../docs/integrations.md"

// readmeSnippetInstall is the README's "The lines you add".
func readmeSnippetInstall(ctx context.Context, js jetstream.JetStream, stream jetstream.Stream, policyJSON string, handle jetstreamretry.HandlerFunc) error {
	rk, err := jetstreamretry.Parse([]byte(policyJSON), jetstreamretry.WithDeadLetter(js, "dlq.orders"))
	if err != nil {
		return err
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers"}))
	if err != nil {
		return err
	}
	_, err = cons.Consume(rk.Handler(ctx, handle)) // or rk.Process(ctx, msg, handle) in a Fetch loop
	return err
}

// readmeSnippetSnooze is the README's snooze.
func readmeSnippetSnooze() error {
	return errmatch.Snoozed(time.Minute) // not ready: nakked for a minute, no attempt spent
}

// readmeSnippetClassify is the README's handler error.
func readmeSnippetClassify() error {
	return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
}

// The install snippet runs against a real server: the message published
// is handled through the plugin.
func TestReadmeSnippetsRun(t *testing.T) {
	if r := errmatch.RequestOf(readmeSnippetSnooze()); r.Kind != errmatch.Snooze || r.Delay != time.Minute {
		t.Errorf("snooze snippet: %+v", r)
	}
	if typ, code, ok := errmatch.Classify(readmeSnippetClassify()); !ok || typ != "payment.declined" || code != errmatch.CodeDeadLetter {
		t.Errorf("Classify: %q %q %v", typ, code, ok)
	}
	nodes := startNodes(t, 1)
	_, js := connect(t, nodes...)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "README", Subjects: []string{"readme.>"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 1)
	err := readmeSnippetInstall(ctx, js, stream, `{"max_attempts":2}`, func(context.Context, jetstream.Msg) error { done <- struct{}{}; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "readme.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := readmeSnippetInstall(ctx, js, stream, `{"max_attempts":-1}`, nil); err == nil {
		t.Error("an invalid policy was accepted")
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
		{"README.md", ""}, {readmeExample, ""}, {readmeMain, "jetstreamretry."},
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
