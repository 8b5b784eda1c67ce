package errmatch_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

func ExampleCompile() {
	// The example list of the OJS retry spec, section 6.2.
	m, err := errmatch.Compile([]string{"validation.payload_invalid", "auth.*"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range []string{
		"validation.payload_invalid",
		"validation.schema_error",
		"auth.token_expired",
		"auth",
		"authx",
		"external.auth.failure",
	} {
		fmt.Printf("%-28s %v\n", t, m.Match(t))
	}
	// Output:
	// validation.payload_invalid   true
	// validation.schema_error      false
	// auth.token_expired           true
	// auth                         false
	// authx                        false
	// external.auth.failure        false
}

func ExampleCompile_errors() {
	_, err := errmatch.Compile([]string{"auth.*", "", ".*"})
	fmt.Println(err)
	fmt.Println(errors.Is(err, errmatch.ErrEmptyPattern))
	var pe *errmatch.PatternError
	if errors.As(err, &pe) {
		fmt.Println("first bad entry at index", pe.Index)
	}
	// Output:
	// errmatch: pattern 1 "": must not be empty
	// errmatch: pattern 2 ".*": nothing before ".*": a prefix pattern needs a namespace, as in "auth.*"
	// true
	// first bad entry at index 1
}

func ExampleMatcher_Match() {
	// Only a trailing ".*" is special; "auth*" is an ordinary string.
	m, _ := errmatch.Compile([]string{"external.stripe.*", "auth*"})
	fmt.Println(m.Match("external.stripe.card_declined"))
	fmt.Println(m.Match("external.stripe.api.timeout"))
	fmt.Println(m.Match("external.stripes.x"))
	fmt.Println(m.Match("authx"))
	fmt.Println(m.Match("auth*"))
	// Output:
	// true
	// true
	// false
	// false
	// true
}

func ExampleWrap() {
	cause := errors.New("card ending in 4242 was declined")
	err := errmatch.Wrap(cause, "external.stripe.card_declined", errmatch.CodeDiscard)
	fmt.Println(err)
	fmt.Println(errors.Is(err, cause))
	// Output:
	// external.stripe.card_declined: card ending in 4242 was declined
	// true
}

func ExampleClassify() {
	nonRetryable, _ := errmatch.Compile([]string{"auth.*"})

	handlerErr := fmt.Errorf("sync contact 17: %w",
		errmatch.Wrap(errors.New("token expired"), "auth.token_expired", ""))

	typ, code, ok := errmatch.Classify(handlerErr)
	fmt.Println(typ, code, ok, nonRetryable.Match(typ))

	typ, code, ok = errmatch.Classify(errors.New("plain failure"))
	fmt.Printf("%q %s %v\n", typ, code, ok)
	// Output:
	// auth.token_expired RETRY true true
	// "" RETRY false
}

func ExampleParseCode() {
	for _, s := range []string{"", "DEAD_LETTER", "retry"} {
		code, err := errmatch.ParseCode(s)
		if err != nil {
			fmt.Println(err, errors.Is(err, errmatch.ErrUnknownCode))
			continue
		}
		fmt.Printf("%q -> %s\n", s, code)
	}
	// Output:
	// "" -> RETRY
	// "DEAD_LETTER" -> DEAD_LETTER
	// errmatch: unknown handler code "retry" (want RETRY, DISCARD, DEAD_LETTER or FAIL) true
}

// A queue compiles a policy's non_retryable_errors once; its handlers tag
// their errors with Wrap; the queue reads the type back with Classify,
// through any wrapping, and matches it.
func Example() {
	m, err := errmatch.Compile([]string{"validation.*", "payment.card_stolen"})
	if err != nil {
		fmt.Println(err)
		return
	}
	handlerErrors := []error{
		fmt.Errorf("charge order 7: %w", errmatch.Wrap(errors.New("card reported stolen"), "payment.card_stolen", "")),
		errors.Join(errors.New("cleanup failed"), errmatch.Wrap(errors.New("missing field"), "validation.schema", "")),
		errmatch.Wrap(errors.New("502 from gateway"), "external.gateway", errmatch.CodeRetry),
		errors.New("untyped failure"),
	}
	for _, err := range handlerErrors {
		typ, code, _ := errmatch.Classify(err)
		fmt.Printf("%-20q code %-5s non-retryable: %v\n", typ, code, m.Match(typ))
	}
	// Output:
	// "payment.card_stolen" code RETRY non-retryable: true
	// "validation.schema"  code RETRY non-retryable: true
	// "external.gateway"   code RETRY non-retryable: false
	// ""                   code RETRY non-retryable: false
}

// Find returns the *Error itself, wherever it is in the tree; its cause
// holds the message without the type in front.
func ExampleFind() {
	err := fmt.Errorf("charge invoice 7: %w",
		errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter))
	if e := errmatch.Find(err); e != nil {
		fmt.Println(e.Type, e.Code, e.Err)
	}
	fmt.Println(errmatch.Find(errors.New("plain")) == nil)
	// Output:
	// payment.declined DEAD_LETTER card declined
	// true
}

// A handler that got HTTP 429 with "Retry-After: 30" asks for that delay;
// one whose input is not ready yet snoozes without spending an attempt.
// Package policy bounds both (docs/extensions.md).
func ExampleWithRetryAfter() {
	err := errmatch.WithRetryAfter(errmatch.Wrap(errors.New("429 Too Many Requests"), "rate_limit.exceeded", ""), 30*time.Second)
	typ, _, _ := errmatch.Classify(err)
	fmt.Println(typ, errmatch.RequestOf(err))

	err = fmt.Errorf("report not ready: %w", errmatch.Snoozed(5*time.Minute))
	fmt.Println(errmatch.RequestOf(err))
	// Output:
	// rate_limit.exceeded {retry_after 30s}
	// {snooze 5m0s}
}
