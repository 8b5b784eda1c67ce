package errmatch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// naiveMatch is the reference: the rules of OJS section 6.2 / RK-15 as a
// plain loop over the patterns.
func naiveMatch(patterns []string, errType string) bool {
	for _, p := range patterns {
		if ns, ok := strings.CutSuffix(p, ".*"); ok {
			if strings.HasPrefix(errType, ns+".") {
				return true
			}
		} else if errType == p {
			return true
		}
	}
	return false
}

func mustCompile(t testing.TB, patterns ...string) *Matcher {
	t.Helper()
	m, err := Compile(patterns)
	if err != nil {
		t.Fatalf("Compile(%q): %v", patterns, err)
	}
	return m
}

func TestMatchSpecTable(t *testing.T) {
	// OJS retry spec section 6.2, example table.
	m := mustCompile(t, "validation.payload_invalid", "auth.*")
	cases := []struct {
		errType string
		want    bool
	}{
		{"validation.payload_invalid", true},
		{"validation.schema_error", false},
		{"auth.token_expired", true},
		{"auth.forbidden", true},
		{"auth", false},
		{"external.auth.failure", false},
	}
	for _, c := range cases {
		if got := m.Match(c.errType); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.errType, got, c.want)
		}
	}
}

func TestMatchDecisionRK15(t *testing.T) {
	cases := []struct {
		patterns []string
		errType  string
		want     bool
	}{
		// The prefix keeps its dot.
		{[]string{"auth.*"}, "auth.x", true},
		{[]string{"auth.*"}, "auth.x.y", true},
		{[]string{"auth.*"}, "auth.", true},
		{[]string{"auth.*"}, "auth", false},
		{[]string{"auth.*"}, "authx", false},
		{[]string{"auth.*"}, "authx.y", false},
		{[]string{"auth.*"}, "external.auth.x", false},
		// Case-sensitive.
		{[]string{"auth.*"}, "Auth.x", false},
		{[]string{"Auth.Token"}, "auth.token", false},
		{[]string{"auth.token"}, "auth.token", true},
		// Only a trailing ".*" is special.
		{[]string{"*"}, "auth.x", false},
		{[]string{"*"}, "*", true},
		{[]string{"auth*"}, "auth.x", false},
		{[]string{"auth*"}, "authx", false},
		{[]string{"auth*"}, "auth*", true},
		{[]string{"a.*.b"}, "a.x.b", false},
		{[]string{"a.*.b"}, "a.*.b", true},
		{[]string{"a.b*"}, "a.bc", false},
		// A prefix pattern does not match its own spelling as a type except literally.
		{[]string{"auth.*"}, "auth.*", true}, // "auth.*" starts with "auth."
		// Exact entries are not prefixes.
		{[]string{"auth.token"}, "auth.token.expired", false},
		{[]string{"auth.token"}, "auth.toke", false},
		// Nested prefixes.
		{[]string{"external.stripe.*"}, "external.stripe.card_declined", true},
		{[]string{"external.stripe.*"}, "external.stripes.x", false},
		{[]string{"external.stripe.*"}, "external.x", false},
		{[]string{"external.*", "external.stripe.*"}, "external.x", true},
		// Prefix of several dots, ".." namespaces.
		{[]string{"..*"}, "..", true},
		{[]string{"..*"}, ".x", false},
		{[]string{"a..*"}, "a..b", true},
		{[]string{"a..*"}, "a.b", false},
		// Empty type never matches.
		{[]string{"auth.*", "x"}, "", false},
		// No patterns.
		{nil, "auth.x", false},
	}
	for _, c := range cases {
		m := mustCompile(t, c.patterns...)
		if got := m.Match(c.errType); got != c.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", c.patterns, c.errType, got, c.want)
		}
	}
}

func TestMatchWordBoundaries(t *testing.T) {
	// Types and prefixes of every length from 1 to 80 bytes, so that dots and
	// ends fall at every position within the 8-byte words Match reads, and
	// past 64 where the length filters change representation.
	for n := 1; n <= 80; n++ {
		ns := strings.Repeat("a", n)
		exact := strings.Repeat("b", n)
		m := mustCompile(t, ns+".*", exact)
		checks := []struct {
			errType string
			want    bool
		}{
			{ns + ".", true},
			{ns + ".x", true},
			{ns + ".xxxxxxxxxxxxxxx.yyyy", true},
			{ns, false},
			{ns + "a.x", false},
			{ns[1:] + ".x", false},
			{"z" + ns + ".x", false},
			{exact, true},
			{exact + "b", false},
			{exact[1:], false},
			{exact + ".", false},
		}
		for _, c := range checks {
			if got := m.Match(c.errType); got != c.want {
				t.Errorf("n=%d: Match(%q) = %v, want %v", n, c.errType, got, c.want)
			}
		}
	}
}

