package retrykit_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every ```go block of every markdown file of the main module compiles.
// A block is one of:
//
//   - a whole Go file, starting with its package clause: TestSnippetsCompile
//     builds it (go vet, which type-checks test files too) in a fresh module
//     that depends on this clone exactly as the guide's recipe (dependRecipe)
//     tells a reader to;
//   - a fragment, marked on the line before its fence with
//     <!-- snippet: compiled in PATH -->, where PATH (from the repository
//     root) is a Go file that holds the fragment's lines in order (its
//     one-line imports in PATH's import block) and is compiled by its own
//     module's tests (for integrations/..., a nested module's CI step;
//     their readme_test.go files also check these blocks themselves).
//
// A block that is neither fails the test, with a message that says how to
// mark it.
type snippet struct {
	file    string // markdown file, slash-separated, from the root
	line    int    // line of the opening fence
	text    string // the code, without the fences
	harness string // PATH of a fragment, or ""
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

var markerRE = regexp.MustCompile(`^<!-- snippet: compiled in (\S+) -->$`)

// markdownSnippets reads the go blocks of the main module's markdown files:
// every *.md under the root except in nested modules (a directory with its
// own go.mod) and hidden directories.
func markdownSnippets(t *testing.T) []snippet {
	t.Helper()
	var out []snippet
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var cur *snippet
		var body []string
		prev, n := "", 0
		for sc.Scan() {
			n++
			l := sc.Text()
			switch {
			case cur == nil && strings.TrimSpace(l) == "```go":
				cur = &snippet{file: filepath.ToSlash(path), line: n}
				if m := markerRE.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
					cur.harness = m[1]
				}
				body = body[:0]
			case cur != nil && strings.TrimSpace(l) == "```":
				cur.text = strings.Join(body, "\n") + "\n"
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				body = append(body, l)
			}
			if strings.TrimSpace(l) != "" {
				prev = l
			}
		}
		if cur != nil {
			t.Errorf("%s: the go block opened on line %d is not closed", path, cur.line)
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func isWholeFile(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.HasPrefix(l, "package ")
	}
	return false
}

// TestSnippetsMarked checks that every block is a whole file or a fragment
// whose harness holds it, line for line.
func TestSnippetsMarked(t *testing.T) {
	snips := markdownSnippets(t)
	if len(snips) < 4 {
		t.Fatalf("found %d go blocks in the markdown files; README.md alone has more", len(snips))
	}
	for _, s := range snips {
		switch {
		case s.harness != "":
			checkHarness(t, s)
		case !isWholeFile(s.text):
			t.Errorf("%v: a go block that is not a whole file (no package clause): make it one, or put it in a compiled Go file and mark it with <!-- snippet: compiled in PATH --> on the line before the fence", s)
		}
	}
}

// checkHarness checks that the harness is a compiled Go file (not under
// testdata) whose lines, spaces trimmed, contain the fragment's lines in
// one run.
func checkHarness(t *testing.T, s snippet) {
	t.Helper()
	h := s.harness
	if !strings.HasSuffix(h, ".go") || strings.Contains("/"+h, "/testdata/") || strings.Contains(h, "..") {
		t.Errorf("%v: harness %s is not a compiled Go file of the repository", s, h)
		return
	}
	src, err := os.ReadFile(filepath.FromSlash(h))
	if err != nil {
		t.Errorf("%v: %v", s, err)
		return
	}
	// Lines are compared with spaces trimmed; the fragment's one-line
	// imports (`import x "path"`) are the harness's import block, so they
	// are left out of the comparison.
	trim := func(text string, dropImports bool) []string {
		var ls []string
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" && !(dropImports && strings.HasPrefix(l, "import ") && !strings.HasSuffix(l, "(")) {
				ls = append(ls, l)
			}
		}
		return ls
	}
	frag, file := trim(s.text, true), trim(string(src), false)
	for i := 0; i+len(frag) <= len(file); i++ {
		if strings.Join(file[i:i+len(frag)], "\n") == strings.Join(frag, "\n") {
			return
		}
	}
	t.Errorf("%v: the fragment is not in %s line for line; copy it there (the harness is what compiles)", s, h)
}

// recipeGuide holds the recipe a reader follows to depend on a clone until
// a version is published: the sh block after the recipeMarker line.
const (
	recipeGuide  = "docs/queue-authors.md"
	recipeMarker = "<!-- recipe: "
)

// dependRecipe returns the go commands of the guide's recipe, in order,
// each as its arguments after "go", with the clone's path ($HOME/src/retrykit
// in the guide) replaced by root and trailing comments dropped. The tests
// run exactly these commands, so the guide cannot show a step that fails.
func dependRecipe(t *testing.T, root string) [][]string {
	t.Helper()
	page, err := os.ReadFile(recipeGuide)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), "\n"+recipeMarker)
	if !ok {
		t.Fatalf("%s: no %q line before the recipe", recipeGuide, recipeMarker)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatalf("%s: no sh block after the recipe marker", recipeGuide)
	}
	var cmds [][]string
	for _, l := range strings.Split(block, "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(strings.ReplaceAll(l, "$HOME/src/retrykit", root))
		if len(f) > 1 && f[0] == "go" {
			cmds = append(cmds, f[1:])
		}
	}
	if len(cmds) < 2 || strings.Join(cmds[0][:2], " ") != "mod edit" || strings.Join(cmds[len(cmds)-1], " ") != "doc github.com/retrykit/retrykit/policy.Failure" {
		t.Fatalf("%s: the recipe's go commands are %q: want go mod edit -replace first and go doc github.com/retrykit/retrykit/policy.Failure last", recipeGuide, cmds)
	}
	return cmds
}

