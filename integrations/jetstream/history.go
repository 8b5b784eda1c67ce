package jetstreamretry

import (
	"encoding/json"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream keeps no errors with a message, so the plugin remembers the
// failed attempts it saw itself, for the dead-letter copy. The memory is
// bounded: at most historyMessages messages and historyErrors errors each
// (the last ones), messages cut to historyErrorLen bytes. A message worked
// by several processes has in its history only the attempts the
// dead-lettering process saw (docs/decisions.md RK-151).
const (
	historyMessages = 10000
	historyErrors   = 16
	historyErrorLen = 512
)

// Attempt is one failed attempt in a dead-letter history.
type Attempt struct {
	Attempt int    `json:"attempt"`
	Type    string `json:"type,omitempty"`
	Error   string `json:"error"`
}

// errorHistory is the failed attempts of one message, oldest first.
type errorHistory []Attempt

// json returns h as a JSON array.
func (h errorHistory) json() string {
	b, _ := json.Marshal(h) // plain strings and ints: never fails
	return string(b)
}

// historyKey names a message: its stream, stream sequence and the time the
// stream stored it (a stream deleted and created again reuses sequences,
// never the times).
type historyKey struct {
	stream string
	seq    uint64
	stored int64
}

// keyOf names the message of md.
func keyOf(md *jetstream.MsgMetadata) historyKey {
	return historyKey{md.Stream, md.Sequence.Stream, md.Timestamp.UnixNano()}
}

// history is the bounded memory of failed attempts; the zero value is
// empty and safe for concurrent use.
type history struct {
	mu sync.Mutex
	m  map[historyKey]errorHistory
}

// add records a failed attempt of message k.
func (h *history) add(k historyKey, attempt int, typ string, err error) {
	msg := ""
	if err != nil {
		msg = cut(err.Error(), historyErrorLen)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[historyKey]errorHistory)
	}
	prev, ok := h.m[k]
	if !ok && len(h.m) >= historyMessages {
		return // full: this message's history is not kept
	}
	if len(prev) >= historyErrors {
		prev = append(prev[:0:0], prev[1:]...)
	}
	h.m[k] = append(prev, Attempt{Attempt: attempt, Type: cut(typ, historyErrorLen), Error: msg})
}

// take returns and forgets the history of message k.
func (h *history) take(k historyKey) errorHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.m[k]
	delete(h.m, k)
	return v
}

// peek returns a copy of the history of message k.
func (h *history) peek(k historyKey) errorHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append(errorHistory(nil), h.m[k]...)
}

// settledLimit bounds the memory of settled messages: the last
// settledLimit messages this plugin acked or terminated.
const settledLimit = 65536

// settledSet remembers the last settledLimit messages settled, and how,
// so that a redelivery of one (its ack or term lost, as when a server node
// dies) is settled again instead of run again. The zero value is empty and
// safe for concurrent use.
type settledSet struct {
	mu   sync.Mutex
	m    map[historyKey]bool // true: acked, false: terminated
	ring []historyKey
	next int
}

// put records that message k was acked (or terminated).
func (s *settledSet) put(k historyKey, acked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[historyKey]bool)
	}
	if _, ok := s.m[k]; ok {
		s.m[k] = acked
		return
	}
	if len(s.ring) < settledLimit {
		s.ring = append(s.ring, k)
	} else {
		delete(s.m, s.ring[s.next])
		s.ring[s.next] = k
		s.next = (s.next + 1) % settledLimit
	}
	s.m[k] = acked
}

// get reports whether message k was settled, and whether it was acked.
func (s *settledSet) get(k historyKey) (acked, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	acked, ok = s.m[k]
	return acked, ok
}
