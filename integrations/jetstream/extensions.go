package jetstreamretry

import (
	"sync"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// The retry extensions (docs/extensions.md) on JetStream's own mechanism,
// NakWithDelay:
//
//   - a requested delay (errmatch.WithRetryAfter) and an error rule's
//     backoff are the delay of the nak, decided with the handler's error;
//   - a snooze (errmatch.Snoozed) is a nak with the snooze's wait, after
//     which the plugin does not count the delivery as an attempt: JetStream
//     counts every delivery, so the plugin remembers, per message, how many
//     of its deliveries were snoozes, and the attempt is the delivery count
//     less those. The memory is the process's, like the error history.

// waitState is what the plugin remembers of a message between deliveries:
// the snoozes it took and the delay of its last retry (decorrelated
// jitter's previous delay; a snooze keeps it, docs/extensions.md §3.4).
type waitState struct {
	snoozes int
	prev    time.Duration
}

// waits is the bounded memory of waitStates; the zero value is empty and
// safe for concurrent use.
type waits struct {
	mu sync.Mutex
	m  map[historyKey]waitState
}

func (w *waits) get(k historyKey) waitState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[k]
}

// note records the decision d nakked for message k.
func (w *waits) note(k historyKey, d policy.Decision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[historyKey]waitState)
	}
	s, ok := w.m[k]
	if !ok && len(w.m) >= historyMessages {
		return // full: this message counts its deliveries as attempts
	}
	if d.Reason == policy.ReasonSnoozed {
		s.snoozes++
	} else {
		s.prev = d.Delay
	}
	w.m[k] = s
}

func (w *waits) forget(k historyKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, k)
}

// deliveries is the largest number of deliveries a message under pol may
// need: the most attempts of the policy and its error rules, plus one for
// an attempt lost to an ack timeout (MaxDeliver), plus max_snoozes.
func deliveries(pol *policy.Policy) int {
	s := pol.Spec()
	m := s.MaxAttempts
	for _, r := range s.ErrorRules {
		m = max(m, r.MaxAttempts)
	}
	md := MaxDeliver(m)
	if md < 0 || s.MaxSnoozes > maxInt-md {
		return -1
	}
	return md + s.MaxSnoozes
}

// maxAttemptsOf is the most attempts the policy or one of its error rules
// allows (0 counting as 1).
func maxAttemptsOf(pol *policy.Policy) int {
	s := pol.Spec()
	m := max(s.MaxAttempts, 1)
	for _, r := range s.ErrorRules {
		m = max(m, r.MaxAttempts)
	}
	return m
}

const maxInt = int(^uint(0) >> 1)
