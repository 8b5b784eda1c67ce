package riverretry_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/river/README.md"

// readmeMain is the repository's README: its go blocks that use this
// package are checked too.
const readmeMain = "../../README.md"

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
	if typ, code, ok := errmatch.Classify(readmeSnippetClassify()); !ok || typ != "payment.declined" || code != errmatch.CodeDeadLetter {
		t.Errorf("Classify: %q %q %v", typ, code, ok)
	}
}

// readmeBlocks returns the ```go blocks of the markdown file at path, import
// lines and the blank lines after them dropped.
func readmeBlocks(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(text)
	for {
		_, after, ok := strings.Cut(rest, "```go\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("%s: unclosed go block", path)
		}
		rest = tail
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
			if len(lines) == 0 && (strings.HasPrefix(l, "import ") || l == "") {
				continue
			}
			lines = append(lines, l)
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
}

// compiledBodies returns the bodies of this file's readme* functions,
// unindented by one tab: the README snippets as compiled code.
func compiledBodies(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "readme_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "readmeSnippet") {
			continue
		}
		body := string(src[int(fn.Body.Lbrace) : int(fn.Body.Rbrace)-1]) // Pos is offset+1
		var lines []string
		for _, l := range strings.Split(strings.Trim(body, "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, "\t"))
		}
		bodies[strings.Join(lines, "\n")] = true
	}
	return bodies
}

// TestReadmeSnippets: every go block of the module's README and of its
// example's README is, line for line, the body of a readmeSnippet function
// of this file, so each snippet compiles (and the tests below run it).
func TestReadmeSnippets(t *testing.T) {
	bodies := compiledBodies(t)
	for _, path := range []string{"README.md", readmeExample, readmeMain} {
		blocks := readmeBlocks(t, path)
		if path == readmeMain {
			var ours []string
			for _, b := range blocks {
				if strings.Contains(b, "riverretry.") {
					ours = append(ours, b)
				}
			}
			blocks = ours
		}
		if len(blocks) == 0 {
			t.Errorf("%s has no go block", path)
		}
		for _, b := range blocks {
			if !bodies[b] {
				t.Errorf("%s: this go block is not compiled by a readmeSnippet function of readme_test.go:\n%s", path, b)
			}
		}
	}
}
