package ojshttp

import (
	"slices"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// Error codes as sent (RK-177). A FAIL's error.code is either one of the
// handler codes of ojs-retry §7 (RETRY, DISCARD, DEAD_LETTER, FAIL), which
// the executor applies, or a code of the binding's catalogue such as
// "handler_error" (the official SDKs send that one), which the executor
// cannot hold: it records the handler code RETRY. The server keeps the
// code each FAIL sent beside the executor's entry, and a job's error and
// errors show that code, so that a client reads back what it sent. An
// entry without one (a FAIL that sent no code, a visibility timeout)
// shows the executor's handler code.

// maxSentCodes bounds the codes kept per job: more than any error history
// the executor keeps (executor.WithErrorHistory caps it lower).
const maxSentCodes = 64

// sentCode is the code one FAIL sent, keyed by the attempt that failed and
// the time the executor recorded the failure (a manual retry reuses
// attempt numbers, never times).
type sentCode struct {
	attempt int
	at      time.Time
	code    string
}

// withSent returns sent plus c, keeping the newest maxSentCodes; sent is
// never modified (views may be reading it).
func withSent(sent []sentCode, c sentCode) []sentCode {
	out := append(slices.Clip(sent), c)
	if len(out) > maxSentCodes {
		out = slices.Clone(out[len(out)-maxSentCodes:])
	}
	return out
}

// wireCode is the code a job's error entry shows: the one its FAIL sent,
// else the executor's handler code.
func wireCode(e executor.ErrorEntry, sent []sentCode) string {
	for i := len(sent) - 1; i >= 0; i-- {
		if c := sent[i]; c.attempt == e.Attempt && c.at.Equal(e.Time) {
			return c.code
		}
	}
	return string(e.Code)
}
