package jetstreamretry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// HeaderPolicy is the message header that holds a message's own OJS retry
// policy, as JSON.
const HeaderPolicy = "Retrykit-Policy"

// Plugin applies an OJS retry policy to the messages of JetStream
// consumers. Build one with [New] or [Parse]; wrap handlers with
// [Plugin.Handler] (for Consume) or call [Plugin.Process] on each message
// (for Fetch and Next loops); configure consumers with
// [Plugin.ConsumerConfig].
//
// A Plugin's settings are fixed once built, and it is safe for concurrent
// use. The zero Plugin is usable and behaves as New(nil): the OJS default
// policy, jitter from [backoff.Random], no dead-letter subject (dead_letter
// then terminates the message like discard, and says so in the outcome's
// error).
type Plugin struct {
	def       *policy.Policy
	src       backoff.Source
	dl        jetstream.JetStream
	dlSubject string
	heartbeat time.Duration
	onError   ErrorHandler
	cache     policyCache
	hist      history
	settled   settledSet
	waits     waits // snoozes and last delays, per message (extensions.go)
}

// Option configures a Plugin.
type Option func(*Plugin)

// WithSource makes the plugin draw jitter from src instead of
// [backoff.Random]. src must be safe for concurrent use when handlers run
// concurrently ([backoff.Fixed] is; a *math/rand/v2.Rand is not). A nil
// src keeps the default.
func WithSource(src backoff.Source) Option {
	return func(p *Plugin) { p.src = src }
}

// WithDeadLetter makes a dead_letter decision publish the message, with
// its error in headers ([DeadLetterHeaders]), to subject through js, and
// terminate the original only once the stream holding subject has
// acknowledged the copy. A stream must capture subject. An empty subject or
// a nil js removes the dead-letter destination.
func WithDeadLetter(js jetstream.JetStream, subject string) Option {
	return func(p *Plugin) {
		if js == nil || subject == "" {
			p.dl, p.dlSubject = nil, ""
			return
		}
		p.dl, p.dlSubject = js, subject
	}
}

// WithHeartbeat makes the plugin tell the server every interval that a
// message is still being worked on (InProgress), while its handler runs, so
// that a handler longer than the consumer's AckWait is not redelivered. A
// zero or negative interval turns it off (the default): a handler still
// running when AckWait expires loses the message to a redelivery, which
// counts as a failed attempt, as an OJS visibility timeout does.
func WithHeartbeat(interval time.Duration) Option {
	return func(p *Plugin) { p.heartbeat = max(interval, 0) }
}

// ErrorHandler receives an error [Plugin.Handler] could not return: the
// error of settling msg (an ack, nak or term that failed, or a dead-letter
// copy that could not be published, such as [ErrDeadLetterTooLarge]), with
// the message's outcome. It runs on the consumer's goroutine and must not
// settle msg.
type ErrorHandler func(msg jetstream.Msg, out Outcome, err error)

// WithErrorHandler makes [Plugin.Handler] pass each error of settling a
// message to f. Without it (or with a nil f) Handler logs each such error
// with log/slog's default logger, at level Error, naming the message's
// stream and sequence: an error is never dropped silently.
func WithErrorHandler(f ErrorHandler) Option {
	return func(p *Plugin) { p.onError = f }
}

// PanicErrorType is the OJS error type of a handler that panicked (see
// [Plugin.Process]): the policy decides, so non_retryable_errors may list
// it.
const PanicErrorType = "runtime.panic"

