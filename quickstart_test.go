package retrykit_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// Example_quickStart is the README's quick start program: its body is the
// body of main there, line for line (TestReadmeQuickStart checks that), so
// the program the README shows compiles and prints what is below.
func Example_quickStart() {
	// 1. Parse an OJS retry policy: strict, every bad field is named.
	p, err := policy.Parse([]byte(`{"max_attempts": 4, "initial_interval": "PT10S",
		"non_retryable_errors": ["auth.*"], "on_exhaustion": "dead_letter"}`))
	if err != nil {
		log.Fatal(err)
	}

	// 2. The schedule: the delay after each attempt that is retried (attempts
	// 1 to max_attempts − 1: three here; the 4th failure is on_exhaustion's),
	// and the range jitter puts it in (inclusive, as everywhere in retrykit).
	for attempt, delay := range p.Schedule(backoff.Fixed(0.5)) { // middle (r = 0.5): the base delay
		lo, hi := p.Backoff().Bounds(attempt)
		fmt.Printf("attempt %d fails: retry in %v, jittered into [%v, %v]\n", attempt, delay, lo, hi)
	}

	// 3. Decide after a failure. The source is seeded so that this run is
	// reproducible; use backoff.Random() in production.
	src := backoff.NewPCG(1, 2)
	d, err := p.Decide(policy.Failure{Attempt: 2, ErrorType: "external.timeout"}, src)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Action, d.Delay, d.Reason)

	// 4. errmatch: a handler tags its Go error with an OJS error type (and
	// optionally a code); Classify reads them back for the decision.
	herr := errmatch.Wrap(errors.New("token expired"), "auth.token_expired", "")
	typ, code, _ := errmatch.Classify(herr)
	d, _ = p.Decide(policy.Failure{Attempt: 1, ErrorType: typ, Code: code}, src)
	fmt.Println(typ, p.Matcher().Match(typ), d.Action, d.Reason)
	// Output:
	// attempt 1 fails: retry in 10s, jittered into [5s, 14.999999999s]
	// attempt 2 fails: retry in 20s, jittered into [10s, 29.999999999s]
	// attempt 3 fails: retry in 40s, jittered into [20s, 59.999999999s]
	// retry 23.529113193s retry
	// auth.token_expired true dead_letter non_retryable
}

// The README's quick start is exactly Example_quickStart: the body of its
// main function equals the body of the example, so the README program
// compiles, runs and prints the example's output.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Quick start")
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 || !strings.HasPrefix(block, "package main\n") {
		t.Fatalf("the quick start's first go block is not a whole program:\n%s", block)
	}
	readmeBody := between(t, block, "func main() {\n", "\n}\n")

	src, err := os.ReadFile("quickstart_test.go")
	if err != nil {
		t.Fatal(err)
	}
	exampleBody := between(t, string(src), "func Example_quickStart() {\n", "\n\t// Output:")
	if readmeBody != exampleBody {
		t.Errorf("README quick start and Example_quickStart differ:\n--- README main\n%s\n--- Example_quickStart\n%s", readmeBody, exampleBody)
	}
	// The output the README shows is the example's checked output.
	printed := between(t, after, "It prints:\n\n```\n", "\n```")
	var want []string
	for _, l := range strings.Split(between(t, string(src), "\t// Output:\n", "\n}"), "\n") {
		want = append(want, strings.TrimPrefix(l, "\t// "))
	}
	if printed != strings.Join(want, "\n") {
		t.Errorf("README shows the output\n%s\nthe example prints\n%s", printed, strings.Join(want, "\n"))
	}
	for _, imp := range []string{`"github.com/retrykit/retrykit/backoff"`, `"github.com/retrykit/retrykit/errmatch"`, `"github.com/retrykit/retrykit/policy"`, `"errors"`, `"fmt"`, `"log"`} {
		if !strings.Contains(block, imp) {
			t.Errorf("README quick start does not import %s", imp)
		}
	}
}

// between returns the text of s between start and end.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, start)
	body, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("no %q … %q in\n%s", start, end, s)
	}
	return body
}
