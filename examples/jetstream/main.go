// Command jetstream runs a NATS JetStream consumer whose redeliveries
// follow an OJS retry policy: one message fails twice and then succeeds,
// another gives up at once with a DEAD_LETTER code and lands, with its
// error, on a dead-letter stream.
//
// It needs a nats-server with JetStream in NATS_URL, for example:
//
//	go install github.com/nats-io/nats-server/v2@latest && nats-server -js &
//	NATS_URL=nats://127.0.0.1:4222 go run .
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/errmatch"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// errNoServer is run's error when NATS_URL is not set.
var errNoServer = errors.New("NATS_URL is not set: this example needs a nats-server with JetStream (nats://host:port). " +
	"For example: go install github.com/nats-io/nats-server/v2@latest && nats-server -js & then NATS_URL=nats://127.0.0.1:4222 go run .")

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	url := os.Getenv("NATS_URL")
	if url == "" {
		return errNoServer
	}
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("cannot reach the nats-server at NATS_URL=%s (is it running with -js?): %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Fresh streams for the example: the work and the dead letters.
	for _, name := range []string{"RK_EXAMPLE", "RK_EXAMPLE_DLQ"} {
		_ = js.DeleteStream(ctx, name)
	}
	work, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RK_EXAMPLE", Subjects: []string{"example.orders"}})
	if err != nil {
		return err
	}
	dlq, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RK_EXAMPLE_DLQ", Subjects: []string{"example.dlq"}})
	if err != nil {
		return err
	}

	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":3,"initial_interval":"PT0.2S","jitter":false,"on_exhaustion":"dead_letter"}`),
		jetstreamretry.WithDeadLetter(js, "example.dlq"))
	if err != nil {
		return err
	}
	cons, err := work.CreateOrUpdateConsumer(ctx, rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers"}))
	if err != nil {
		return err
	}

	var mu sync.Mutex
	attempts := map[string]int{}
	var wg sync.WaitGroup
	wg.Add(2)
	handle := func(ctx context.Context, msg jetstream.Msg) error {
		md, _ := msg.Metadata()
		order := string(msg.Data())
		mu.Lock()
		attempts[order] = int(md.NumDelivered)
		mu.Unlock()
		switch {
		case order == "declined":
			return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
		case md.NumDelivered < 3:
			return fmt.Errorf("gateway timeout on attempt %d", md.NumDelivered)
		}
		return nil
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		out, err := rk.Process(ctx, msg, handle)
		if err != nil {
			log.Print(err)
		}
		if out.Done || out.Decision.Action != 0 {
			wg.Done() // ended: acked, or terminated
		}
	})
	if err != nil {
		return err
	}
	defer cc.Stop()
	for _, order := range []string{"ok-after-retries", "declined"} {
		if _, err := js.Publish(ctx, "example.orders", []byte(order)); err != nil {
			return err
		}
	}
	wg.Wait()
	for _, order := range []string{"ok-after-retries", "declined"} {
		fmt.Printf("order %s: ended after %d attempt(s)\n", order, attempts[order])
	}
	m, err := dlq.GetLastMsgForSubject(ctx, "example.dlq")
	if err != nil {
		return err
	}
	fmt.Printf("dead letter: %s, reason %s, error %q\n", m.Data, m.Header.Get(jetstreamretry.HeaderReason), m.Header.Get(jetstreamretry.HeaderError))
	return nil
}