func TestMatchManyPatterns(t *testing.T) {
	var patterns []string
	for i := 0; i < 1000; i++ {
		switch i % 3 {
		case 0:
			patterns = append(patterns, "svc"+itoa(i)+".*")
		default:
			patterns = append(patterns, "domain"+itoa(i%17)+".err_"+itoa(i))
		}
	}
	m := mustCompile(t, patterns...)
	for _, p := range patterns {
		var typ string
		if ns, ok := strings.CutSuffix(p, ".*"); ok {
			typ = ns + ".anything.at_all"
		} else {
			typ = p
		}
		if !m.Match(typ) {
			t.Errorf("Match(%q) = false, want true", typ)
		}
	}
	for _, typ := range []string{"svc1.x", "svc3", "svc3x.y", "domain0.err_0", "domain1.err_2.x", "unknown.type"} {
		if got, want := m.Match(typ), naiveMatch(patterns, typ); got != want {
			t.Errorf("Match(%q) = %v, want %v", typ, got, want)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestMatchNilAndZero(t *testing.T) {
	var nilM *Matcher
	var zero Matcher
	for _, typ := range []string{"", "a", "auth.x", strings.Repeat("x.", 50)} {
		if nilM.Match(typ) {
			t.Errorf("nil Matcher matched %q", typ)
		}
		if zero.Match(typ) {
			t.Errorf("zero Matcher matched %q", typ)
		}
	}
	if got := nilM.Patterns(); got == nil || len(got) != 0 {
		t.Errorf("nil Matcher Patterns() = %#v, want empty non-nil", got)
	}
	if got := zero.Patterns(); got == nil || len(got) != 0 {
		t.Errorf("zero Matcher Patterns() = %#v, want empty non-nil", got)
	}
}

func TestCompileErrors(t *testing.T) {
	_, err := Compile([]string{"ok", "", "auth.*", ".*", ""})
	if err == nil {
		t.Fatal("Compile: want error")
	}
	for _, target := range []error{ErrInvalidPattern, ErrEmptyPattern, ErrEmptyPrefix} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false, want true", target)
		}
	}
	if errors.Is(err, ErrUnknownCode) {
		t.Error("errors.Is(err, ErrUnknownCode) = true")
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T does not unwrap to a list", err)
	}
	want := []PatternError{
		{Index: 1, Pattern: ""},
		{Index: 3, Pattern: ".*"},
		{Index: 4, Pattern: ""},
	}
	errs := joined.Unwrap()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(want), err)
	}
	for i, e := range errs {
		var pe *PatternError
		if !errors.As(e, &pe) {
			t.Fatalf("error %d is %T, want *PatternError", i, e)
		}
		if pe.Index != want[i].Index || pe.Pattern != want[i].Pattern || pe.Reason == "" {
			t.Errorf("error %d = %+v, want index %d pattern %q and a reason", i, *pe, want[i].Index, want[i].Pattern)
		}
	}
	if got, want := errs[0].Error(), `errmatch: pattern 1 "": must not be empty`; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if !strings.HasPrefix(errs[1].Error(), `errmatch: pattern 3 ".*": `) {
		t.Errorf("message = %q", errs[1].Error())
	}
	// Each condition only matches its own sentinel.
	if errors.Is(errs[0], ErrEmptyPrefix) || errors.Is(errs[1], ErrEmptyPattern) {
		t.Error("sentinels cross-match")
	}
	var pe *PatternError
	if !errors.As(err, &pe) || pe.Index != 1 {
		t.Errorf("errors.As on the joined error found %+v, want the first bad pattern", pe)
	}
}

func TestCompileAcceptsOddButValid(t *testing.T) {
	for _, p := range []string{"*", "**", ".", "..", "..*", "a.*.b", "auth*", " ", "é.*", "a\x00b"} {
		if _, err := Compile([]string{p}); err != nil {
			t.Errorf("Compile([%q]) = %v, want nil", p, err)
		}
	}
}

