package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadRow is one row of the load report.
type loadRow struct {
	perJob            float64
	peak              float64
	at                string
	retryPeak         float64
	retryAt           string
	completed, exh, r int
}

// loadRows reads the load report's table, keyed "mode/budget".
func loadRows(t *testing.T, out string) map[string]loadRow {
	t.Helper()
	rows := map[string]loadRow{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "jitter" {
			in = true
			continue
		}
		if !in || len(f) != 10 {
			continue
		}
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			return v
		}
		rows[f[0]+"/"+f[1]] = loadRow{perJob: num(f[2]), peak: num(f[3]), at: f[4], retryPeak: num(f[5]), retryAt: f[6],
			completed: int(num(f[7])), exh: int(num(f[8])), r: int(num(f[9]))}
	}
	return rows
}

// Without jitter, failure rate 1 and no budget, the load has a closed
// form: a job arriving at a fails at a + 2^k − 1 for every k ≥ 0 with
// that instant before the outage's end (delays 1s, 2s, 4s, … from the
// default 1s×2), then succeeds once; jobs arriving after the outage make
// one attempt. The peak second is the one where the most retry waves
// land on top of the arrivals.
func TestLoadWithoutJitterMatchesClosedForm(t *testing.T) {
	code, out, errOut := runCLI(t, "", "simulate", "--clients", "100", "--outage", "60s", "--modes", "off", "--budget", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	attempts, jobs := 0, 0
	perSecond := map[int]int{}
	for s := 0; s < 120; s++ {
		for c := 0; c < 100; c++ {
			a := float64(s) + float64(c)/100
			jobs++
			for k := 0; ; k++ {
				at := a + math.Exp2(float64(k)) - 1
				if k == 0 {
					at = a
				}
				attempts++
				perSecond[int(at)]++
				if at >= 60 {
					break
				}
			}
		}
	}
	pk := 0
	for _, v := range perSecond {
		pk = max(pk, v)
	}
	row := loadRows(t, out)["off/none"]
	if want := float64(attempts) / float64(jobs); math.Abs(row.perJob-want) > 0.0005 || row.completed != jobs || row.exh != 0 {
		t.Fatalf("attempts/job %v (want %.3f), completed %d of %d\n%s", row.perJob, want, row.completed, jobs, out)
	}
	if row.peak != float64(pk) || row.at != "31s" || pk != 600 {
		t.Fatalf("peak %v at %s, want %d at 31s\n%s", row.peak, row.at, pk, out)
	}
	if !strings.Contains(out, "12000 jobs, 100 jobs/s") {
		t.Fatalf("no job count in\n%s", out)
	}
}

// A token bucket of 50 tokens that never refills pays for exactly 50
// retries however long the outage: every job's attempts are its first
// plus at most the retries the bucket paid for, and each job ends once.
func TestLoadTokenBucketPaysForItsCapacity(t *testing.T) {
	code, out, errOut := runCLI(t, "", "simulate", "--clients", "10", "--outage", "30s", "--until", "60s",
		"--modes", "off", "--budget", `{"token_bucket": {"capacity": 50}}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := loadRows(t, out)
	with := rows["off/yes"]
	jobs := 600
	if got := with.perJob * float64(jobs); math.Abs(got-float64(jobs+50)) > 0.5 {
		t.Fatalf("attempts %v, want %d jobs + 50 retries\n%s", got, jobs, out)
	}
	if with.completed+with.exh+with.r != jobs || with.r == 0 {
		t.Fatalf("jobs ended %d+%d+%d, want %d\n%s", with.completed, with.exh, with.r, jobs, out)
	}
	if none := rows["off/none"]; none.perJob <= with.perJob || none.r != 0 {
		t.Fatalf("without a budget: %+v, with: %+v", none, with)
	}
}

// A ratio budget holds the retries near ratio × first attempts plus the
// floor: 100 first attempts per second with ratio 0.1 and a floor of 1/s
// allow about 11 retries per second, so a 60 s outage adds about 660.
func TestLoadRatioBudgetBoundsRetries(t *testing.T) {
	code, out, errOut := runCLI(t, "", "simulate", "--clients", "100", "--outage", "60s", "--until", "120s",
		"--modes", "off", "--budget", `{"ratio": {"ratio": 0.1, "min_per_second": 1, "window": "PT10S"}}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := loadRows(t, out)["off/yes"]
	retries := row.perJob*12000 - 12000
	// Windows of 10 s: at most 0.1 × 1000 + 10 = 110 retries each; the
	// outage spans six, plus the one its last retries land in.
	if retries < 600 || retries > 7*110 {
		t.Fatalf("%v retries through a 60 s outage under ratio 0.1 + 1/s\n%s", retries, out)
	}
}

// A failure rate p makes a first attempt fail with probability p: with
// max_attempts 2 and an outage longer than the run, a job makes 1 + p
// attempts on average (10 000 jobs: the standard error is 0.005).
func TestLoadFailureRateIsAProbability(t *testing.T) {
	for _, p := range []string{"0", "0.25", "1"} {
		code, out, errOut := runCLI(t, "", "simulate", "--clients", "1000", "--every", "1s", "--until", "10s", "--outage", "1h",
			"--policy", `{"max_attempts": 2}`, "--failure-rate", p, "--modes", "off", "--budget", "none")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		want, _ := strconv.ParseFloat(p, 64)
		if got := loadRows(t, out)["off/none"].perJob; math.Abs(got-(1+want)) > 0.03 {
			t.Errorf("failure rate %s: %v attempts/job, want about %v", p, got, 1+want)
		}
	}
}

// The same seed gives the same report and chart, byte for byte; another
// seed another run when something is random.
func TestLoadIsDeterministicWithSeed(t *testing.T) {
	dir := t.TempDir()
	args := func(seed, svg string) []string {
		return []string{"simulate", "--clients", "50", "--outage", "20s", "--failure-rate", "0.7", "--modes", "proportional",
			"--seed", seed, "--svg", filepath.Join(dir, svg)}
	}
	_, a, _ := runCLI(t, "", args("3", "a.svg")...)
	_, b, _ := runCLI(t, "", args("3", "b.svg")...)
	_, c, _ := runCLI(t, "", args("4", "c.svg")...)
	if a != b || a == c {
		t.Fatalf("seed 3 twice equal: %v; seed 4 differs: %v\n%s\n%s", a == b, a != c, a, c)
	}
	sa, _ := os.ReadFile(filepath.Join(dir, "a.svg"))
	sb, _ := os.ReadFile(filepath.Join(dir, "b.svg"))
	if string(sa) != string(sb) || !strings.Contains(string(sa), "attempts/job") {
		t.Fatal("the chart differs between two runs of one seed, or shows no figures")
	}
}

// Load flags are refused with a reason before anything runs.
func TestLoadBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		has  string
	}{
		{[]string{"--clients", "-1"}, "--clients must be between 1 and 100000"},
		{[]string{"--clients", "200000"}, "--clients must be between"},
		{[]string{"--clients", "10", "--every", "0s"}, "--every must be between"},
		{[]string{"--clients", "10", "--until", "-1s"}, "--until must be between"},
		{[]string{"--clients", "100000", "--every", "1ms", "--until", "1h"}, "more than 1000000"},
		{[]string{"--clients", "10", "--failure-rate", "1.5"}, "--failure-rate must be between 0 and 1"},
		{[]string{"--clients", "10", "--failure-rate", "NaN"}, "--failure-rate must be between 0 and 1"},
		{[]string{"--clients", "10", "--modes", "off,random"}, `"random" is not a jitter mode`},
		{[]string{"--clients", "10", "--budget", `{"leaky": {}}`}, "--budget: retrybudget: retry_budget.leaky: unknown member"},
		{[]string{"--clients", "10", "--budget", ""}, "--budget is empty"},
		{[]string{"--clients", "10", "--budget", "/no/such/file"}, "--budget: open /no/such/file"},
		{[]string{"--clients", "10", "--jobs", "5"}, "--jobs belongs to the herd model"},
		{[]string{"--clients", "10", "--jitter", "on"}, "--jitter belongs to the herd model"},
		{[]string{"--every", "2s"}, "--every belongs to the load model"},
		{[]string{"--budget", "none"}, "--budget belongs to the load model"},
		{[]string{"--clients", "10", "--bucket", "1ms", "--outage", "1000h", "--until", "10s", "--modes", "off"}, "is too narrow"},
		{[]string{"--clients", "1000", "--outage", "1000h", "--until", "1000s", "--policy", `{"max_attempts": 100000}`, "--modes", "off"}, "attempts per run"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"simulate"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.has) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args, code, out, errOut, c.has)
		}
	}
}