// New returns a Plugin whose default policy is def; a nil def means
// policy.Default().
func New(def *policy.Policy, opts ...Option) *Plugin {
	p := &Plugin{def: def}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Parse is New with the default policy decoded from OJS JSON by
// [policy.Parse]; its errors are policy's (errors.Is policy.ErrInvalidPolicy).
func Parse(data []byte, opts ...Option) (*Plugin, error) {
	def, err := policy.Parse(data)
	if err != nil {
		return nil, err
	}
	return New(def, opts...), nil
}

// Policy returns the policy that decides for a message with headers h: the
// policy in its [HeaderPolicy] header when there is a valid one, else the
// plugin's default.
func (p *Plugin) Policy(h nats.Header) *policy.Policy {
	pol, _ := p.policyFor(h)
	return pol
}

// policyFor is Policy with the error of an unreadable header.
func (p *Plugin) policyFor(h nats.Header) (*policy.Policy, error) {
	var def *policy.Policy
	if p != nil {
		def = p.def
	}
	raw := h.Get(HeaderPolicy)
	if raw == "" {
		return def, nil
	}
	var cache *policyCache
	if p != nil {
		cache = &p.cache
	}
	pol, err := cache.get(raw)
	if err != nil {
		return def, fmt.Errorf("jetstreamretry: header %s: %w", HeaderPolicy, err)
	}
	return pol, nil
}

// MaxDeliver is the consumer MaxDeliver for a policy allowing maxAttempts
// attempts (0 counting as 1): one delivery more than the attempts, so that
// an attempt lost to an ack timeout (its delivery never answered) is still
// followed by a delivery on which the plugin applies on_exhaustion instead
// of running the handler. A policy allowing math.MaxInt-1 attempts or more
// gives -1, JetStream's "unlimited"; no value wraps.
func MaxDeliver(maxAttempts int) int {
	n := max(maxAttempts, 1)
	if n >= math.MaxInt-1 {
		return -1
	}
	return n + 1
}

// ConsumerConfig returns cfg made consistent with the plugin's default
// policy: explicit acks (the plugin acks, naks and terminates each message
// itself), MaxDeliver from [MaxDeliver] of the most attempts the policy or
// one of its error rules allows, plus max_snoozes (each snooze is a
// delivery), and no BackOff (JetStream applies
// BackOff to ack timeouts only and cannot jitter; the policy's delays are
// given with each nak). Other fields are kept. Messages carrying their own
// policy in a header are bound by the consumer's MaxDeliver too: set it from
// the largest max_attempts the consumer will see.
func (p *Plugin) ConsumerConfig(cfg jetstream.ConsumerConfig) jetstream.ConsumerConfig {
	cfg.AckPolicy = jetstream.AckExplicitPolicy
	cfg.MaxDeliver = deliveries(p.Policy(nil))
	cfg.BackOff = nil
	return cfg
}

// HandlerFunc handles one message. It returns nil on success or an
// ordinary error, classified with errmatch (an OJS error type and handler
// code attached by errmatch.Wrap). It must not ack, nak or terminate msg:
// the plugin does.
type HandlerFunc func(ctx context.Context, msg jetstream.Msg) error

// Handler returns a jetstream.MessageHandler for Consume that runs h on
// each message through [Plugin.Process], with a context derived from ctx.
// Outcomes are not reported (use Process to see them); an error of
// settling a message goes to the [ErrorHandler] of [WithErrorHandler], or
// to log/slog's default logger.
func (p *Plugin) Handler(ctx context.Context, h HandlerFunc) jetstream.MessageHandler {
	return func(msg jetstream.Msg) {
		out, err := p.Process(ctx, msg, h)
		if err == nil {
			return
		}
		if p != nil && p.onError != nil {
			p.onError(msg, out, err)
			return
		}
		attrs := []any{"subject", msg.Subject(), "attempt", out.Attempt, "err", err}
		if md, merr := msg.Metadata(); merr == nil {
			attrs = append(attrs, "stream", md.Stream, "sequence", md.Sequence.Stream)
		}
		slog.Error("jetstreamretry: message not settled", attrs...)
	}
}

// Outcome is what [Plugin.Process] did with a message.
//
// It is a plain value, safe to copy.
type Outcome struct {
	// Attempt is the 1-based attempt this delivery was: JetStream's
	// delivery count.
	Attempt int
	// Done is true when the handler succeeded and the message was acked.
	Done bool
	// Decision is the policy's decision on a failure (zero when Done).
	Decision policy.Decision
	// Budget is the time-budget rule that ended the message (total_timeout,
	// no_time_left; [HeaderTimeouts]), or budget.ReasonPolicy when the
	// policy decided.
	Budget budget.Reason
	// Err is the handler's error, joined with any problem the plugin had
	// reading the message's policy or judging the failure (nil when Done).
	Err error
	// ErrorType is the OJS error type of the handler's error
	// (errmatch.Classify), "" when it has none.
	ErrorType string
	// Resettled is true when the message had already been settled by
	// this plugin: either a redelivery after a lost ack or term (the
	// settlement is sent again, the handler not run), or a delivery whose
	// handler outlived AckWait while a later delivery settled it (its late
	// result, in Err, is dropped). Done says whether it was acked.
	Resettled bool
}

// ErrExhausted is the error of a delivery beyond the policy's max_attempts:
// the previous attempt's delivery was never answered (an ack timeout), so
// the handler is not run again and on_exhaustion applies.
var ErrExhausted = errors.New("jetstreamretry: attempts exhausted by an unanswered delivery")

// ErrNoDeadLetter is joined to the outcome's error when a dead_letter
// decision terminated the message because the plugin has no dead-letter
// subject ([WithDeadLetter]).
var ErrNoDeadLetter = errors.New("jetstreamretry: dead_letter without a dead-letter subject: message terminated")

// Process runs h on msg and settles msg according to the policy:
//
//  1. The attempt is the delivery count of msg's metadata. A delivery
//     beyond max_attempts (the previous one timed out) does not run h: it
//     fails with [ErrExhausted] and goes to step 3's exhaustion outcome.
//  2. h succeeds: msg is acked.
//  3. h fails: the policy decides from errmatch.Classify(err) and the
//     attempt. Retry: NakWithDelay(delay), jitter drawn from the plugin's
//     source. Discard: Term. DeadLetter: the message is published to the
//     dead-letter subject with [DeadLetterHeaders], then terminated. A copy
//     over the server's max_payload (or the dead-letter stream's
//     max_msg_size) is cut to fit, and says what was cut ([HeaderCut]). If
//     the publish fails all the same (the stream is unavailable, or the
//     original's own headers are too large: [ErrDeadLetterTooLarge]), msg
//     is not terminated but nakked after the policy's first delay, and the
//     publish error is returned, so the message is not lost: it stays in
//     its stream, and is delivered again while MaxDeliver allows.
//
// A failure the policy cannot judge (an unknown handler code) is
// dead-lettered, with the problem joined to the error; a policy header that
// cannot be read gives way to the default policy, its error joined. A
// handler that panics is recovered and counts as a failure of type
// [PanicErrorType]. The returned error is that of settling msg (an ack, nak,
// term or publish that failed), never the handler's, which is in the
// Outcome.
func (p *Plugin) Process(ctx context.Context, msg jetstream.Msg, h HandlerFunc) (Outcome, error) {
	md, err := msg.Metadata()
	if err != nil {
		return Outcome{}, fmt.Errorf("jetstreamretry: not a JetStream message: %w", err)
	}
	key := keyOf(md)
	var ws waitState
	if p != nil {
		ws = p.waits.get(key)
	}
	out := Outcome{Attempt: max(attemptOf(md.NumDelivered)-ws.snoozes, 1)}
	if p != nil {
		if acked, ok := p.settled.get(key); ok {
			out.Resettled, out.Done = true, acked
			if acked {
				return out, msg.Ack()
			}
			return out, msg.Term()
		}
	}
	pol, perr := p.policyFor(msg.Headers())
	var herr error
	if out.Attempt > maxAttemptsOf(pol) {
		herr = ErrExhausted
	} else {
		actx, cancel := attemptContext(ctx, msg.Headers(), md, time.Now())
		herr = p.run(actx, msg, h)
		cancel()
		if p != nil {
			// Another delivery settled the message while h ran (this one
			// had timed out): h's late result must not act again.
			if acked, ok := p.settled.get(key); ok {
				out.Resettled, out.Done, out.Err = true, acked, herr
				return out, nil
			}
		}
		if herr == nil {
			out.Done = true
			p.forget(md, true)
			return out, msg.Ack()
		}
	}
	errType, code, _ := errmatch.Classify(herr)
	// A delivery past max_attempts decides as an exhausted attempt: no
	// error type, so only on_exhaustion applies.
	f := policy.Failure{Attempt: out.Attempt, ErrorType: errType, Code: code,
		Request: errmatch.RequestOf(herr), PrevDelay: ws.prev, Snoozes: ws.snoozes}
	if herr == ErrExhausted {
		f = policy.Failure{Attempt: out.Attempt}
	}
	d, why, berr, derr := p.decideFailure(msg.Headers(), md, pol, f)
	if derr != nil {
		d, why = policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonHandlerCode}, budget.ReasonPolicy
	}
	out.Decision, out.Budget, out.Err, out.ErrorType = d, why, herr, errType
	if perr != nil || berr != nil || derr != nil {
		out.Err = errors.Join(herr, perr, berr, derr)
	}
	if p != nil {
		p.hist.add(key, out.Attempt, errType, out.Err)
	}
	switch d.Action {
	case policy.Retry:
		if p != nil {
			p.waits.note(key, d)
		}
		return out, msg.NakWithDelay(d.Delay)
	case policy.DeadLetter:
		if p == nil || p.dl == nil {
			out.Err = errors.Join(out.Err, ErrNoDeadLetter)
			p.forget(md, false)
			return out, msg.Term()
		}
		if err := p.publishDeadLetter(ctx, msg, md, out); err != nil {
			_ = msg.NakWithDelay(pol.Backoff().Delay(1, p.source()))
			return out, fmt.Errorf("jetstreamretry: dead-letter publish to %s: %w", p.dlSubject, err)
		}
		p.forget(md, false)
		return out, msg.Term()
	default:
		p.forget(md, false)
		return out, msg.Term()
	}
}

