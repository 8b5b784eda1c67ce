package protocol

import (
	"context"
	"errors"
	"math"
	"math/big"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestReadInt(t *testing.T) {
	huge := "1" + strings.Repeat("0", 1_000_000)
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"1500000000", 1500000000, ""},
		{"1.5e9", 1500000000, ""},
		{"15E+8", 1500000000, ""},
		{"1500000000.000", 1500000000, ""},
		{"0", 0, ""},
		{"-0.0e99", 0, ""},
		{"0.0000e-999999999999", 0, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		// A float64 implementation's saturated maximum.
		{"9223372036854775808", math.MaxInt64, ""},
		{"9.223372036854776e18", math.MaxInt64, ""},
		{"9223372036854776000", math.MaxInt64, ""},
		{"18446744073709551616", math.MaxInt64, ""},
		{"1e400000000000000000000", math.MaxInt64, ""},
		{huge, math.MaxInt64, ""},
		{"-9223372036854775808", math.MinInt64, ""},
		{"-9223372036854775809", math.MinInt64, ""},
		{"-1e99", math.MinInt64, ""},
		{"1.5", 0, "want a whole number of nanoseconds, got \"1.5\""},
		{"1e-1", 0, "want a whole number"},
		{`"PT1S"`, 0, "want a whole number of nanoseconds, got a JSON string"},
		{"true", 0, "got a JSON boolean"},
		{"[1]", 0, "got a JSON array"},
	} {
		got, err := readInt([]byte(tc.in))
		name := tc.in
		if len(name) > 30 {
			name = name[:30] + "…"
		}
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %d, %v; want %d", name, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %d, %v; want error %q", name, got, err, tc.err)
		}
	}
}

// TestReadIntLinear reads numbers of a million digits and an exponent of a
// million digits allocating nothing in proportion (no big-number
// arithmetic).
func TestReadIntLinear(t *testing.T) {
	for _, in := range []string{
		"1" + strings.Repeat("0", 1<<20),
		"1e" + strings.Repeat("9", 1<<20),
		"1." + strings.Repeat("0", 1<<20) + "1",
		strings.Repeat("0", 1<<20) + "7",
	} {
		b := []byte(in)
		_, _ = readInt(b) // warm up
		// TotalAlloc counts every goroutine of the process (other tests,
		// the runtime), so the bound is held against the least of five
		// runs.
		n := uint64(1 << 62)
		for range 5 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _ = readInt(b)
			runtime.ReadMemStats(&after)
			n = min(n, after.TotalAlloc-before.TotalAlloc)
		}
		// Only the error message of a fractional value allocates.
		if n > 4<<10 {
			t.Errorf("%.20s…: %d bytes allocated", in, n)
		}
	}
}

// FuzzReadInt checks readInt against exact rational arithmetic for every
// JSON number short enough for math/big to read quickly.
func FuzzReadInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "1.5e9", "9223372036854775808", "9.223372036854776e18", "1e-3", "120e-1", "-0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 40 || !isJSONNumber(s) {
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-0")) > 3 {
			return // exponents beyond 999: math/big is slow there; TestReadInt covers them
		}
		got, err := readInt([]byte(s))
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("oracle cannot read %q", s)
		}
		if !r.IsInt() {
			if err == nil {
				t.Fatalf("%q is not whole, readInt gave %d", s, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := r.Num()
		switch {
		case want.Cmp(big.NewInt(math.MaxInt64)) > 0:
			if got != math.MaxInt64 {
				t.Fatalf("%q: got %d, want saturation", s, got)
			}
		case want.Cmp(big.NewInt(math.MinInt64)) < 0:
			if got != math.MinInt64 {
				t.Fatalf("%q: got %d, want saturation", s, got)
			}
		case want.Int64() != got:
			t.Fatalf("%q: got %d, want %s", s, got, want)
		}
	})
}

// isJSONNumber reports whether s is a JSON number literal.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start || s[start] == '0' && i-start > 1 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == f {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == e {
			return false
		}
	}
	return i == len(s)
}

func TestAnswerMessagesInPlainWords(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`[1,2]`, "protocol: answer: want a JSON object, got a JSON array"},
		{`{"id":1,"match":"no"}`, "protocol: answer: field match: got a JSON string, want true or false"},
		{`{"id":1,"delay_ns":1.5}`, `protocol: answer: field delay_ns: want a whole number of nanoseconds, got "1.5"`},
		{`{"id":1,"ns":"PT1S"}`, "protocol: answer: field ns: want a whole number of nanoseconds, got a JSON string"},
		{`{"id":1e99}`, "field id: got the number"},
		{`{"id":1,`, "not valid JSON"},
	} {
		_, err := decodeAnswer([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.line, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "struct")) {
			t.Errorf("%s: Go internals in %q", tc.line, err)
		}
	}
	var req Request
	err := req.UnmarshalJSON([]byte(`[{"id":1,"op":"hello"}]`))
	if err == nil || err.Error() != "protocol: request: want a JSON object, got a JSON array" {
		t.Errorf("array request: %v", err)
	}
}

func TestHelloAnsweredWithError(t *testing.T) {
	// A hello answered with an error object was reported as
	// "protocol 0, want 1".
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	for _, tc := range []struct{ answer, want string }{
		{`{"id":1,"error":{"type":"validation.invalid_request","message":"no hello here"}}`,
			"the adapter answered hello with an error instead of describing itself: validation.invalid_request: no hello here"},
		{`{"id":1,"unsupported":true}`, `the adapter answered hello with "unsupported"`},
		{`{"id":1,"protocol":"1"}`, "the answer to hello: field protocol: got a JSON string, want an integer"},
	} {
		p := NewProcess([]string{"sh", "-c", "read line; echo '" + tc.answer + "'; cat >/dev/null"})
		_, err := p.Hello(context.Background())
		p.Close()
		if !errors.Is(err, ErrHello) || !errors.Is(err, ErrAdapter) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.answer, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "protocol 0") {
			t.Errorf("%s: still says protocol 0: %v", tc.answer, err)
		}
	}
}

// BenchmarkReadInt reads answer numbers: ordinary, a float64's saturated
// maximum, and a hostile million-digit literal (cost per byte is flat).
func BenchmarkReadInt(b *testing.B) {
	for _, tc := range []struct{ name, in string }{
		{"int", "1500000000"},
		{"float64-max", "9.223372036854776e18"},
		{"digits-1MiB", "1" + strings.Repeat("0", 1<<20)},
	} {
		in := []byte(tc.in)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := readInt(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeAnswer decodes answer lines, up to one near the 1 MiB
// limit (an effective policy with a 1 MB duration string).
func BenchmarkDecodeAnswer(b *testing.B) {
	long := `{"id":3,"effective":{"initial_interval":"PT1.` + strings.Repeat("0", 1_000_000) + `1S"}}`
	for _, tc := range []struct{ name, in string }{
		{"delay", `{"id":4,"delay_ns":9223372036854775808}`},
		{"effective-1MB", long},
	} {
		in := []byte(tc.in)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := decodeAnswer(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