// One job through a 60 s outage under each jitter mode, against the
// formulas of docs/extensions.md §3.4 written out here, with the jitter
// draws taken from PCG(seed, 2) in order as the help says: the attempts
// the job makes and the instant of its last one are the model's.
func TestLoadJitterModesFollowTheFormulas(t *testing.T) {
	I, M := time.Second, 5*time.Minute
	for i := 0; i < 32; i++ {
		mode, seed := []string{"proportional", "full", "equal", "decorrelated"}[i%4], uint64(i)
		src := rand.New(rand.NewPCG(seed, 2))
		at, prev, attempts := time.Duration(0), time.Duration(0), 1
		for n := 1; at < 60*time.Second; n++ {
			b := min(I<<(n-1), M)
			r := src.Float64()
			var d time.Duration
			switch mode {
			case "proportional":
				d = min(time.Duration(float64(b)*(0.5+r)), M)
			case "full":
				d = time.Duration(float64(b) * r)
			case "equal":
				d = b/2 + time.Duration(float64(b/2)*r)
			case "decorrelated":
				p := max(prev, I)
				d = min(M, I+time.Duration(r*float64(3*p-I)))
			}
			at, prev = at+d, d
			attempts++
		}
		code, out, errOut := runCLI(t, "", "simulate", "--clients", "1", "--every", "1h", "--until", "1ns", "--outage", "60s",
			"--modes", mode, "--budget", "none", "--seed", strconv.FormatUint(seed, 10))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, errOut)
		}
		row := loadRows(t, out)[mode+"/none"]
		if row.perJob != float64(attempts) {
			t.Errorf("%s, seed %d: %v attempts, the formulas give %d\n%s", mode, seed, row.perJob, attempts, out)
		}
	}
}

