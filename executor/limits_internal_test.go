package executor

import (
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzBoundMessage checks boundMessage's contract on any input: the result
// is valid UTF-8 of at most MaxMessageLen bytes; a valid message that fits
// is unchanged; a valid longer one keeps a prefix of itself and ends in "…".
func FuzzBoundMessage(f *testing.F) {
	f.Add("boom")
	f.Add(strings.Repeat("é", MaxMessageLen))
	f.Add(strings.Repeat("\xffa", MaxMessageLen))
	f.Add("a\xc3")
	f.Fuzz(func(t *testing.T, m string) {
		got := boundMessage(m)
		if len(got) > MaxMessageLen || !utf8.ValidString(got) {
			t.Fatalf("boundMessage gave %d bytes, valid %v", len(got), utf8.ValidString(got))
		}
		if !utf8.ValidString(m) {
			return
		}
		if len(m) <= MaxMessageLen {
			if got != m {
				t.Fatalf("a valid %d-byte message was changed", len(m))
			}
			return
		}
		head, ok := strings.CutSuffix(got, "…")
		if !ok || !strings.HasPrefix(m, head) || len(head) < MaxMessageLen-len("…")-utf8.UTFMax {
			t.Fatalf("cut message: %d-byte head, suffix ok %v", len(head), ok)
		}
	})
}
