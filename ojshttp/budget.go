package ojshttp

import (
	"context"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/retrykit/retrykit/executor"
)

// Answers and request bodies are bounded in bytes, one by one and all
// together (RK-162):
//
//  1. every answer is cut to about maxAnswer bytes: FETCH claims only the
//     jobs whose rendering fits (always at least one), and the pages of
//     the dead letter list and the event log end early, with has_more;
//  2. the bytes being read from request bodies or rendered into answers
//     at one time are bounded server-wide (WithMaxInflightBytes): a
//     request waits for room, in arrival order, until its client goes
//     away. A request asks for its body's limit (or its Content-Length)
//     before reading, gives it back, and asks for its answer's estimate
//     before rendering, so that it never holds one while it waits for the
//     other.

// maxAnswer is the size an answer is cut to; a single job is always
// delivered whole (at most about 3 MiB: args, meta, extension fields,
// tags and the error history at their limits).
const maxAnswer = 8 << 20

// DefaultMaxInflightBytes is the default bound of the bytes being read
// from request bodies or rendered into answers at once (WithMaxInflightBytes).
const DefaultMaxInflightBytes = 64 << 20

// WithMaxInflightBytes bounds the bytes of request bodies being read and
// answers being rendered at once, over all connections (default
// [DefaultMaxInflightBytes]); requests beyond it wait. A value below 16 MiB
// is raised to it, so that a batch body and an answer of maxAnswer bytes
// always fit. Values ≤ 0 are ignored.
func WithMaxInflightBytes(n int64) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.inflight = max(n, 16<<20)
		}
	}
}

// byteBudget is a weighted semaphore of bytes with FIFO waiters.
type byteBudget struct {
	mu      sync.Mutex
	size    int64
	cur     int64
	waiters []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(size int64) *byteBudget { return &byteBudget{size: size} }

// acquire takes n bytes (at most the whole budget), waiting until they are
// free or ctx ends. It returns the bytes taken, for release.
func (b *byteBudget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 1), b.size)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.cur+n <= b.size {
		b.cur += n
		b.mu.Unlock()
		return n, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.mu.Unlock()
			b.release(n)
		default:
			for i, x := range b.waiters {
				if x == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grantLocked()
			b.mu.Unlock()
		}
		return 0, ctx.Err()
	}
}

// release gives back n bytes taken by acquire.
func (b *byteBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.cur -= n
	b.grantLocked()
	b.mu.Unlock()
}

func (b *byteBudget) grantLocked() {
	for len(b.waiters) > 0 && b.cur+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.cur += w.n
		close(w.ready)
	}
}

// jsonLen is the length of s encoded as a JSON string without HTML
// escaping: quotes, backslashes and control characters are escaped,
// U+2028 and U+2029 too, and each invalid byte becomes \ufffd.
func jsonLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += int64(size)
		}
		i += size
	}
	return n
}

// viewOverhead bounds what a job view holds beside its caller data: ids,
// times, state, the retry policy and the field names.
const viewOverhead = 2048

// errorEstimate bounds the rendering of one error entry.
func errorEstimate(e executor.ErrorEntry) int64 {
	return 160 + jsonLen(e.Type) + jsonLen(e.Message) + int64(len(e.Details)) + int64(len(e.Code))
}

// jobEstimate bounds the size of the view of j with x (view): the caller
// data, the error history (the last entry twice, as errors and error) and
// a fixed overhead.
func jobEstimate(j executor.Job, x *extra) int64 {
	n := int64(viewOverhead + len(j.Args))
	if x != nil {
		n += int64(len(x.meta) + len(x.result))
		for k, v := range x.unknown {
			n += jsonLen(k) + int64(len(v)) + 1
		}
		for _, t := range x.tags {
			n += jsonLen(t) + 1
		}
		if x.unique != nil {
			n += int64(len(x.unique.raw))
		}
	}
	for _, e := range j.Errors {
		n += errorEstimate(e)
	}
	if k := len(j.Errors); k > 0 {
		n += errorEstimate(j.Errors[k-1])
	}
	return n
}

// estimate bounds the encoded size of an answer value built by the
// handlers: maps, slices, raw JSON, strings and scalars.
func estimate(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return jsonLen(v)
	case json.RawMessage:
		return int64(len(v))
	case []byte:
		return int64(len(v))*4/3 + 4
	case map[string]any:
		n := int64(2)
		for k, x := range v {
			n += jsonLen(k) + 1 + estimate(x) + 1
		}
		return n
	case []map[string]any:
		n := int64(2)
		for _, x := range v {
			n += estimate(x) + 1
		}
		return n
	case []any:
		n := int64(2)
		for _, x := range v {
			n += estimate(x) + 1
		}
		return n
	case []json.RawMessage:
		n := int64(2)
		for _, x := range v {
			n += int64(len(x)) + 1
		}
		return n
	case []string:
		n := int64(2)
		for _, x := range v {
			n += jsonLen(x) + 1
		}
		return n
	case map[string]int:
		return int64(len(v)) * 48
	case map[string]bool:
		return int64(len(v)) * 48
	}
	return 32 // numbers, booleans, times already formatted
}

// errorEntryOverhead is what one error entry costs beyond its strings:
// the executor's entry and the server's count of it.
const errorEntryOverhead = 128

// failureCost is what recording f adds to a job's error history, counted
// against WithMaxBytes: type, message (as the executor keeps it, at most
// executor.MaxMessageLen bytes), details and a fixed overhead.
func failureCost(f executor.Failure) int64 {
	return errorEntryOverhead + int64(len(f.Type)+min(len(f.Message), executor.MaxMessageLen+8)+len(f.Details)+len(f.Code))
}
