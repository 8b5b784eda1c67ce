package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestScheduleDefaultIsMainJob(t *testing.T) {
	// No arguments at all runs the schedule of the default policy, and
	// says so on stderr.
	code, out, errOut := runCLI(t, "")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, `no command given: running "retrykit schedule"`) {
		t.Errorf("stderr %q does not say what runs", errOut)
	}
	// OJS §12.2: the default policy retries after 1s and 2s (before
	// jitter) and discards after the third attempt. Ranges are inclusive,
	// as Backoff.Bounds: the jitter multiplier [0.5, 1.5) reaches 1ns under
	// 1.5 times the base, and cumulative tops are sums of those tops.
	for _, want := range []string{"max_attempts=3", "initial_interval=PT1S", "max_interval=PT5M",
		"1s", "[500ms, 1.499999999s]", "2s", "[1s, 2.999999999s]", "[1.5s, 4.499999998s]", "after attempt 3 fails: discard"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestScheduleJSON(t *testing.T) {
	// §12.3 with the strategy named (RK-01): 15s * n^4, capped at 1h.
	pol := `{"max_attempts":25,"initial_interval":"PT15S","backoff_coefficient":4.0,
		"max_interval":"PT1H","backoff_strategy":"polynomial","on_exhaustion":"dead_letter"}`
	code, out, errOut := runCLI(t, pol, "schedule", "--json", "--limit", "6", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep scheduleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	want := []time.Duration{15 * time.Second, 240 * time.Second, 1215 * time.Second, time.Hour, time.Hour, time.Hour}
	if len(rep.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(rep.Rows), len(want))
	}
	var cum time.Duration
	for i, row := range rep.Rows {
		cum += want[i]
		if row.Attempt != i+1 || row.Action != "retry" || time.Duration(row.DelayNS) != want[i] {
			t.Errorf("row %d = %+v, want attempt %d retry after %v", i, row, i+1, want[i])
		}
		// Jitter range: half of the capped delay up to (not including)
		// 1.5 times it, capped again at 1h (inclusive).
		if lo, hi := time.Duration(row.MinNS), time.Duration(row.MaxNS); lo != want[i]/2 || hi != min(want[i]*3/2-1, time.Hour) {
			t.Errorf("row %d range [%v, %v]", i, lo, hi)
		}
		if time.Duration(row.CumulativeNS) != cum {
			t.Errorf("row %d cumulative %v, want %v", i, time.Duration(row.CumulativeNS), cum)
		}
	}
	if !rep.Truncated || rep.Exhaustion.AfterAttempt != 25 || rep.Exhaustion.Action != "dead_letter" {
		t.Errorf("exhaustion = %+v truncated=%v, want dead_letter after 25", rep.Exhaustion, rep.Truncated)
	}
}

func TestScheduleExactJitter(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.json")
	if err := os.WriteFile(file, []byte(`{"initial_interval":"PT10S","max_attempts":7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "schedule", "--json", "--rand", "0.75", file)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep scheduleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// §5.3 table: 10s·2^(n-1) capped at 5m, times 1.25, capped at 5m again.
	want := []time.Duration{12500 * time.Millisecond, 25 * time.Second, 50 * time.Second,
		100 * time.Second, 200 * time.Second, 300 * time.Second}
	for i, w := range want {
		if got := time.Duration(rep.Rows[i].DelayNS); got != w {
			t.Errorf("attempt %d: delay %v, want %v", i+1, got, w)
		}
	}
	if rep.Exhaustion.AfterAttempt != 7 || rep.Exhaustion.Action != "discard" {
		t.Errorf("exhaustion %+v", rep.Exhaustion)
	}
}

func TestScheduleMaxAttemptsHuge(t *testing.T) {
	code, out, errOut := runCLI(t, `{"max_attempts": 9223372036854775807, "jitter": false}`, "schedule", "--json", "--limit", "3", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep scheduleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Exhaustion.AfterAttempt != 9223372036854775807 || len(rep.Rows) != 3 {
		t.Errorf("exhaustion %+v rows %d", rep.Exhaustion, len(rep.Rows))
	}
}

func TestScheduleBadInput(t *testing.T) {
	cases := []struct {
		name, stdin string
		args        []string
		want        []string
	}{
		{"wrong type and unknown field", `{"max_attempts":"3","foo":1}`, []string{"schedule", "-"}, []string{"max_attempts", "foo"}},
		{"bad duration", `{"initial_interval":"PT"}`, []string{"schedule", "-"}, []string{"initial_interval"}},
		{"not json", `{`, []string{"schedule", "-"}, []string{"policy"}},
		{"missing file", "", []string{"schedule", "/nonexistent/p.json"}, []string{"/nonexistent/p.json"}},
		{"two files", "", []string{"schedule", "a", "b"}, []string{"one policy file at most"}},
		{"bad rand", "", []string{"schedule", "--rand", "1"}, []string{"--rand"}},
		{"bad limit", "", []string{"schedule", "--limit", "0"}, []string{"--limit"}},
		{"limit above cap", "", []string{"schedule", "--json", "--limit", "1000000000"}, []string{"--limit", "10000", "1000000000"}},
		{"limit just above cap", "", []string{"schedule", "--limit", "10001"}, []string{"--limit", "10000"}},
		{"rand with trailing junk", "", []string{"schedule", "--rand", "0.25abc"}, []string{"--rand", "0.25abc"}},
		{"rand with leading space", "", []string{"schedule", "--rand", " 0.25"}, []string{"--rand"}},
		{"rand NaN", "", []string{"schedule", "--rand", "NaN"}, []string{"--rand"}},
		{"rand negative", "", []string{"schedule", "--rand", "-0.1"}, []string{"--rand"}},
		{"unknown command", "", []string{"frobnicate"}, []string{"unknown command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, c.stdin, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

func TestScheduleLimitCap(t *testing.T) {
	// The largest allowed --limit works, and with a huge max_attempts only
	// that many rows are built.
	code, out, errOut := runCLI(t, `{"max_attempts": 9223372036854775807}`, "schedule", "--json", "--limit", "10000", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep scheduleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 10000 || !rep.Truncated || rep.Exhaustion.AfterAttempt != 9223372036854775807 {
		t.Errorf("rows %d truncated %v exhaustion %+v", len(rep.Rows), rep.Truncated, rep.Exhaustion)
	}
}

func TestScheduleRandParsed(t *testing.T) {
	code, out, errOut := runCLI(t, "", "schedule", "--json", "--rand", "0.25")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep scheduleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// Default policy: 1s * (0.5 + 0.25).
	if rep.Rand == nil || *rep.Rand != 0.25 || time.Duration(rep.Rows[0].DelayNS) != 750*time.Millisecond {
		t.Errorf("rand %v, first row %+v", rep.Rand, rep.Rows[0])
	}
}

func TestScheduleNoJitterRange(t *testing.T) {
	code, out, errOut := runCLI(t, `{"max_attempts":3,"jitter":false}`, "schedule", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// Without jitter the delay is exact: the range columns show "-", not
	// the delay again.
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[1] == "retry" {
			if f[3] != "-" || f[5] != "-" {
				t.Errorf("row %q: want - in the range columns", line)
			}
		}
	}
	if !strings.Contains(out, "1        retry    1s     -") {
		t.Errorf("unexpected table:\n%s", out)
	}
}

func TestScheduleManyPatternsTruncated(t *testing.T) {
	pats := make([]string, 25)
	for i := range pats {
		pats[i] = fmt.Sprintf("%q", fmt.Sprintf("err.p%02d", i))
	}
	pol := `{"non_retryable_errors":[` + strings.Join(pats, ",") + `]}`
	code, out, errOut := runCLI(t, pol, "schedule", "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "non_retryable_errors:") {
			line = l
		}
	}
	if !strings.Contains(line, "err.p19, … and 5 more") || strings.Contains(line, "err.p20") {
		t.Errorf("non_retryable_errors line = %q", line)
	}
	// A short list is printed whole.
	_, out, _ = runCLI(t, `{"non_retryable_errors":["a.*","b"]}`, "schedule", "-")
	if !strings.Contains(out, "non_retryable_errors: a.*, b\n") {
		t.Errorf("short list:\n%s", out)
	}
}
