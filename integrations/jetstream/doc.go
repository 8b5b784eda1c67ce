// Package jetstreamretry drives the redeliveries of NATS JetStream
// consumers (github.com/nats-io/nats.go/jetstream) with an OJS retry
// policy.
//
// # Model
//
// JetStream redelivers a message that is nakked, or not answered within the
// consumer's AckWait, up to MaxDeliver deliveries. Its own BackOff list
// applies to ack timeouts only and cannot jitter, and it has no dead-letter
// state. A [Plugin] turns each handler result into the OJS decision and
// settles the message with it:
//
//	handler result / decision        what the plugin does
//	success                          Ack
//	retry after delay d              NakWithDelay(d), d with the policy's jitter
//	discard                          Term
//	dead_letter                      publish a copy to the dead-letter subject, then Term
//	no answer within AckWait         JetStream redelivers: a failed attempt
//
// The attempt is the delivery count of the message's metadata, so an ack
// timeout (a handler that ran too long without [WithHeartbeat], or a worker
// that died) counts as a failed attempt, as an OJS visibility timeout does.
// Its redelivery comes after AckWait, not after the policy's delay:
// JetStream decides that one. [MaxDeliver] is max_attempts+1, so that an
// attempt lost to a timeout is followed by one more delivery, on which the
// plugin applies on_exhaustion without running the handler
// ([ErrExhausted]). Handler errors carry their OJS type and code through
// errmatch.Wrap; non_retryable_errors match by exact type or ".*" prefix.
//
// # Retry extensions
//
// The policy may use the retry extensions (docs/extensions.md); each is a
// NakWithDelay. A requested delay (errmatch.WithRetryAfter, bounded by
// max_retry_after) and an error rule's backoff are the nak's delay; a
// snooze (errmatch.Snoozed) is a nak for min(snooze, max_snooze) after
// which the plugin does not count the delivery as an attempt. JetStream
// counts every delivery, so the plugin remembers, per message and in this
// process, the snoozes it granted and its last nak's delay (decorrelated
// jitter's previous delay). [Plugin.ConsumerConfig] sets MaxDeliver for
// the error rules' attempts and max_snoozes too. A retry budget is not
// carried.
//
// # Per-message policies
//
// A message carries its own policy in the [HeaderPolicy] header (OJS JSON);
// others use the plugin's default. Parsed policies are cached, at most 256
// and none over 4 KiB. A consumer's MaxDeliver bounds every message, so set
// it from the largest max_attempts the consumer serves.
//
// # Dead letters
//
// JetStream has no dead-letter state. With [WithDeadLetter] the plugin
// publishes a copy of the message to a subject (a stream must capture it),
// with the original's headers and [DeadLetterHeaders]: stream, sequence,
// subject, the final attempt, the reason, the final error and its type,
// and the history of failed attempts this process saw. A copy that would
// exceed the server's max_payload or the dead-letter stream's max_msg_size
// is cut to fit (the history dropped, then the data cut, then the error
// message), and says so ([HeaderCut], [HeaderDataSize]). The original is
// terminated only after the copy is stored; if storing fails it is nakked
// and tried again, and the error is returned by [Plugin.Process], or given
// by [Plugin.Handler] to the [ErrorHandler] ([WithErrorHandler]) or the
// log: never dropped. Without a dead-letter subject, dead_letter terminates
// the message and the outcome's error says so ([ErrNoDeadLetter]).
//
// # Redelivery of settled messages
//
// Acks and terms are not confirmed by JetStream: one lost with a server
// node is followed by a redelivery. The plugin remembers the last 65 536
// messages it settled and settles such a redelivery again without running
// the handler ([Outcome].Resettled); the memory is per process.
//
// # Time budgets
//
// A message can carry an OJS time budget (package budget, the
// ojs-timeouts extension) in [HeaderTimeouts] ([SetBudget]); its
// created_at is the stream's timestamp of the message. After a failure the
// decision is budget.Budget.Decide's with the jitter draw whose delay is
// then nakked: past created_at + total_timeout the message ends as
// on_exhaustion says ([Outcome.Budget] total_timeout), and a retry that
// could not finish before that deadline is not made (no_time_left,
// ojs-timeouts §9.1). The handler's context ends at the budget's timeout
// or the total deadline, whichever is sooner. AckWait and MaxAge are per
// consumer and per stream, so a message's own timeout does not change its
// redelivery, and enqueue_ttl, grace_period and heartbeat_timeout are
// carried, not enforced.
//
// # Adoption
//
//	rk, err := jetstreamretry.Parse(policyJSON, jetstreamretry.WithDeadLetter(js, "dlq.orders"))
//	if err != nil { ... }
//	cons, err := stream.CreateOrUpdateConsumer(ctx, rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers"}))
//	if err != nil { ... }
//	cc, err := cons.Consume(rk.Handler(ctx, handle))
//
// docs/decisions.md RK-151 records the mapping.
package jetstreamretry