func TestPatterns(t *testing.T) {
	in := []string{"b.*", "a", "b.*", "c"}
	m := mustCompile(t, in...)
	in[0] = "changed"
	got := m.Patterns()
	want := []string{"b.*", "a", "b.*", "c"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Patterns() = %q, want %q", got, want)
	}
	got[1] = "mutated"
	if m.Patterns()[1] != "a" || !m.Match("a") {
		t.Error("Patterns() result aliases the Matcher")
	}
	if !m.Match("b.x") || m.Match("changed") {
		t.Error("Compile kept a reference to the caller's slice")
	}
}

func TestMatchAllocs(t *testing.T) {
	m := mustCompile(t, benchPatterns(200)...)
	types := []string{"external.crm.api_deprecated", "auth.token_expired", "nope", strings.Repeat("a.", 40)}
	allocs := testing.AllocsPerRun(100, func() {
		for _, typ := range types {
			m.Match(typ)
		}
	})
	if allocs != 0 {
		t.Errorf("Match allocates %v times per run, want 0", allocs)
	}
}

// incrementalHashMismatch walks s as Match does and returns the first prefix
// length whose incremental hash differs from hashString of that prefix, or
// 0 when every prefix agrees.
func incrementalHashMismatch(s string) int {
	h := uint64(hashSeed)
	for i := 0; i < len(s); i += 8 {
		var w uint64
		if len(s)-i >= 8 {
			w = load64(s, i)
		} else {
			w = loadTail(s, i)
		}
		for j := 0; j < 8 && i+j < len(s); j++ {
			k := i + j + 1
			if hashFinish(h, w&lowBytes(j+1), k) != hashString(s[:k]) {
				return k
			}
		}
		h = hashStep(h, w)
	}
	return 0
}

func TestHashIncrementalAgreesWithReference(t *testing.T) {
	// Match finishes prefix hashes from its running state; they must equal
	// the hash the tables were built with.
	s := "abcdefg.hijklmnop.qrstuvwxyz0123.456789.ABCDEFGHIJ.KLMNOPQRSTUVWXYZ.end"
	if k := incrementalHashMismatch(s); k != 0 {
		t.Fatalf("prefix length %d: incremental hash differs from the reference", k)
	}
}

func TestDotMask(t *testing.T) {
	for _, s := range []string{"........", "a.b.c.d.", "/./././.", "\x00.\x01.\x2f.\xae.", "abcdefgh", ".\xff\x2d\x2f\x6e\xae\x00."} {
		w := load64(s, 0)
		d := dotMask(w)
		for j := 0; j < 8; j++ {
			got := d>>(8*uint(j)+7)&1 == 1
			if want := s[j] == '.'; got != want {
				t.Errorf("dotMask(%q) byte %d = %v, want %v", s, j, got, want)
			}
		}
		if d&^0x8080808080808080 != 0 {
			t.Errorf("dotMask(%q) = %x has bits outside the byte high bits", s, d)
		}
	}
}

// Duplicates are dropped from the tables both below and above the list
// length where Compile switches to a map; matching is unaffected and
// Patterns keeps them.
func TestCompileDuplicatesAcrossSizes(t *testing.T) {
	for _, n := range []int{1, 2, smallList - 1, smallList, smallList + 1, 100} {
		var pats []string
		for i := 0; i < n; i++ {
			pats = append(pats, "a.b", "c.*", fmt.Sprintf("t%d.x", i))
		}
		m := mustCompile(t, pats...)
		if got := len(m.Patterns()); got != 3*n {
			t.Errorf("n=%d: Patterns() has %d entries, want %d", n, got, 3*n)
		}
		for _, typ := range []string{"a.b", "c.x", fmt.Sprintf("t%d.x", n-1)} {
			if !m.Match(typ) {
				t.Errorf("n=%d: Match(%q) = false", n, typ)
			}
		}
		for _, typ := range []string{"a.bb", "c", fmt.Sprintf("t%d.x", n)} {
			if m.Match(typ) {
				t.Errorf("n=%d: Match(%q) = true", n, typ)
			}
		}
		// Every key is in its table exactly once.
		count := 0
		for _, sl := range m.exact.slots {
			if sl.s == "a.b" {
				count++
			}
		}
		for _, sl := range m.prefix.slots {
			if sl.s == "c." {
				count++
			}
		}
		if count != 2 {
			t.Errorf("n=%d: duplicate keys stored %d times, want 2", n, count)
		}
	}
}
