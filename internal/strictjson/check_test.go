package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/retrykit/retrykit/internal/strictjson"
)

func TestCheckNamesThePathOfTheFirstOffence(t *testing.T) {
	for _, c := range []struct {
		in, path string
		cause    error // nil: a syntax error
	}{
		{`{"a":1,"a":2}`, "a", strictjson.ErrDuplicateKey},
		{`{"options":{"retry":{"max_attempts":2,"max_attempts":9}}}`, "options.retry.max_attempts", strictjson.ErrDuplicateKey},
		{`{"jobs":[{},{"args":[1,{"x":1,"\u0078":2}]}]}`, "jobs[1].args[1].x", strictjson.ErrDuplicateKey},
		{"{\"meta\":{\"k\":\"\xff\"}}", "meta.k", strictjson.ErrInvalidUTF8},
		{"{\"override\":{\"args\":[\"ok\",\"\xc3\"]}}", "override.args[1]", strictjson.ErrInvalidUTF8},
		{`{"a":"\ud800"}`, "a", strictjson.ErrInvalidUTF8},                             // a lone surrogate escape (RK-19)
		{"{\"\xff\":1}", "\uFFFD", strictjson.ErrInvalidUTF8},                          // in a key
		{`[1,2,{"b":{"c":[true,"\udfff"]}}]`, "[2].b.c[1]", strictjson.ErrInvalidUTF8}, // a top-level array
		{`{"a":1} {}`, "", nil},
		{`{"a":1,}`, "", nil},
		{``, "", nil},
	} {
		err := strictjson.Check([]byte(c.in))
		var fe *strictjson.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, strictjson.ErrSyntax) {
			t.Errorf("Check(%q) = %v, want a *FieldError matching ErrSyntax", c.in, err)
			continue
		}
		if fe.Path != c.path {
			t.Errorf("Check(%q): path %q, want %q (%v)", c.in, fe.Path, c.path, err)
		}
		if c.cause != nil && !errors.Is(err, c.cause) {
			t.Errorf("Check(%q) = %v, want errors.Is %v", c.in, err, c.cause)
		}
		var se *strictjson.SyntaxError
		if c.cause == nil && !errors.As(err, &se) {
			t.Errorf("Check(%q) = %v, want a *SyntaxError cause", c.in, err)
		}
	}
	for _, in := range []string{`{}`, `{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, `"\ud83d\ude00"`, `{"é":"ü","e":"u"}`, `{"a":1,"A":2}`} {
		if err := strictjson.Check([]byte(in)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", in, err)
		}
	}
}

func TestCheckManyKeysStillFindsTheDuplicate(t *testing.T) {
	b := []byte{'{'}
	for i := range 100 {
		b = fmt.Appendf(b, `"k%d":%d,`, i, i)
	}
	b = append(b, `"k57":0}`...)
	var fe *strictjson.FieldError
	if err := strictjson.Check(b); !errors.As(err, &fe) || fe.Path != "k57" || !errors.Is(err, strictjson.ErrDuplicateKey) {
		t.Fatalf("Check = %v, want k57: duplicate key", err)
	}
}

func TestFoldKeysRefusesCaseTwinsAtTheTopOnly(t *testing.T) {
	in := []byte(`{"queues":["a"],"QUEUES":["b"]}`)
	if err := strictjson.Check(in); err != nil {
		t.Fatalf("without FoldKeys: %v", err)
	}
	var fe *strictjson.FieldError
	err := strictjson.Check(in, strictjson.FoldKeys(1))
	if !errors.As(err, &fe) || fe.Path != "QUEUES" || !errors.Is(err, strictjson.ErrDuplicateKey) {
		t.Fatalf("FoldKeys(1): %v, want QUEUES: duplicate key", err)
	}
	// Caller data deeper down keeps keys that differ in case.
	if err := strictjson.Check([]byte(`{"error":{"details":{"a":1,"A":2}}}`), strictjson.FoldKeys(2)); err != nil {
		t.Fatalf("FoldKeys(2) on depth 3: %v", err)
	}
	if err := strictjson.Check([]byte(`{"error":{"type":"a","TYPE":"b"}}`), strictjson.FoldKeys(2)); !errors.Is(err, strictjson.ErrDuplicateKey) {
		t.Fatalf("FoldKeys(2) on depth 2: %v", err)
	}
}

// The one integer rule (RK-10): each expected value is the literal's
// mathematical value, written out.
func TestIntLiteral(t *testing.T) {
	for _, c := range []struct {
		lit    string
		lo, hi int64
		v      int64
		res    strictjson.IntResult
	}{
		{"3", 0, 10, 3, strictjson.IntOK},
		{"3.0", 0, 10, 3, strictjson.IntOK},
		{"3e0", 0, 10, 3, strictjson.IntOK},
		{"30e-1", 0, 10, 3, strictjson.IntOK},
		{"3000.0", 0, 5000, 3000, strictjson.IntOK},
		{"-0", 0, 10, 0, strictjson.IntOK},
		{"0e999999999999999", 0, 10, 0, strictjson.IntOK},
		{"2.5", 0, 10, 0, strictjson.IntNotInteger},
		{"1e-1", 0, 10, 0, strictjson.IntNotInteger},
		{"1e-9999999999999999", 0, 10, 0, strictjson.IntNotInteger},
		{"-1", 0, 10, 0, strictjson.IntBelowRange},
		{"11", 0, 10, 0, strictjson.IntAboveRange},
		{"1e9999999999999999", 0, 10, 0, strictjson.IntAboveRange},
		{"-1e9999999999999999", 0, 10, 0, strictjson.IntBelowRange},
		{"9223372036854775807", 0, math.MaxInt64, math.MaxInt64, strictjson.IntOK},
		{"9223372036854775808", 0, math.MaxInt64, 0, strictjson.IntAboveRange},
		{"-9223372036854775808", math.MinInt64, 0, math.MinInt64, strictjson.IntOK},
		{"-9223372036854775809", math.MinInt64, 0, 0, strictjson.IntBelowRange},
		{`"3"`, 0, 10, 0, strictjson.IntNotInteger},
		{"", 0, 10, 0, strictjson.IntNotInteger},
	} {
		v, res := strictjson.IntLiteral(c.lit, c.lo, c.hi)
		if v != c.v || res != c.res {
			t.Errorf("IntLiteral(%s, %d, %d) = %d, %d; want %d, %d", c.lit, c.lo, c.hi, v, res, c.v, c.res)
		}
	}
}

func ExampleCheck() {
	err := strictjson.Check([]byte(`{"options":{"retry":{"max_attempts":2,"max_attempts":9}}}`))
	var fe *strictjson.FieldError
	fmt.Println(errors.As(err, &fe), fe.Path, errors.Is(err, strictjson.ErrDuplicateKey))
	fmt.Println(strictjson.Check([]byte(`{"args":["\ud800"]}`)))
	fmt.Println(strictjson.Check([]byte(`{"queues":[],"Queues":[]}`), strictjson.FoldKeys(1)))
	// Output:
	// true options.retry.max_attempts true
	// args[0]: not valid UTF-8
	// Queues: duplicate key (differs only in case from "queues")
}

// FuzzCheck: on any input, Check agrees with json.Valid on syntax, and on
// valid JSON refuses exactly the texts an independent reader
// (encoding/json's tokenizer, utf8.Valid, a scan for lone surrogate
// escapes) finds a repeated key or a non-UTF-8 string in.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, "[\"\xff\"]",
		`{"\u0061":1,"a":2}`, `{"a":"\\\"","b":[]}`, "{\"k\xc3\":1}", `[1,2,{"x":null}]`, `"\u2028"`,
		`"\ud800"`, `"\\ud800"`, `"\ud83d\ude00"`, `"\ud83d\ud83d"`, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		err := strictjson.Check(b)
		if !json.Valid(b) {
			if !errors.Is(err, strictjson.ErrSyntax) {
				t.Fatalf("Check(%q) = %v on invalid JSON", b, err)
			}
			return
		}
		want := !validUTF8Text(b) || hasDuplicateKey(b)
		if (err != nil) != want {
			t.Fatalf("Check(%q) = %v, want refusal %v", b, err, want)
		}
		var fe *strictjson.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Check(%q) = %T", b, err)
		}
	})
}

// FuzzDecoder: the Decoder accepts exactly the texts json.Valid accepts,
// and Object splits an object into the members encoding/json reads.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `[1,]`, `01`, `{"a":1}}`, "\xef\xbb\xbf{}", `{"a" : 1 , "b" : [ ] }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if strictjson.Valid(b) != json.Valid(b) {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, strictjson.Valid(b), json.Valid(b))
		}
		members, err := strictjson.Object(b, 1<<20)
		if err != nil {
			return
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || len(want) != len(members) {
			t.Fatalf("Object(%q) = %d members, encoding/json %d", b, len(members), len(want))
		}
		for _, m := range members {
			if w, ok := want[m.Key]; !ok || string(w) != string(m.Value) {
				t.Fatalf("Object(%q): %q = %s, encoding/json %s", b, m.Key, m.Value, w)
			}
		}
	})
}

// TestTimestampRefusesOffsetsPastRFC3339: time-numoffset is
// time-hour ":" time-minute, 00-23 and 00-59 (RFC 3339 §5.6).
func TestTimestampRefusesOffsetsPastRFC3339(t *testing.T) {
	for _, s := range []string{"2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00-24:00", "2026-01-01T00:00:00+23:60", "2026-01-01T00:00:00.5+99:00", "2026-01-01T24:00:00Z"} {
		if _, err := strictjson.Timestamp(s); err == nil {
			t.Errorf("Timestamp(%s) accepted", s)
		}
	}
	for s, unix := range map[string]int64{
		"2026-01-01T00:00:00Z":        1767225600,
		"2026-01-01T00:00:00+23:59":   1767225600 - 23*3600 - 59*60,
		"2026-01-01T00:00:00-23:59":   1767225600 + 23*3600 + 59*60,
		"2026-01-01T00:00:00.5+00:00": 1767225600,
	} {
		if got, err := strictjson.Timestamp(s); err != nil || got.Unix() != unix {
			t.Errorf("Timestamp(%s) = %v (%d), %v; want %d", s, got, got.Unix(), err, unix)
		}
	}
}
