package temporalretry_test

import (
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
	"github.com/retrykit/retrykit/internal/readmecheck"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/temporal/README.md"

// readmeMain is the repository's integrations guide: its go blocks that
// use this package are checked too.
const readmeMain = "../../docs/integrations.md"

// readmeSnippetInstall is the README's "lines you add".
func readmeSnippetInstall(c client.Client, policyJSON string) error {
	rk, err := temporalretry.Parse([]byte(policyJSON)) // or temporalretry.New(p, opts...)
	if err != nil {
		return err
	}
	w := worker.New(c, "queue", worker.Options{Interceptors: []interceptor.WorkerInterceptor{rk}})
	return w.Run(worker.InterruptCh())
}

// An invalid policy stops the snippet before any worker starts (the
// snippet with a server runs in servertest's example).
func TestReadmeSnippetsRun(t *testing.T) {
	if err := readmeSnippetInstall(nil, `{"max_attempts":-1}`); err == nil {
		t.Error("an invalid policy was accepted")
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
		{"README.md", ""}, {readmeExample, ""}, {readmeMain, "temporalretry."},
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
