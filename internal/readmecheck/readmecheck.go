// Package readmecheck ties the Go snippets of markdown files to code that
// a test compiles, so that a README cannot show code that no longer builds.
//
// A snippet is a ```go block. [Snippets] reads the blocks of a file,
// dropping the import lines it starts with (they belong in the test file's
// import block). [Compiled] reads the bodies of the functions named
// readmeSnippet… in a Go test file. A test asserts that every snippet is
// one of those bodies, line for line; the compiler then checks the
// snippet, and the test can run it. The nested modules (the integrations)
// use it from their readme_test.go, with the repository's README too.
//
// Inputs are the repository's own files: the package reads them whole.
package readmecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

// Prefix starts the name of every function whose body [Compiled] returns.
const Prefix = "readmeSnippet"

// Snippets returns the ```go blocks of the markdown file at path, each
// without the import lines and blank lines it starts with, in order. With a
// non-empty contains, only blocks holding that text are returned.
func Snippets(path, contains string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var blocks []string
	rest := string(text)
	for {
		_, after, ok := strings.Cut(rest, "```go\n")
		if !ok {
			return blocks, nil
		}
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			return nil, fmt.Errorf("readmecheck: %s: a go block is not closed", path)
		}
		rest = tail
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
			if len(lines) == 0 && (strings.HasPrefix(l, "import ") || l == "") {
				continue
			}
			lines = append(lines, l)
		}
		if b := strings.Join(lines, "\n"); contains == "" || strings.Contains(b, contains) {
			blocks = append(blocks, b)
		}
	}
}

// Compiled returns the bodies of the functions of the Go file at path whose
// names start with [Prefix], each unindented by one tab: the snippets as the
// compiler sees them.
func Compiled(path string) (map[string]bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	bodies := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, Prefix) {
			continue
		}
		from, to := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
		var lines []string
		for _, l := range strings.Split(strings.Trim(string(src[from:to]), "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, "\t"))
		}
		bodies[strings.Join(lines, "\n")] = true
	}
	return bodies, nil
}

// Missing returns the snippets of the markdown file at path (those holding
// contains, when it is not empty) that are not among bodies, and an error
// when the file holds no such snippet at all.
func Missing(bodies map[string]bool, path, contains string) ([]string, error) {
	blocks, err := Snippets(path, contains)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("readmecheck: %s has no go block to check", path)
	}
	var missing []string
	for _, b := range blocks {
		if !bodies[b] {
			missing = append(missing, b)
		}
	}
	return missing, nil
}
