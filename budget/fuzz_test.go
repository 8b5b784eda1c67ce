package budget_test

import (
	"errors"
	"testing"

	"github.com/retrykit/retrykit/budget"
)

// Parse never panics, refuses with ErrInvalidBudget, and what it accepts
// writes back to an equal budget.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"timeout": 300, "total_timeout": 86400}`, `{"grace_period": 0}`, `{"timeout": 3e0}`,
		`{"timeout": 1, "timeout": 1}`, `{"total_timeout": 1e400}`, `{"enqueue_ttl": -0.0}`, `{"x": []}`, `[{}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := budget.Parse(data)
		if err != nil {
			if !errors.Is(err, budget.ErrInvalidBudget) {
				t.Fatalf("error %v does not match ErrInvalidBudget", err)
			}
			return
		}
		out, _ := b.MarshalJSON()
		again, err := budget.Parse(out)
		if err != nil || again.Spec() != b.Spec() {
			t.Fatalf("%s → %s → %v", data, out, err)
		}
		if _, err := budget.New(b.Spec()); err != nil {
			t.Fatalf("Parse accepted what New refuses: %v", err)
		}
	})
}
