package errmatch

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestWrapNil(t *testing.T) {
	if err := Wrap(nil, "auth.x", CodeDiscard); err != nil {
		t.Errorf("Wrap(nil) = %v, want nil", err)
	}
}

func TestWrapMessageAndUnwrap(t *testing.T) {
	cause := errors.New("card 4242 declined")
	err := Wrap(cause, "external.stripe.card_declined", CodeDiscard)
	if got, want := err.Error(), "external.stripe.card_declined: card 4242 declined"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Error("errors.Is(err, cause) = false")
	}
	if errors.Unwrap(err) != cause {
		t.Error("Unwrap does not return the cause")
	}
	var e *Error
	if !errors.As(err, &e) || e.Type != "external.stripe.card_declined" || e.Code != CodeDiscard || e.Err != cause {
		t.Errorf("errors.As found %+v", e)
	}
	// Is reaches sentinels further down the cause chain.
	deep := Wrap(fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), "network.read", "")
	if !errors.Is(deep, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not see through *Error and a wrapped cause")
	}
}

func TestErrorMessageEdgeCases(t *testing.T) {
	cause := errors.New("boom")
	cases := []struct {
		e    *Error
		want string
	}{
		{&Error{Type: "a.b", Err: cause}, "a.b: boom"},
		{&Error{Err: cause}, "boom"},
		{&Error{Type: "a.b"}, "a.b"},
		{&Error{}, "errmatch: untyped error"},
		{nil, "errmatch: <nil Error>"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v.Error() = %q, want %q", c.e, got, c.want)
		}
	}
	var nilE *Error
	if nilE.Unwrap() != nil {
		t.Error("nil *Error Unwrap() != nil")
	}
}

func TestClassify(t *testing.T) {
	cause := errors.New("boom")
	cases := []struct {
		name     string
		err      error
		wantType string
		wantCode Code
		wantOK   bool
	}{
		{"nil", nil, "", CodeRetry, false},
		{"plain", cause, "", CodeRetry, false},
		{"direct", Wrap(cause, "auth.token_expired", CodeDeadLetter), "auth.token_expired", CodeDeadLetter, true},
		{"empty code is RETRY", Wrap(cause, "auth.x", ""), "auth.x", CodeRetry, true},
		{"unknown code kept", Wrap(cause, "auth.x", "retry"), "auth.x", Code("retry"), true},
		{"through fmt.Errorf", fmt.Errorf("job 7: %w", Wrap(cause, "resource.not_found", CodeFail)), "resource.not_found", CodeFail, true},
		{"outermost wins", Wrap(Wrap(cause, "inner.type", CodeDiscard), "outer.type", CodeRetry), "outer.type", CodeRetry, true},
		{"inside errors.Join", errors.Join(cause, Wrap(cause, "joined.type", CodeDiscard)), "joined.type", CodeDiscard, true},
		{"fmt.Errorf with two %w", fmt.Errorf("%w; %w", cause, Wrap(cause, "second.type", CodeDeadLetter)), "second.type", CodeDeadLetter, true},
		{"Join inside %w inside Join", errors.Join(cause, fmt.Errorf("retry 3: %w", errors.Join(cause, Wrap(cause, "deep.type", CodeFail)))), "deep.type", CodeFail, true},
		{"struct value", &Error{Type: "x.y", Code: CodeFail}, "x.y", CodeFail, true},
		{"typed nil", (*Error)(nil), "", CodeRetry, false},
	}
	for _, c := range cases {
		typ, code, ok := Classify(c.err)
		if typ != c.wantType || code != c.wantCode || ok != c.wantOK {
			t.Errorf("%s: Classify = %q, %q, %v; want %q, %q, %v", c.name, typ, code, ok, c.wantType, c.wantCode, c.wantOK)
		}
		if got := Type(c.err); got != c.wantType {
			t.Errorf("%s: Type = %q, want %q", c.name, got, c.wantType)
		}
	}
}

func TestClassifyThenMatch(t *testing.T) {
	m, err := Compile([]string{"auth.*"})
	if err != nil {
		t.Fatal(err)
	}
	herr := fmt.Errorf("handler: %w", Wrap(errors.New("expired"), "auth.token_expired", ""))
	typ, code, ok := Classify(herr)
	if !ok || code != CodeRetry || !m.Match(typ) {
		t.Errorf("Classify+Match = %q %q %v match=%v", typ, code, ok, m.Match(typ))
	}
}
