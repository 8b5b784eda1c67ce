package jetstreamretry

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/backoff"
)

// The plugin's own cost per message, without the network: the decision
// and settlement bookkeeping around a handler that returns at once (the
// fake message's ack and nak cost nothing).
func BenchmarkProcess(b *testing.B) {
	rk := New(nil, WithSource(backoff.Fixed(0.5)))
	ctx := context.Background()
	ok := func(context.Context, jetstream.Msg) error { return nil }
	fail := fails(errors.New("boom"))
	b.Run("success", func(b *testing.B) {
		b.ReportAllocs()
		m := msgAt(1, 1)
		for i := range b.N {
			m.md.Sequence.Stream = uint64(i)
			m.settled = m.settled[:0]
			_, _ = rk.Process(ctx, m, ok)
		}
	})
	b.Run("retry", func(b *testing.B) {
		b.ReportAllocs()
		m := msgAt(1, 1)
		for i := range b.N {
			// 5 000 messages in turn: each failure is recorded in the
			// error history, which holds 10 000 messages.
			m.md.Sequence.Stream = uint64(i % 5000)
			m.settled = m.settled[:0]
			_, _ = rk.Process(ctx, m, fail)
		}
	})
}
