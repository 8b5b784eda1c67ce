package retrykit_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
)

// executorGuide is the guide whose executor quick start is
// Example_executorQuickStart.
const executorGuide = "docs/queue-authors.md"

// Example_executorQuickStart is the executor quick start of executorGuide: worker
// mode with two handlers, a failing job and a wait for the queues to
// drain. Its body is the body of main there, line for line
// (TestReadmeExecutorQuickStart checks that, and the imports).
func Example_executorQuickStart() {
	e := executor.New()
	// Two goroutines serve "emails"; "default" is served too (one
	// goroutine) unless WithConcurrency(executor.DefaultQueue, 0) says not.
	w := executor.NewWorker(e, executor.WithConcurrency("emails", 2))
	w.Handle("email.send", func(ctx context.Context, j executor.Job) error {
		return nil // nil acknowledges the job
	})
	w.Handle("invoice.charge", func(ctx context.Context, j executor.Job) error {
		if j.Attempt == 1 {
			return errors.New("gateway timeout") // untyped: retried under the policy
		}
		if strings.Contains(string(j.Args), "stolen") {
			// Typed: "payment.*" is non-retryable, so on_exhaustion applies.
			return errmatch.Wrap(errors.New("card reported stolen"), "payment.card_stolen", "")
		}
		return nil
	})
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}

	retry := []byte(`{"max_attempts": 3, "initial_interval": "PT0.1S",
		"non_retryable_errors": ["payment.*"], "on_exhaustion": "dead_letter"}`)
	for _, s := range []executor.JobSpec{
		{ID: "welcome", Type: "email.send", Queue: "emails", Args: []byte(`{"to": "ada@example.com"}`)},
		{ID: "invoice-1", Type: "invoice.charge", Args: []byte(`{"card": "ok"}`), Retry: retry},
		{ID: "invoice-2", Type: "invoice.charge", Args: []byte(`{"card": "stolen"}`), Retry: retry},
	} {
		if _, err := e.Enqueue(s); err != nil {
			log.Fatal(err)
		}
	}

	// Wait until every job of the served queues has finished, retries
	// included, then stop the worker.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		log.Fatal(err)
	}
	if err := w.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	for _, j := range e.List(executor.Filter{}) {
		state := j.State.String()
		if j.DeadLetter {
			state = "dead-lettered" // state discarded, in the dead letter queue
		}
		fmt.Printf("%s: %s after %d attempt(s)\n", j.ID, state, j.Attempt)
		for _, x := range j.Errors {
			fmt.Printf("  attempt %d failed: %s: %s\n", x.Attempt, x.Type, x.Message)
		}
	}
	// Output:
	// welcome: completed after 1 attempt(s)
	// invoice-1: completed after 2 attempt(s)
	//   attempt 1 failed: executor.handler_error: gateway timeout
	// invoice-2: dead-lettered after 2 attempt(s)
	//   attempt 1 failed: executor.handler_error: gateway timeout
	//   attempt 2 failed: payment.card_stolen: card reported stolen
}

// TestReadmeExecutorQuickStart checks that the "## Executor quick start"
// program of docs/queue-authors.md is Example_executorQuickStart: the same body, the output
// the example checks, and exactly the imports the body uses.
func TestReadmeExecutorQuickStart(t *testing.T) {
	readme, err := os.ReadFile(executorGuide)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Executor quick start")
	if !ok {
		t.Fatalf(`%s has no "## Executor quick start" section`, executorGuide)
	}
	block := between(t, after, "```go\n", "```")
	if !strings.HasPrefix(block, "package main\n") {
		t.Fatalf("the executor quick start's first go block is not a whole program:\n%s", block)
	}
	fset := token.NewFileSet()
	prog, err := parser.ParseFile(fset, executorGuide, block, 0)
	if err != nil {
		t.Fatalf("the guide's program does not parse: %v", err)
	}
	src, err := os.ReadFile("quickstart_executor_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readmeBody := between(t, block, "func main() {\n", "\n}\n")
	exampleBody := between(t, string(src), "func Example_executorQuickStart() {\n", "\n\t// Output:")
	if readmeBody != exampleBody {
		t.Errorf("the guide's executor quick start and Example_executorQuickStart differ:\n--- guide main\n%s\n--- example\n%s", readmeBody, exampleBody)
	}
	printed := between(t, after, "It prints:\n\n```\n", "\n```")
	fn := between(t, string(src), "func Example_executorQuickStart() {\n", "\n}\n")
	var want []string
	for _, l := range strings.Split(textAfter(t, fn, "\t// Output:\n"), "\n") {
		want = append(want, strings.TrimPrefix(l, "\t// "))
	}
	if w := strings.Join(want, "\n"); printed != w {
		t.Errorf("the guide shows the output\n%s\nthe example prints\n%s", printed, w)
	}

	// The guide's program imports exactly the packages its body names.
	var imports []string
	for _, im := range prog.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		imports = append(imports, p)
	}
	file, err := parser.ParseFile(fset, "quickstart_executor_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, im := range file.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		byName[p[strings.LastIndex(p, "/")+1:]] = p
	}
	used := map[string]bool{}
	for _, d := range prog.Decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := s.X.(*ast.Ident); ok && byName[id.Name] != "" {
					used[byName[id.Name]] = true
				}
			}
			return true
		})
	}
	var need []string
	for p := range used {
		need = append(need, p)
	}
	slices.Sort(imports)
	slices.Sort(need)
	if !slices.Equal(imports, need) {
		t.Errorf("the guide's program imports %q, its body uses %q", imports, need)
	}
}

// textAfter returns the text of s after start.
func textAfter(t *testing.T, s, start string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("no %q in\n%s", start, s)
	}
	return rest
}
