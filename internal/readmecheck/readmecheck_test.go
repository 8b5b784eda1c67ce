package readmecheck_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrykit/retrykit/internal/readmecheck"
)

// write puts text in a file of a fresh directory.
func write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const md = "# Use\n\n```go\nimport x \"example.com/x\"\n\nerr := x.Do()\nreturn err\n```\n\ntext\n\n```go\nreturn y.Other()\n```\n"

const goFile = `package p

func readmeSnippetDo() error {
	err := x.Do()
	return err
}

func other() error {
	return y.Other()
}
`

func Example() {
	dir, _ := os.MkdirTemp("", "readmecheck")
	defer os.RemoveAll(dir)
	mdPath := filepath.Join(dir, "README.md")
	goPath := filepath.Join(dir, "readme_test.go")
	_ = os.WriteFile(mdPath, []byte(md), 0o644)
	_ = os.WriteFile(goPath, []byte(goFile), 0o644)

	bodies, _ := readmecheck.Compiled(goPath)
	missing, _ := readmecheck.Missing(bodies, mdPath, "")
	fmt.Printf("%d snippet not compiled:\n%s\n", len(missing), missing[0])
	// Output:
	// 1 snippet not compiled:
	// return y.Other()
}

// A snippet changed by one character is reported; a filter keeps only the
// blocks that hold its text; an unclosed block and a file without blocks
// are errors.
func TestMissing(t *testing.T) {
	dir := t.TempDir()
	g := write(t, dir, "a_test.go", goFile)
	bodies, err := readmecheck.Compiled(g)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("Compiled: %v, %v", bodies, err)
	}
	ok := write(t, dir, "ok.md", "```go\nimport x \"example.com/x\"\n\nerr := x.Do()\nreturn err\n```\n")
	if m, err := readmecheck.Missing(bodies, ok, ""); err != nil || len(m) != 0 {
		t.Errorf("matching snippet: missing %q, %v", m, err)
	}
	bad := write(t, dir, "bad.md", "```go\nerr := x.Do()\nreturn  err\n```\n")
	if m, err := readmecheck.Missing(bodies, bad, ""); err != nil || len(m) != 1 {
		t.Errorf("changed snippet: missing %q, %v", m, err)
	}
	both := write(t, dir, "both.md", md)
	if m, err := readmecheck.Missing(bodies, both, "x.Do"); err != nil || len(m) != 0 {
		t.Errorf("filtered: missing %q, %v", m, err)
	}
	if _, err := readmecheck.Missing(bodies, both, "nothing-like-this"); err == nil {
		t.Error("a filter that keeps no block is not an error")
	}
	open := write(t, dir, "open.md", "```go\nreturn nil\n")
	if _, err := readmecheck.Snippets(open, ""); err == nil {
		t.Error("an unclosed block is not an error")
	}
}
