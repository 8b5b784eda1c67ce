package errmatch

// Code is a handler response code (OJS retry spec section 7). It tells the
// runtime what to do with a failed job, overriding the retry policy when it
// is anything but [CodeRetry].
//
// The zero value "" means "no code given" and is treated as [CodeRetry] by
// [ParseCode] and [Classify]. A Code is a plain string and safe for
// concurrent use; values other than the four constants are invalid, and
// only ParseCode checks that.
type Code string

// The four handler codes, spelled exactly as on the wire.
const (
	// CodeRetry applies the normal retry policy: non-retryable matching,
	// remaining attempts, backoff. It is the default.
	CodeRetry Code = "RETRY"
	// CodeDiscard discards the job at once, without dead-lettering it.
	CodeDiscard Code = "DISCARD"
	// CodeDeadLetter moves the job to the dead letter queue at once.
	CodeDeadLetter Code = "DEAD_LETTER"
	// CodeFail is a recognised permanent failure; the job is discarded at once,
	// like CodeDiscard, but the intent is recorded differently.
	CodeFail Code = "FAIL"
)

// ParseCode returns the Code named by s.
//
// The empty string yields [CodeRetry] (the spec's default when a handler gives no
// code). Otherwise s must be exactly "RETRY", "DISCARD", "DEAD_LETTER" or
// "FAIL": the match is case-sensitive and no spaces are trimmed. Any other
// string yields an error that matches [ErrUnknownCode] with [errors.Is], for
// example
//
//	errmatch: unknown handler code "retry" (want RETRY, DISCARD, DEAD_LETTER or FAIL)
func ParseCode(s string) (Code, error) {
	switch Code(s) {
	case "":
		return CodeRetry, nil
	case CodeRetry, CodeDiscard, CodeDeadLetter, CodeFail:
		return Code(s), nil
	}
	return "", &unknownCodeError{code: s}
}
