package executor

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retrykit/retrykit/errmatch"
)

// Limits on what callers hand the executor (RK-46), so that one hostile
// request costs bounded time and memory. Every check is linear in the input
// and runs before the executor's lock is taken; a value over a limit is
// refused with an error wrapping [ErrInvalidJob] that names the field and
// the limit, except [Failure.Message], which is cut (a failure is never
// refused for its message).
const (
	// MaxIDLen is the longest JobSpec.ID, in bytes. An ID must be valid
	// UTF-8; empty means the executor assigns one.
	MaxIDLen = 255
	// MaxQueueLen is the longest JobSpec.Queue, in bytes. A queue name must
	// be valid UTF-8; empty means DefaultQueue.
	MaxQueueLen = 255
	// MaxTypeLen is the longest JobSpec.Type, in bytes. A type is required
	// and must be valid UTF-8.
	MaxTypeLen = 255
	// MaxArgsSize is the largest JobSpec.Args, in bytes. Non-empty Args
	// must be one valid JSON value (encoding/json.Valid).
	MaxArgsSize = 1 << 20
	// MaxFailureTypeLen is the longest Failure.Type, in bytes: the longest
	// pattern a policy's non_retryable_errors may hold
	// (errmatch.MaxPatternLen). The type must be valid UTF-8, as policy
	// patterns must; it may be empty.
	MaxFailureTypeLen = errmatch.MaxPatternLen
	// MaxMessageLen is the longest Failure.Message kept, in bytes. A longer
	// message is cut at a UTF-8 boundary at or below MaxMessageLen-len("…")
	// and "…" appended; each run of invalid UTF-8 bytes is replaced by one
	// U+FFFD. The failure itself is recorded as usual.
	MaxMessageLen = 4096
	// MaxDetailsSize is the largest Failure.Details, in bytes. Non-empty
	// Details must be one valid JSON value.
	MaxDetailsSize = 64 << 10
)

// clipLen is the longest caller string echoed whole in an error message.
const clipLen = 64

// clip returns s for an error message: unchanged when at most clipLen bytes,
// else its first bytes (cut at a UTF-8 boundary), "…" and the full length.
// Callers quote the result with %q, which escapes invalid UTF-8.
func clip(s string) string {
	if len(s) <= clipLen {
		return s
	}
	n := clipLen - 16
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// checkName checks a caller string against a byte limit and UTF-8 validity.
// It returns the reason, or "" when s is acceptable. constName names the
// limit's constant in the reason.
func checkName(s string, limit int, constName string) string {
	if len(s) > limit {
		return "at most " + strconv.Itoa(limit) + " bytes (" + constName + "), got " + strconv.Itoa(len(s))
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	return ""
}

// checkJSON checks optional raw JSON against a size limit and validity.
func checkJSON(b []byte, limit int, constName string) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > limit {
		return "at most " + strconv.Itoa(limit) + " bytes (" + constName + "), got " + strconv.Itoa(len(b))
	}
	if !json.Valid(b) {
		return "not valid JSON"
	}
	return ""
}

// checkSpec applies the RK-46 limits to spec's caller data.
func checkSpec(spec *JobSpec) error {
	field, reason := "", ""
	switch {
	case spec.Type == "":
		field, reason = "type", "is empty"
	default:
		if reason = checkName(spec.ID, MaxIDLen, "executor.MaxIDLen"); reason != "" {
			field = "id"
		} else if reason = checkName(spec.Type, MaxTypeLen, "executor.MaxTypeLen"); reason != "" {
			field = "type"
		} else if reason = checkName(spec.Queue, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
			field = "queue"
		} else if reason = checkJSON(spec.Args, MaxArgsSize, "executor.MaxArgsSize"); reason != "" {
			field = "args"
		} else if spec.Priority < MinPriority || spec.Priority > MaxPriority {
			field, reason = "priority", fmt.Sprintf("must be from %d to %d (an int32), got %d", MinPriority, MaxPriority, spec.Priority)
		}
	}
	if reason == "" {
		return nil
	}
	return fmt.Errorf("%w: enqueue %q: %s: %s", ErrInvalidJob, clip(spec.ID), field, reason)
}

// checkFailure applies the RK-46 limits to f's type and details.
func checkFailure(f *Failure) (field, reason string) {
	if reason = checkName(f.Type, MaxFailureTypeLen, "executor.MaxFailureTypeLen"); reason != "" {
		return "type", reason
	}
	if reason = checkJSON(f.Details, MaxDetailsSize, "executor.MaxDetailsSize"); reason != "" {
		return "details", reason
	}
	switch r := f.Request; {
	case r.Kind > errmatch.Snooze:
		return "request", "unknown request kind " + r.Kind.String()
	case r.Kind != errmatch.NoRequest && r.Delay < 0:
		return r.Kind.String(), "must not be negative, got " + r.Delay.String()
	}
	return "", ""
}

// boundMessage returns m as at most MaxMessageLen bytes of valid UTF-8:
// each run of invalid bytes becomes one U+FFFD, and a longer text is cut at
// a rune boundary and ends in "…". It reads at most MaxMessageLen bytes of
// m, and a cut message is a fresh string, so the caller's larger one is not
// retained. Replacing invalid bytes may shorten the text (a run of them
// becomes 3 bytes) or lengthen it (a lone invalid byte becomes 3 bytes), so
// the cut is made on the repaired text, wherever its length ends up.
func boundMessage(m string) string {
	if len(m) <= MaxMessageLen && utf8.ValidString(m) {
		return m
	}
	cut := len(m) > MaxMessageLen
	s := m
	if cut {
		n := MaxMessageLen
		for n > 0 && n > MaxMessageLen-utf8.UTFMax && !utf8.RuneStart(m[n]) {
			n-- // do not split a valid rune that straddles the limit
		}
		s = m[:n]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if !cut && len(s) <= MaxMessageLen {
		return s
	}
	const ell = "…"
	n := MaxMessageLen - len(ell)
	if len(s) <= n {
		return s + ell
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ell
}
