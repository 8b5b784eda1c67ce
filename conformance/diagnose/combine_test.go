package diagnose_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func model(t *testing.T, name string) diagnose.Model {
	t.Helper()
	for _, m := range diagnose.Models() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no model %q", name)
	return diagnose.Model{}
}

// sameAnswer reports whether two answers are equal: the same error type,
// duration or effective policy text.
func sameAnswer(a, b protocol.Response) bool {
	if (a.Error == nil) != (b.Error == nil) {
		return false
	}
	if a.Error != nil {
		return a.Error.Type == b.Error.Type
	}
	return reflect.DeepEqual(a.NS, b.NS) && bytes.Equal(a.Effective, b.Effective)
}

// An implementation that ignores the date components never sees their
// values, so it cannot find them too large: P106752D (past 2^63−1 ns by
// its days) is 0 to it, as P1D is. Weeks, where the grammar is lenient
// about them, are date components too. (The PHP SDK @95c3b71 reads
// DateInterval's days, which is false for a parsed interval, and ignores
// y and m: P106752D, P293Y and P1W are 0 s, P1WT1H is 1 h.)
func TestDateComponentsAsZeroHaveNoRange(t *testing.T) {
	zero := model(t, "date-components-as-zero")
	weeks := model(t, "lenient-duration-weeks")
	for _, tc := range []struct {
		m     diagnose.Model
		value string
		want  int64
	}{
		{zero, "P1D", 0},
		{zero, "P1DT1H", 3_600_000_000_000},
		{zero, "P106752D", 0},
		{zero, "P293Y", 0},
		{zero, "P293YT2S", 2_000_000_000},
		{diagnose.Combine(zero, weeks), "P1W", 0},
		{diagnose.Combine(zero, weeks), "P1WT1H", 3_600_000_000_000},
		{diagnose.Combine(zero, weeks), "P1Y2W", 0},
		{weeks, "P1W", 7 * 24 * 3_600_000_000_000},
	} {
		a, ok := tc.m.Answer(protocol.Request{Op: protocol.OpParseDuration, Value: tc.value})
		if !ok || a.Error != nil || a.NS == nil || *a.NS != tc.want {
			t.Errorf("%s %q: got %+v, want %d ns", tc.m.Name, tc.value, a, tc.want)
		}
	}
	// The time part keeps its grammar and its bound.
	for _, v := range []string{"P1DT", "P1DT2562048H", "P1DT1X", "P1X"} {
		if a, ok := zero.Answer(protocol.Request{Op: protocol.OpParseDuration, Value: v}); !ok || a.Error == nil {
			t.Errorf("%q: got %+v, want a rejection", v, a)
		}
	}
}

// A combination of models is credited only with failures every one of its
// bugs takes part in. Here "duration-no-upper-bound" is dropped for its
// contradictions (two huge durations the implementation rejects), and the
// parse_duration failure it alone would reproduce must not come back under
// "no-on-exhaustion+duration-no-upper-bound": on_exhaustion plays no part
// in a parse_duration answer. Before, it did (the PHP SDK's PT2562048H).
func TestCombinationNeedsEveryBug(t *testing.T) {
	noExh := model(t, "no-on-exhaustion")
	noBound := model(t, "duration-no-upper-bound")
	both := diagnose.Combine(noExh, noBound)
	answer := func(m diagnose.Model, req protocol.Request) protocol.Response {
		a, ok := m.Answer(req)
		if !ok {
			t.Fatalf("%s: no answer to %+v", m.Name, req)
		}
		return a
	}
	reference := func(req protocol.Request) func(protocol.Response) bool {
		want := answer(diagnose.Baseline, req)
		return func(a protocol.Response) bool { return sameAnswer(a, want) }
	}
	failed := func(id string, m diagnose.Model, req protocol.Request) diagnose.Case {
		got := answer(m, req)
		return diagnose.Case{ID: id, Request: req, Answer: got, Failed: true, Judge: reference(req),
			Same: func(a protocol.Response) bool { return sameAnswer(a, got) }}
	}
	passed := func(id string, req protocol.Request) diagnose.Case {
		return diagnose.Case{ID: id, Request: req, Answer: answer(diagnose.Baseline, req), Judge: reference(req)}
	}
	dur := func(v string) protocol.Request {
		return protocol.Request{Op: protocol.OpParseDuration, Value: v}
	}
	val := func(p string) protocol.Request {
		return protocol.Request{Op: protocol.OpValidate, Policy: json.RawMessage(p)}
	}
	cases := []diagnose.Case{
		failed("val-defaults", noExh, val(`{}`)),
		failed("val-huge", both, val(`{"initial_interval":"PT2562048H"}`)),
		failed("dur-huge", noBound, dur("PT2562048H")),
		passed("dur-2^64", dur("PT18446744073709551616S")),
		passed("dur-digits", dur("PT99999999999999999999999999S")),
	}
	if ns := cases[2].Answer.NS; ns == nil || *ns != math.MaxInt64 {
		t.Fatalf("dur-huge: %+v, want the saturated maximum", cases[2].Answer)
	}
	findings, unexplained := diagnose.Diagnose(cases)
	var got []string
	for _, f := range findings {
		got = append(got, f.Model.Name+":"+strings.Join(f.Explains, ","))
		if slices.Contains(f.Explains, "dur-huge") {
			t.Errorf("dur-huge explained by %s; only duration-no-upper-bound reproduces it, and it is contradicted", f.Model.Name)
		}
	}
	if len(findings) == 0 || findings[0].Model.Name != "no-on-exhaustion" || !slices.Equal(findings[0].Explains, []string{"val-defaults"}) {
		t.Errorf("findings %v, want no-on-exhaustion:val-defaults first", got)
	}
	if !slices.Contains(unexplained, "dur-huge") {
		t.Errorf("unexplained %v, want dur-huge among them", unexplained)
	}
}

// A parser of whole numbers rejects a fraction on the seconds wherever it
// occurs, also behind date components, and accepts whole durations.
func TestFractionUnsupported(t *testing.T) {
	m := model(t, "fraction-unsupported")
	for _, tc := range []struct {
		value string
		want  int64 // -1: rejected
	}{
		{"PT0.5S", -1},
		{"PT1M30.25S", -1},
		{"P1Y2M3DT4H5M6.5S", -1},
		{"PT1S", 1_000_000_000},
		{"P1DT1M", 24*3_600_000_000_000 + 60_000_000_000},
	} {
		a, ok := m.Answer(protocol.Request{Op: protocol.OpParseDuration, Value: tc.value})
		switch {
		case !ok:
			t.Errorf("%q: no answer", tc.value)
		case tc.want < 0 && a.Error == nil:
			t.Errorf("%q: got %+v, want a rejection", tc.value, a)
		case tc.want >= 0 && (a.NS == nil || *a.NS != tc.want):
			t.Errorf("%q: got %+v, want %d ns", tc.value, a, tc.want)
		}
	}
}
