package temporalretry_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/temporal/README.md"

// readmeMain is the repository's README: its go blocks that use this
// package are checked too.
const readmeMain = "../../README.md"

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
				if strings.Contains(b, "temporalretry.") {
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
