package retrykit_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is a front page: what retrykit is, the two set-up commands with
// how long the tests take, one quick start and a map of the guides. The rest
// lives in docs/, one guide per journey, and the map links each.
func TestReadmeIsAFrontPage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	if n := strings.Count(text, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; a front page has at most 250 (move the detail to a guide in docs/)", n)
	}
	_, setup, _ := strings.Cut(text, "\n## Set-up\n")
	setup, _, _ = strings.Cut(setup, "\n## ")
	for _, want := range []string{"go run ./cmd/retrykit schedule", "go test -race ./...", "minutes", "GB"} {
		if !strings.Contains(setup, want) {
			t.Errorf("README.md's Set-up does not say %q", want)
		}
	}
	// The journeys' guides and the references beside them.
	for _, g := range []string{"docs/getting-started.md", "docs/queue-authors.md", "docs/integrations.md",
		"docs/migrating.md", "docs/implementers.md", "docs/fuzzing.md", "docs/servers.md", "docs/layout.md",
		"docs/ci.md", "docs/decisions.md", "docs/benchmarks.md"} {
		if !strings.Contains(text, "("+g+")") {
			t.Errorf("README.md's map does not link %s", g)
		}
	}
}

// mdLink matches an inline markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestMarkdownLinks resolves every relative link of every markdown file in
// the repository, nested modules included: the file or directory must exist,
// and a #fragment into a markdown file must name one of its headings (as
// GitHub makes anchors of them). Links in code blocks and code spans are
// not links.
func TestMarkdownLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	headingsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		if b, err := os.ReadFile(file); err == nil {
			seen := map[string]int{}
			fence := false
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "```") {
					fence = !fence
				}
				if h := strings.TrimLeft(l, "#"); !fence && h != l && strings.HasPrefix(h, " ") {
					s := slug(h)
					if n := seen[s]; n > 0 {
						a[s+"-"+strconv.Itoa(n)] = true
					} else {
						a[s] = true
					}
					seen[s]++
				}
			}
		}
		anchors[file] = a
		return a
	}
	checked := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, l := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				dest := p
				if file != "" {
					dest = filepath.Join(filepath.Dir(p), filepath.FromSlash(file))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: line %d: link %s: no such file", p, i+1, target)
						continue
					}
				}
				if frag != "" && path.Ext(dest) == ".md" && !headingsOf(dest)[frag] {
					t.Errorf("%s: link %s: %s has no heading with anchor #%s", p, target, dest, frag)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Errorf("only %d relative links checked: the scan is broken", checked)
	}
}

// proseLines returns the lines of a markdown text outside fenced code
// blocks, with code spans blanked.
func proseLines(text string) []string {
	var out []string
	fence := false
	span := regexp.MustCompile("`[^`]*`")
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			out = append(out, "")
			continue
		}
		if fence {
			out = append(out, "")
			continue
		}
		out = append(out, span.ReplaceAllString(l, "``"))
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, letters, digits,
// spaces, hyphens and underscores kept, spaces made hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
