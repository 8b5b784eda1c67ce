package errmatch

// Code is a handler response code (OJS retry spec section 7). It tells the
// runtime what to do with a failed job, overriding the retry policy when it
// is anything but [Retry].
//
// The zero value "" means "no code given" and is treated as [Retry] by
// [ParseCode] and [Classify]. A Code is a plain string and safe for
// concurrent use; values other than the four constants are invalid, and
// only ParseCode checks that.
type Code string

// The four handler codes, spelled exactly as on the wire.
const (
	// Retry applies the normal retry policy: non-retryable matching,
	// remaining attempts, backoff. It is the default.
	Retry Code = "RETRY"
	// Discard discards the job at once, without dead-lettering it.
	Discard Code = "DISCARD"
	// DeadLetter moves the job to the dead letter queue at once.
	DeadLetter Code = "DEAD_LETTER"
	// Fail is a recognised permanent failure; the job is discarded at once,
	// like Discard, but the intent is recorded differently.
	Fail Code = "FAIL"
)

// ParseCode returns the Code named by s.
//
// The empty string yields [Retry] (the spec's default when a handler gives no
// code). Otherwise s must be exactly "RETRY", "DISCARD", "DEAD_LETTER" or
// "FAIL": the match is case-sensitive and no spaces are trimmed. Any other
// string yields an error that matches [ErrUnknownCode] with [errors.Is], for
// example
//
//	errmatch: unknown handler code "retry" (want RETRY, DISCARD, DEAD_LETTER or FAIL)
func ParseCode(s string) (Code, error) {
	switch Code(s) {
	case "":
		return Retry, nil
	case Retry, Discard, DeadLetter, Fail:
		return Code(s), nil
	}
	return "", &unknownCodeError{code: s}
}
