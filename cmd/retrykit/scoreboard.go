package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/scoreboard"
)

func init() {
	commands["scoreboard"] = command{
		summary: "build a static site from a directory of JSON conformance reports: an index, a page with history and a badge per implementation",
		run:     runScoreboard,
	}
}

const scoreboardUsage = `usage: retrykit scoreboard DIR -o SITE

Reads every JSON report under DIR (files of "retrykit conformance --format
json", library or --server; sub-directories included) and writes a static
site to SITE:

  index.html          one table per suite version, one row per
                      implementation (its latest report), one column per
                      requirement group, each cell linking to the evidence
  impl/NAME.html      an implementation's page: per suite version, its
                      history (chart and table) and latest causes
  badges/NAME.svg     its badge: the MUST score of its latest report, per
                      suite version
  reports/NAME/*.html every report as a page (the conformance HTML format)

Reports are grouped by implementation (implementation.implementation in the
report) and suite version; reports of different suite versions are never
added into one score. History runs in the order of the implementation's
version (numbers compared as numbers; a SemVer pre-release such as
1.0.0-rc.1 before its release), then the file name: name files so that
they sort (a date, or a commit count). A JSON file {"kind": "sdk-interop", "against": …, "source":
…, "rows": [{"name", "works", "fails"}]} is a table of clients tried by hand
against a server; the index shows it as it is, with no score. Other valid
JSON files (of any shape), and a file with the same bytes as one read
before (a copy, a symbolic link), are left out with a warning naming them;
symbolic links to directories are not followed.
Pages have their style inline and no script.

Exit status: 0 when the site is written, 2 on bad usage, an unreadable file,
a file that is not valid JSON (cut short), a report whose scores are not
those its results give (edited), or a directory without reports: the
error names the file and why.

flags:
`

func runScoreboard(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("scoreboard", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), scoreboardUsage)
		writeFlags(fset.Output(), fset)
	}
	if helpRequested(args) {
		fset.SetOutput(stdout)
	}
	out := fset.String("o", "", "directory to write the site to (created if missing)")
	// DIR may come before the flags, as the usage line shows it.
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := parseTerse(fset, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "retrykit scoreboard: %s\n", msg)
		return 2
	}
	rest := fset.Args()
	if dir == "" && len(rest) > 0 {
		dir, rest = rest[0], rest[1:]
	}
	switch {
	case len(rest) > 0:
		return fail(fmt.Sprintf("unexpected argument %q (one DIR)", rest[0]))
	case dir == "":
		return fail("give the directory of reports (DIR)")
	case *out == "":
		return fail("-o: give the directory to write the site to")
	}
	if msg := checkDir("DIR", dir); msg != "" {
		return fail(msg)
	}
	if abs, err := filepath.Abs(*out); err == nil {
		if d, err := filepath.Abs(dir); err == nil {
			switch sep := string(filepath.Separator); {
			case abs == d || strings.HasPrefix(d, abs+sep):
				return fail(fmt.Sprintf("-o %s: holds DIR; write the site elsewhere", *out))
			case strings.HasPrefix(abs, d+sep):
				// the site's copies of the reports would be read as reports next time
				return fail(fmt.Sprintf("-o %s: is inside DIR; write the site elsewhere", *out))
			}
		}
	}
	if fi, err := os.Stat(*out); err == nil && !fi.IsDir() {
		return fail(fmt.Sprintf("-o: %s is not a directory", *out))
	}
	b, err := scoreboard.Load(os.DirFS(dir), ".")
	var re *scoreboard.ReportError
	switch {
	case errors.As(err, &re):
		// the file as the user would open it, not its path inside DIR
		return fail(filepath.Join(dir, filepath.FromSlash(re.Path)) + ": " + re.Reason)
	case errors.Is(err, scoreboard.ErrNoReports):
		return fail(fmt.Sprintf("no conformance report found in %s (files of `retrykit conformance --format json`)", dir))
	case err != nil:
		return fail(strings.TrimPrefix(err.Error(), "scoreboard: "))
	}
	if err := scoreboard.Write(b, *out); err != nil {
		return fail(strings.TrimPrefix(err.Error(), "scoreboard: "))
	}
	reports := 0
	for _, im := range b.Implementations {
		for _, s := range im.Suites {
			reports += len(s.Reports)
		}
	}
	for _, s := range b.Skipped {
		fmt.Fprintf(stderr, "retrykit scoreboard: left out %s\n", filepath.Join(dir, filepath.FromSlash(s)))
	}
	fmt.Fprintf(stdout, "wrote %s: %d implementations, %d reports\n", filepath.Join(*out, "index.html"), len(b.Implementations), reports)
	return 0
}
