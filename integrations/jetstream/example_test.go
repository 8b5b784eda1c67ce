package jetstreamretry_test

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// A consumer made consistent with a policy, and a message that carries its
// own policy in a header.
func Example() {
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts": 5, "initial_interval": "PT2S"}`))
	if err != nil {
		panic(err)
	}
	cfg := rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers"})
	fmt.Println("MaxDeliver:", cfg.MaxDeliver, "(5 attempts + 1 for an attempt lost to a timeout)")

	h := nats.Header{}
	h.Set(jetstreamretry.HeaderPolicy, `{"max_attempts": 2, "initial_interval": "PT0.5S", "jitter": false}`)
	own := rk.Policy(h)
	fmt.Println("own policy:", own.Spec().MaxAttempts, "attempts, first retry after", own.Backoff().Delay(1, nil))
	// Output:
	// MaxDeliver: 6 (5 attempts + 1 for an attempt lost to a timeout)
	// own policy: 2 attempts, first retry after 500ms
}
