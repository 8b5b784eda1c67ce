package errmatch_test

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

func TestWithRetryAfterKeepsTypeAndCode(t *testing.T) {
	base := errmatch.Wrap(io.EOF, "rate_limit.exceeded", errmatch.CodeRetry)
	err := fmt.Errorf("calling the API: %w", errmatch.WithRetryAfter(base, 30*time.Second))
	typ, code, ok := errmatch.Classify(err)
	if !ok || typ != "rate_limit.exceeded" || code != errmatch.CodeRetry {
		t.Errorf("Classify = %q, %q, %v; want the wrapped type and code", typ, code, ok)
	}
	if got := errmatch.RequestOf(err); got != (errmatch.Request{Kind: errmatch.RetryAfter, Delay: 30 * time.Second}) {
		t.Errorf("RequestOf = %+v, want retry_after 30s", got)
	}
	if !errors.Is(err, io.EOF) {
		t.Error("the cause is lost")
	}
	if err.Error() != "calling the API: rate_limit.exceeded: rate_limit.exceeded: EOF" {
		t.Errorf("message %q", err.Error())
	}
}

func TestWithRetryAfterOfNilIsNil(t *testing.T) {
	if err := errmatch.WithRetryAfter(nil, time.Second); err != nil {
		t.Errorf("WithRetryAfter(nil) = %v, want nil", err)
	}
}

func TestWithRetryAfterOnAPlainErrorIsUntyped(t *testing.T) {
	err := errmatch.WithRetryAfter(io.ErrUnexpectedEOF, 2*time.Second)
	typ, code, ok := errmatch.Classify(err)
	if !ok || typ != "" || code != errmatch.CodeRetry {
		t.Errorf("Classify = %q, %q, %v", typ, code, ok)
	}
	if r := errmatch.RequestOf(err); r.Kind != errmatch.RetryAfter || r.Delay != 2*time.Second {
		t.Errorf("RequestOf = %+v", r)
	}
}

func TestSnoozedIsASnoozeRequest(t *testing.T) {
	err := fmt.Errorf("not ready: %w", errmatch.Snoozed(5*time.Minute))
	if r := errmatch.RequestOf(err); r != (errmatch.Request{Kind: errmatch.Snooze, Delay: 5 * time.Minute}) {
		t.Errorf("RequestOf = %+v", r)
	}
	if got := errmatch.Snoozed(time.Second).Error(); got != "errmatch: snooze 1s" {
		t.Errorf("message %q", got)
	}
}

func TestRequestOfWithoutRequest(t *testing.T) {
	for _, err := range []error{nil, io.EOF, errmatch.Wrap(io.EOF, "x", "")} {
		if r := errmatch.RequestOf(err); r != (errmatch.Request{}) {
			t.Errorf("RequestOf(%v) = %+v, want none", err, r)
		}
	}
}

func TestRequestKindString(t *testing.T) {
	for k, want := range map[errmatch.RequestKind]string{errmatch.NoRequest: "none", errmatch.RetryAfter: "retry_after", errmatch.Snooze: "snooze", 7: "RequestKind(7)"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), want)
		}
	}
}