// forget drops the error history of a message that reached its end and
// remembers how it ended.
func (p *Plugin) forget(md *jetstream.MsgMetadata, acked bool) {
	if p != nil {
		k := keyOf(md)
		p.hist.take(k)
		p.waits.forget(k)
		p.settled.put(k, acked)
	}
}

// run calls h with a heartbeat, recovering a panic.
func (p *Plugin) run(ctx context.Context, msg jetstream.Msg, h HandlerFunc) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if p != nil && p.heartbeat > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(p.heartbeat)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_ = msg.InProgress()
				}
			}
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			err = errmatch.Wrap(fmt.Errorf("jetstreamretry: handler panic: %v", r), PanicErrorType, "")
		}
		cancel()
		wg.Wait()
	}()
	if h == nil {
		return errors.New("jetstreamretry: nil handler")
	}
	return h(ctx, msg)
}

// source is the plugin's jitter source (nil: backoff.Random).
func (p *Plugin) source() backoff.Source {
	if p == nil {
		return nil
	}
	return p.src
}

// attemptOf maps JetStream's delivery count to the 1-based attempt,
// saturating.
func attemptOf(delivered uint64) int {
	if delivered == 0 {
		return 1
	}
	if delivered > math.MaxInt {
		return math.MaxInt
	}
	return int(delivered)
}
