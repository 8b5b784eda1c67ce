package riverretry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
	"github.com/retrykit/retrykit/internal/readmecheck"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/river/README.md"

// readmeMain is the repository's integrations guide: its go blocks that
// use this package are checked too.
const readmeMain = "../../docs/integrations.md"

// readmeSnippetInstall is the README's "The lines you add".
func readmeSnippetInstall(config *river.Config, policyJSON string) error {
	rk, err := riverretry.Parse([]byte(policyJSON)) // or riverretry.New(p) with a *policy.Policy
	if err != nil {
		return err
	}
	rk.Install(config) // RetryPolicy = rk, Plugins += rk (insert hook + worker middleware)
	return nil
}

// readmeSnippetClassify is the README's worker error.
func readmeSnippetClassify() error {
	return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
}

// readmeSnippetSnooze is the README's snooze.
func readmeSnippetSnooze() error {
	return errmatch.Snoozed(30 * time.Second) // not ready yet: River runs it again, attempt unchanged
}

// The snippets do what the README says.
func TestReadmeSnippetsRun(t *testing.T) {
	config := &river.Config{}
	if err := readmeSnippetInstall(config, `{"max_attempts":5}`); err != nil {
		t.Fatal(err)
	}
	rk, ok := config.RetryPolicy.(*riverretry.Plugin)
	if !ok || len(config.Plugins) != 1 || rk.Policy(nil).Spec().MaxAttempts != 5 {
		t.Errorf("Install: RetryPolicy %T, %d plugins", config.RetryPolicy, len(config.Plugins))
	}
	if err := readmeSnippetInstall(config, `{"max_attempts":-1}`); err == nil {
		t.Error("an invalid policy was accepted")
	}
	if r := errmatch.RequestOf(readmeSnippetSnooze()); r.Kind != errmatch.Snooze || r.Delay != 30*time.Second {
		t.Errorf("snooze snippet: %+v", r)
	}
	if typ, code, ok := errmatch.Classify(readmeSnippetClassify()); !ok || typ != "payment.declined" || code != errmatch.CodeDeadLetter {
		t.Errorf("Classify: %q %q %v", typ, code, ok)
	}
}

// TestReadmeSnippets: every go block of the module's README and of its
// example's README, and each block of docs/integrations.md that uses
// this package, is line for line the body of a readmeSnippet function of
// this file, so each snippet compiles (and the tests above run it).
func TestReadmeSnippets(t *testing.T) {
	bodies, err := readmecheck.Compiled("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct{ path, contains string }{
		{"README.md", ""}, {readmeExample, ""}, {readmeMain, "riverretry."},
	} {
		missing, err := readmecheck.Missing(bodies, src.path, src.contains)
		if err != nil {
			t.Error(err)
		}
		for _, b := range missing {
			t.Errorf("%s: this go block is not compiled by a readmeSnippet function of readme_test.go:\n%s", src.path, b)
		}
	}
}
