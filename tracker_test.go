package retrykit_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// trackerRefRE finds a reference to an internal tracker's numbered ticket:
// the word for a ticket followed by a number, with an optional space,
// dash, underscore or hash between them. A public upstream link such as
// golang/go#75804 or .../issues/123 does not match. The expression is
// spelled so that this file's own text does not match it.
var trackerRefRE = regexp.MustCompile(`(?i)\bissues?[ _-]?#?[0-9]+`)

// repositoryFiles lists the files of the repository, slash-separated from
// the root: the tracked ones when git is there, else every file under the
// root outside .git and node_modules.
func repositoryFiles(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command("git", "ls-files", "-z").Output()
		if err == nil && len(out) > 0 {
			var files []string
			for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
				if f != "" {
					files = append(files, f)
				}
			}
			return files
		}
	}
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoTrackerReferences pins that no file name, comment, doc, test name
// or CI step refers to a numbered ticket of an issue tracker: a reader of
// the repository has no tracker, so each test and comment is named by the
// behaviour it pins.
func TestNoTrackerReferences(t *testing.T) {
	files := repositoryFiles(t)
	if len(files) < 10 {
		t.Fatalf("only %d files found from %s: not the repository root", len(files), mustGetwd(t))
	}
	found := 0
	for _, f := range files {
		if loc := trackerRefRE.FindStringIndex(f); loc != nil {
			t.Errorf("%s: file name refers to a ticket (%q): name it by what it holds", f, f[loc[0]:loc[1]])
			found++
		}
		b, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			if loc := trackerRefRE.FindStringIndex(line); loc != nil {
				t.Errorf("%s:%d: refers to a ticket (%q): say the behaviour instead", f, i+1, line[loc[0]:loc[1]])
				found++
			}
		}
	}
	if found > 0 {
		t.Logf("%d references to tickets", found)
	}
}

// TestTrackerRefPattern checks the pattern on the forms it must catch and
// the public upstream references it must leave alone.
func TestTrackerRefPattern(t *testing.T) {
	// The forms are assembled from parts so that this file does not
	// contain them literally.
	word := "iss" + "ue"
	for _, s := range []string{
		word + " 11", strings.ToUpper(word[:1]) + word[1:] + " 20 A", word + "20_test.go", "the " + word + "-11 policy", word + " #12", "(" + word + "s 3 and 4)",
	} {
		if !trackerRefRE.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{
		"golang/go#75804", "grpc/proposal#452", "https://github.com/o/r/" + word + "s/123", word + "s are welcome", "tissue 5",
	} {
		if trackerRefRE.MatchString(s) {
			t.Errorf("%q is caught", s)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
