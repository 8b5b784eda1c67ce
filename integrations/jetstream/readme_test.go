package jetstreamretry_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/errmatch"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// readmeExample is the example's README, checked with this module's.
const readmeExample = "../../examples/jetstream/README.md"

// readmeMain is the repository's README: its go blocks that use this
// package are checked too.
const readmeMain = "../../README.md"

// readmeSnippetInstall is the README's "The lines you add".
func readmeSnippetInstall(ctx context.Context, js jetstream.JetStream, stream jetstream.Stream, policyJSON string, handle jetstreamretry.HandlerFunc) error {
	rk, err := jetstreamretry.Parse([]byte(policyJSON), jetstreamretry.WithDeadLetter(js, "dlq.orders"))
	if err != nil {
		return err
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers"}))
	if err != nil {
		return err
	}
	_, err = cons.Consume(rk.Handler(ctx, handle)) // or rk.Process(ctx, msg, handle) in a Fetch loop
	return err
}

// readmeSnippetClassify is the README's handler error.
func readmeSnippetClassify() error {
	return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
}

// The install snippet runs against a real server: the message published
// is handled through the plugin.
func TestReadmeSnippetsRun(t *testing.T) {
	if typ, code, ok := errmatch.Classify(readmeSnippetClassify()); !ok || typ != "payment.declined" || code != errmatch.CodeDeadLetter {
		t.Errorf("Classify: %q %q %v", typ, code, ok)
	}
	nodes := startNodes(t, 1)
	_, js := connect(t, nodes...)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "README", Subjects: []string{"readme.>"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 1)
	err := readmeSnippetInstall(ctx, js, stream, `{"max_attempts":2}`, func(context.Context, jetstream.Msg) error { done <- struct{}{}; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "readme.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := readmeSnippetInstall(ctx, js, stream, `{"max_attempts":-1}`, nil); err == nil {
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
				if strings.Contains(b, "jetstreamretry.") {
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