// --json gives the figures of the text report, per run, exactly.
func TestLoadJSONMatchesTheText(t *testing.T) {
	args := []string{"simulate", "--clients", "100", "--outage", "60s", "--modes", "off,full", "--seed", "5"}
	_, text, _ := runCLI(t, "", args...)
	code, out, errOut := runCLI(t, "", append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Clients int `json:"clients"`
		Runs    []struct {
			Jitter         string  `json:"jitter"`
			Budget         string  `json:"budget"`
			Jobs           int     `json:"jobs"`
			Attempts       int     `json:"attempts"`
			AttemptsPerJob float64 `json:"attempts_per_job"`
			Peak           float64 `json:"peak_attempts_per_second"`
			Refused        int     `json:"refused_by_budget"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	rows := loadRows(t, text)
	if rep.Clients != 100 || len(rep.Runs) != 4 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Runs {
		key := r.Jitter + "/" + budgetColumn(r.Budget)
		row := rows[key]
		if math.Abs(row.perJob-r.AttemptsPerJob) > 0.0005 || row.peak != r.Peak || row.r != r.Refused ||
			r.AttemptsPerJob != float64(r.Attempts)/float64(r.Jobs) || r.Jobs != 12000 {
			t.Errorf("%s: JSON %+v, text %+v", key, r, row)
		}
	}
	if code, _, errOut := runCLI(t, "", "simulate", "--json"); code != 2 || !strings.Contains(errOut, "--json belongs to the load model") {
		t.Errorf("--json without --clients: exit %d, %q", code, errOut)
	}
}
