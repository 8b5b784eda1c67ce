package errmatch_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

// selfUnwrap's Unwrap returns its own receiver: errors.As loops on it.
type selfUnwrap struct{}

func (selfUnwrap) Error() string   { return "self" }
func (s selfUnwrap) Unwrap() error { return s }

// pingPong is a cycle of two errors.
type pingPong struct {
	name  string
	other *pingPong
}

func (p *pingPong) Error() string { return p.name }
func (p *pingPong) Unwrap() error { return p.other }

// joinSelf's Unwrap() []error lists itself twice: the tree doubles at
// every level.
type joinSelf struct{}

func (joinSelf) Error() string     { return "join self" }
func (j joinSelf) Unwrap() []error { return []error{j, j} }

// chain is n plain wrappers around inner.
func chain(n int, inner error) error {
	for range n {
		inner = fmt.Errorf("w: %w", inner)
	}
	return inner
}

// TestClassifyCycles: an error tree with a cycle is
// classified in bounded time instead of looping forever.
func TestClassifyCycles(t *testing.T) {
	a := &pingPong{name: "a"}
	a.other = &pingPong{name: "b", other: a}
	typed := errmatch.Wrap(errors.New("x"), "a.b", errmatch.CodeDiscard)
	for _, tc := range []struct {
		name   string
		err    error
		wantOK bool
	}{
		{"Unwrap returns itself", selfUnwrap{}, false},
		{"wrapped self", fmt.Errorf("ctx: %w", selfUnwrap{}), false},
		{"two-error cycle", a, false},
		{"Unwrap []error repeats itself", joinSelf{}, false},
		{"joined with a cycle first", errors.Join(selfUnwrap{}, typed), true},
		{"joined with a doubling tree first", errors.Join(joinSelf{}, typed), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan bool, 1)
			go func() {
				_, _, ok := errmatch.Classify(tc.err)
				done <- ok
			}()
			select {
			case ok := <-done:
				if ok != tc.wantOK {
					t.Errorf("ok = %v, want %v", ok, tc.wantOK)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Classify did not return within 10s")
			}
		})
	}
}

// TestFindBounds checks the documented limits: an *Error up to
// MaxUnwrapDepth steps below the root is found, one deeper is not; a
// doubling tree stops after MaxUnwrapErrors errors.
func TestFindBounds(t *testing.T) {
	typed := &errmatch.Error{Type: "deep.one"}
	if got := errmatch.Find(chain(errmatch.MaxUnwrapDepth, typed)); got != typed {
		t.Errorf("at depth MaxUnwrapDepth: Find = %v, want the *Error", got)
	}
	if got := errmatch.Find(chain(errmatch.MaxUnwrapDepth+1, typed)); got != nil {
		t.Errorf("at depth MaxUnwrapDepth+1: Find = %v, want nil", got)
	}
	// A tree of visits counted through Unwrap() []error.
	var visits int
	var tree func(d int) error
	tree = func(d int) error {
		if d == 0 {
			return errors.New("leaf")
		}
		return counting{&visits, []error{tree(d - 1), tree(d - 1)}}
	}
	visits = 0
	root := tree(12) // 8191 errors
	if errmatch.Find(root) != nil {
		t.Fatal("found an *Error in a tree without one")
	}
	if visits > errmatch.MaxUnwrapErrors {
		t.Errorf("%d errors unwrapped, want at most MaxUnwrapErrors = %d", visits, errmatch.MaxUnwrapErrors)
	}
}

// counting is a joined error that counts how often it is unwrapped.
type counting struct {
	n    *int
	errs []error
}

func (c counting) Error() string   { return "counting" }
func (c counting) Unwrap() []error { *c.n++; return c.errs }

// asTyped answers errors.As for *errmatch.Error through an As method.
type asTyped struct{}

func (asTyped) Error() string { return "as" }
func (asTyped) As(target any) bool {
	if p, ok := target.(**errmatch.Error); ok {
		*p = &errmatch.Error{Type: "via.as", Code: errmatch.CodeFail}
		return true
	}
	return false
}

// TestFindAgreesWithErrorsAs: on acyclic trees Find finds what errors.As
// finds, the As method included.
func TestFindAgreesWithErrorsAs(t *testing.T) {
	e1 := &errmatch.Error{Type: "one"}
	e2 := &errmatch.Error{Type: "two", Err: e1}
	for _, err := range []error{
		nil, errors.New("plain"), e1, e2, fmt.Errorf("a: %w", e2),
		errors.Join(errors.New("x"), fmt.Errorf("b: %w", e1), e2),
		fmt.Errorf("%w and %w", errors.New("x"), e2),
		asTyped{}, fmt.Errorf("c: %w", asTyped{}),
		(*errmatch.Error)(nil),
	} {
		var want *errmatch.Error
		errors.As(err, &want)
		got := errmatch.Find(err)
		if (got == nil) != (want == nil) || got != nil && (got.Type != want.Type || got.Code != want.Code) {
			t.Errorf("%v: Find = %+v, errors.As = %+v", err, got, want)
		}
	}
}
