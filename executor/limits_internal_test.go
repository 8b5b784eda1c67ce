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
	// Invalid bytes near the cut used to index past the
	// repaired (shorter) text.
	f.Add(strings.Repeat("a", MaxMessageLen-6) + strings.Repeat("\xff", 7))
	f.Add(strings.Repeat("\xff", MaxMessageLen+4))
	f.Fuzz(func(t *testing.T, m string) {
		got := boundMessage(m)
		if len(got) > MaxMessageLen || !utf8.ValidString(got) {
			t.Fatalf("boundMessage gave %d bytes, valid %v", len(got), utf8.ValidString(got))
		}
		if !utf8.ValidString(m) {
			if len(m) > MaxMessageLen && !strings.HasSuffix(got, "…") {
				t.Fatalf("a cut message does not end in …")
			}
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

// TestBoundMessageInvalidNearCut: a long message whose
// invalid bytes sit near the cut, where repairing them shortens or
// lengthens the text, is cut to valid UTF-8 without a panic.
func TestBoundMessageInvalidNearCut(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		name string
		m    string
		want string // "" means: only check the contract
	}{
		{"a×4090 + ff×7", long(4090) + strings.Repeat("\xff", 7), long(4090) + "\uFFFD…"},
		{"ff×4100", strings.Repeat("\xff", 4100), "\uFFFD…"},
		{"ff×4096 exactly", strings.Repeat("\xff", MaxMessageLen), "\uFFFD"},
		{"ff a alternating", strings.Repeat("\xffa", 3000), ""},
		{"ff a alternating, fits before repair", strings.Repeat("\xffa", MaxMessageLen/2), ""},
		{"rune straddling the limit", long(MaxMessageLen-1) + "é" + long(10), long(MaxMessageLen-3) + "…"},
		{"4-byte rune straddling", long(MaxMessageLen-2) + "😀", long(MaxMessageLen-3) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := boundMessage(tc.m)
			if len(got) > MaxMessageLen || !utf8.ValidString(got) {
				t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("got %q (%d bytes), want %q", clip(got), len(got), clip(tc.want))
			}
		})
	}
}
