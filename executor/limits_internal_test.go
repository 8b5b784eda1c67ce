package executor

import (
	"strings"
	"testing"
)

// TestPolicyCacheSkipsLongTexts checks that a retry policy text longer than
// maxCachedPolicyText is parsed but not kept as a cache key (RK-46), so that
// maxPolicyCache distinct 16 MiB documents cannot pin 64 GiB.
func TestPolicyCacheSkipsLongTexts(t *testing.T) {
	e := New()
	for i := range 3 {
		pad := strings.Repeat(" ", maxCachedPolicyText+i)
		if _, err := e.Enqueue(JobSpec{Type: "t", Retry: []byte(`{"max_attempts":` + pad + `7}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.policies); n != 0 {
		t.Errorf("%d long policy texts cached, want 0", n)
	}
	if _, err := e.Enqueue(JobSpec{Type: "t", Retry: []byte(`{"max_attempts":7}`)}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.policies); n != 1 {
		t.Errorf("%d short policy texts cached, want 1", n)
	}
}
