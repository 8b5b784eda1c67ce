package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestStatusZeroIsNotPass(t *testing.T) {
	var res Result
	if res.Status == StatusPass || res.Status != StatusUnknown || res.Status.String() != "unknown" {
		t.Fatalf("zero Result status = %v", res.Status)
	}
	rep := &Report{Results: []Result{
		{ID: "a", Requirement: "RET-01", Status: StatusPass},
		{ID: "b", Requirement: "RET-01"}, // never judged
		{ID: "c", Requirement: "RET-02", Status: Status(200)},
	}}
	rep.finish()
	if rep.Totals.Pass != 1 || rep.Totals.Error != 2 || rep.OK() {
		t.Errorf("totals %+v, OK %v: an unset status must count as an error", rep.Totals, rep.OK())
	}
	if got := rep.Requirements[0]; got.Name != "RET-01" || got.Pass != 1 || got.Error != 1 {
		t.Errorf("per requirement %+v", got)
	}

	var text, junit, md, js bytes.Buffer
	for f, b := range map[string]*bytes.Buffer{"text": &text, "junit": &junit, "markdown": &md, "json": &js} {
		if err := rep.Write(b, f); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(text.String(), "ERROR b") || !strings.Contains(text.String(), "no result recorded (status unknown)") ||
		!strings.Contains(text.String(), "ERROR c") || !strings.HasPrefix(strings.TrimSpace(text.String()[strings.LastIndex(text.String(), "\n\n"):]), "FAIL") {
		t.Errorf("text report:\n%s", text.String())
	}
	if !strings.Contains(junit.String(), `errors="2"`) || !strings.Contains(junit.String(), "no result recorded") {
		t.Errorf("junit report:\n%s", junit.String())
	}
	if !strings.Contains(md.String(), "| `b` | RET-01 | unknown |") {
		t.Errorf("markdown report:\n%s", md.String())
	}
	// "status(200)" has no name to read back; the rest round-trips.
	rep.Results = rep.Results[:2]
	rep.finish()
	js.Reset()
	if err := rep.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Results[1].Status != StatusUnknown || back.Totals != rep.Totals || back.Totals.Error != 1 {
		t.Errorf("json round trip: %+v %+v", back.Results[1], back.Totals)
	}
	if !strings.Contains(js.String(), `"status": "unknown"`) {
		t.Errorf("json report:\n%s", js.String())
	}
}

func TestStatusTextRoundTrip(t *testing.T) {
	for _, s := range []Status{StatusUnknown, StatusPass, StatusFail, StatusError, StatusSkip} {
		b, _ := s.MarshalText()
		var back Status
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v: %q -> %v, %v", s, b, back, err)
		}
	}
	var s Status
	if err := s.UnmarshalText([]byte("passed")); err == nil {
		t.Error("unknown name accepted")
	}
}

func TestFormatsIsACopy(t *testing.T) {
	f := Formats()
	if strings.Join(f, ",") != "text,json,junit,markdown,html" {
		t.Fatalf("Formats() = %v", f)
	}
	f[0] = "yaml"
	if Formats()[0] != "text" {
		t.Error("Formats() shares its backing array")
	}
}

func TestRunMisuseDoesNotPanic(t *testing.T) {
	for name, run := range map[string]func() *Report{
		"nil suite":  func() *Report { return NewRunner(nil).Run(context.Background(), Reference()) },
		"nil runner": func() *Report { var r *Runner; return r.Run(context.Background(), Reference()) },
		"nil impl":   func() *Report { return NewRunner(&Suite{}).Run(context.Background(), nil) },
	} {
		rep := run()
		if rep.OK() || len(rep.Results) != 1 || rep.Results[0].ID != runnerErrorID || rep.Results[0].Status != StatusError || rep.Results[0].Reason == "" {
			t.Errorf("%s: %+v", name, rep)
		}
	}
}

func TestOptionBounds(t *testing.T) {
	for _, c := range []struct {
		opt        Option
		field      func(*runConfig) int
		want, name string
	}{
		{WithParallelism(0), func(c *runConfig) int { return c.parallel }, "1", "parallel 0"},
		{WithParallelism(100_000_000), func(c *runConfig) int { return c.parallel }, "1024", "parallel 1e8"},
		{WithJitterSamples(-1), func(c *runConfig) int { return c.jitterSamples }, "0", "samples -1"},
		{WithJitterSamples(1_000_000_000), func(c *runConfig) int { return c.jitterSamples }, "1000000", "samples 1e9"},
		{WithRepeat(0), func(c *runConfig) int { return c.repeat }, "1", "repeat 0"},
		{WithRepeat(1 << 40), func(c *runConfig) int { return c.repeat }, "100", "repeat 2^40"},
	} {
		r := NewRunner(nil, c.opt)
		if got := strconv.Itoa(c.field(&r.cfg)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestLoadNeedsSomethingToRead(t *testing.T) {
	if _, err := Load(nil, nil); !errors.Is(err, ErrInvalidVector) {
		t.Errorf("Load(nil, nil): %v", err)
	}
	_, err := Load(os.DirFS("/nonexistent-retrykit-dir"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "conformance: ") {
		t.Errorf("missing directory: %v", err)
	}
	_, err = Load(nil, os.DirFS("/nonexistent-retrykit-dir"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "conformance: ") {
		t.Errorf("missing scenario directory: %v", err)
	}
}