// recipeEnv is a reader's environment: the caller's own, proxy settings
// included (GOPROXY, GONOSUMDB, …), with no workspace and the local
// toolchain.
func recipeEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
}

// TestSnippetsCompile builds every whole-file block in a new module that
// depends on this clone through the README's replace recipe (go mod init,
// go mod edit -replace, go mod tidy), then runs go vet ./... on them: a
// compile error or a vet finding in any README snippet fails here.
func TestSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var built []snippet
	for _, s := range markdownSnippets(t) {
		if s.harness != "" || !isWholeFile(s.text) {
			continue
		}
		name := "main.go"
		if strings.Contains(s.text, "\nfunc Test") || strings.Contains(s.text, "\nfunc Fuzz") || strings.Contains(s.text, "\nfunc Example") {
			name = "snippet_test.go"
		} else if !strings.Contains(s.text, "package main\n") {
			name = "snippet.go"
		}
		// The directory names the snippet, so that go vet's messages say
		// where it is: docs_getting_started_md_L41/main.go:12.
		sub := filepath.Join(dir, fmt.Sprintf("%s_L%d", strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(s.file), s.line))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf("// From %v.\n\n%s", s, s.text)
		if err := os.WriteFile(filepath.Join(sub, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		built = append(built, s)
	}
	if len(built) == 0 {
		t.Fatal("no whole-file go blocks found")
	}
	env := recipeEnv()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "init", "example.com/snippets")
	// The guide's recipe, as a reader runs it: replace, require, go doc.
	for _, c := range dependRecipe(t, root) {
		run(c...)
	}
	// The test-only modules the snippets may import (rapid, go-cmp), at
	// this module's versions, so that tidy needs no network: the versions
	// from go.mod, the hashes from go.sum.
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:require\s+)?([a-z0-9.\-]+\.[a-z]+/\S+) (v\S+)`).FindAllStringSubmatch(string(gomod), -1) {
		run("mod", "edit", "-require="+m[1]+"@"+m[2])
	}
	if sum, err := os.ReadFile("go.sum"); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The guide's next step once code imports retrykit.
	run("mod", "tidy")
	cmd := exec.Command(goBin, "vet", "./...")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the markdown snippets %v: %v\n%s", built, err, out)
	}
	t.Logf("%d whole-file snippets compile: %v", len(built), built)
}

// docs/getting-started.md walks the three uses in order, each step one
// command or one snippet (its Go snippets are compiled above).
func TestGettingStarted(t *testing.T) {
	page, err := os.ReadFile("docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	at := 0
	for _, h := range []string{"## 0. Get retrykit", "## 1. Import the library into a queue", "## 2. Test an implementation", "## 3. Fuzz it"} {
		i := strings.Index(text, "\n"+h+"\n")
		if i < at {
			t.Errorf("getting-started: no section %q after the previous one", h)
			continue
		}
		at = i
	}
	// Each shell step is one command (one line, && for a cd).
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		if n := strings.Count(strings.TrimSpace(block[1]), "\n") + 1; n != 1 {
			t.Errorf("getting-started: a shell step of %d lines, want one command:\n%s", n, block[1])
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/getting-started.md)") {
		t.Error("README.md does not link docs/getting-started.md")
	}
}

// TestDependRecipeFreshModule runs the guide's recipe in a new module that
// imports nothing yet, as a reader's machine would: with the caller's proxy
// settings, not GOPROXY=off. No version of retrykit is published, so any
// step that asks the module proxy about github.com/retrykit/retrykit (go
// get, go get @latest) fails there with the proxy's 403 or 404; the recipe
// must reach go doc without one. Then, once the module imports a retrykit
// package, go mod tidy keeps the require line and the program builds.
func TestDependRecipeFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, recipeEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s (GOPROXY=%s): %v\n%s", strings.Join(args, " "), os.Getenv("GOPROXY"), err, out)
		}
		return string(out)
	}
	run("mod", "init", "example.com/fresh")
	var out string
	for _, c := range dependRecipe(t, root) {
		out = run(c...)
	}
	if !strings.Contains(out, "type Failure struct") {
		t.Errorf("go doc, the recipe's last step:\n%s", out)
	}
	const program = "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/retrykit/retrykit/policy\"\n)\n\nfunc main() { fmt.Println(policy.Default().Spec().MaxAttempts) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	run("mod", "tidy")
	if got := strings.TrimSpace(run("run", ".")); got != "3" {
		t.Errorf("a program built through the recipe printed %q, want the default max_attempts 3", got)
	}
}

// Every queue integration (a nested module under integrations/) is named
// where the replace recipe (recipeGuide) and docs/getting-started.md tell
// a reader how to depend on the clone.
func TestRecipeNamesEveryIntegration(t *testing.T) {
	mods, err := filepath.Glob("integrations/*/go.mod")
	if err != nil || len(mods) < 4 {
		t.Fatalf("integration modules: %v %v", mods, err)
	}
	page, err := os.ReadFile(recipeGuide)
	if err != nil {
		t.Fatal(err)
	}
	recipe := string(page)
	i := strings.Index(recipe, "\n## Depending on a clone\n")
	if i < 0 {
		t.Fatalf("%s: no \"## Depending on a clone\"", recipeGuide)
	}
	recipe = recipe[i+1:]
	if j := strings.Index(recipe, "\n## "); j >= 0 {
		recipe = recipe[:j]
	}
	guide, err := os.ReadFile("docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		dir := filepath.ToSlash(filepath.Dir(m))
		for name, text := range map[string]string{recipeGuide + " replace recipe": recipe, "docs/getting-started.md": string(guide)} {
			if !strings.Contains(text, "`"+dir+"`") {
				t.Errorf("%s does not name %s", name, dir)
			}
		}
	}
}
