package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
)

// Text output writes long durations with days and rounds ranges outward;
// JSON keeps nanoseconds.
func TestHumanDurationsInText(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(pol, []byte(`{"max_attempts": 12, "initial_interval": "PT1.333333333S", "backoff_coefficient": 3.7, "max_interval": "PT2000H"}`), 0o600)
	code, text, errOut := runCLI(t, "", "schedule", pol)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, js, errOut := runCLI(t, "", "schedule", "--json", pol)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Rows []struct {
			Attempt      int
			DelayNS      int64 `json:"delay_ns"`
			MinNS        int64 `json:"min_ns"`
			MaxNS        int64 `json:"max_ns"`
			CumulativeNS int64 `json:"cumulative_ns"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	// Attempt 11: base 1.333333333s·3.7^10 ≈ 7.42 days, jitter [0.5, 1.5).
	last := rep.Rows[10]
	if last.Attempt != 11 || last.DelayNS%int64(time.Second) == 0 || last.MaxNS <= 10*int64(human.Day) {
		t.Fatalf("JSON row %+v: want exact nanoseconds of a delay over 10 days", last)
	}
	lines := strings.Split(text, "\n")
	for _, r := range rep.Rows[:11] {
		line := ""
		for _, l := range lines {
			if strings.HasPrefix(l, strconv.Itoa(r.Attempt)+" ") {
				line = l
			}
		}
		want := human.Range(time.Duration(r.MinNS), time.Duration(r.MaxNS))
		if !strings.Contains(line, want) || !strings.Contains(line, human.Round(time.Duration(r.DelayNS))) {
			t.Errorf("attempt %d: line %q lacks range %s or middle %s", r.Attempt, line, want, human.Round(time.Duration(r.DelayNS)))
		}
	}
	for _, want := range []string{"7d10h6m", "[3d17h2m, 11d3h9m]"} { // attempt 11 by hand: 641 166 s ≈ 7d10h6m
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	checkHuman(t, text)

	for _, args := range [][]string{
		{"compare", "--profile", "sidekiq", "--profile", "river"},
		{"schedule", "--profile", "sidekiq", "--limit", "30"},
		{"fit", "--profile", "sidekiq"},
		{"simulate", "--jobs", "3", "--outage", "30h", "--bucket", "1h", "--jitter", "off"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		checkHuman(t, out)
	}
}

var (
	hoursRE    = regexp.MustCompile(`(?:^|[^\d.])(\d+)h`)
	longFracRE = regexp.MustCompile(`\d+m\d+\.\d+s`)
)

// checkHuman fails on "490h17m0s"-style text: 24 hours or more without
// days, or fractions of a second on values of a minute or more.
func checkHuman(t *testing.T, out string) {
	t.Helper()
	for _, m := range hoursRE.FindAllStringSubmatch(out, -1) {
		if h, _ := strconv.Atoi(m[1]); h >= 24 {
			t.Errorf("%q: %d hours without days in\n%s", m[0], h, out)
		}
	}
	if m := longFracRE.FindString(out); m != "" {
		t.Errorf("%q: nanoseconds on a value over a minute in\n%s", m, out)
	}
}
