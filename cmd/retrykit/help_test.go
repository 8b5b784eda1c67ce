package main

import (
	"flag"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// Every command's help is in the one style (help.go): the usage line and
// the flags section write flags with two dashes (one for a one-letter
// flag), each entry is "  --name PLACEHOLDER" with its description from
// one column, wrapped within 80 columns, without tabs. Help came in three
// styles: schedule listed "-profile string" under a usage line that said
// "--profile", compare wrote "--profile NAME", serve "--addr<TAB>".
func TestHelpOneStyle(t *testing.T) {
	var cmds [][]string
	for name := range commands {
		cmds = append(cmds, []string{name, "--help"})
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i][0] < cmds[j][0] })
	cmds = append(cmds, []string{"conformance", "--server", "x", "--help"}, []string{"help", "--help"})
	entry := regexp.MustCompile(`^  (--[a-z][a-z0-9-]+|-[a-z])( [A-Z][A-Z0-9:|=.,]*| real\|manual)?( {2,}\S.*)?$`)
	cont := regexp.MustCompile(`^ {24}\S`)
	singleDash := regexp.MustCompile(`(^|[\s\[(|])-[a-z][a-z-]+`)
	withFlags := 0
	for _, args := range cmds {
		code, out, errOut := runCLI(t, "", args...)
		name := strings.Join(args[:len(args)-1], " ")
		if code != 0 || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, errOut)
			continue
		}
		if strings.Contains(out, "\t") {
			t.Errorf("%s --help: a tab in the help", name)
		}
		first, _, _ := strings.Cut(out, "\n")
		if m := singleDash.FindString(first); m != "" {
			t.Errorf("%s --help: the usage line writes %q with one dash: %s", name, strings.TrimSpace(m), first)
		}
		_, flags, ok := strings.Cut(out, "\nflags:\n")
		if !ok {
			continue
		}
		withFlags++
		entries := 0
		for i, line := range strings.Split(strings.TrimRight(flags, "\n"), "\n") {
			switch {
			case entry.MatchString(line):
				entries++
			case i > 0 && cont.MatchString(line):
			default:
				t.Errorf("%s --help: flags line %q is not in the help style", name, line)
			}
			if n := len([]rune(line)); n > 80 && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("%s --help: line of %d columns: %q", name, n, line)
			}
		}
		if entries == 0 {
			t.Errorf("%s --help: an empty flags section", name)
		}
	}
	if withFlags < 8 {
		t.Errorf("only %d commands list flags", withFlags)
	}
}

// writeFlags lists a flag added to any command in the same style, with a
// placeholder and its default, and hides one without a usage.
func TestWriteFlagsStyle(t *testing.T) {
	var b strings.Builder
	fs := newHelpTestFlags()
	writeFlags(&b, fs)
	want := "" +
		"  --addr HOST:PORT      listen address (default \"127.0.0.1:8080\")\n" +
		"  --dry                 print only\n" +
		"  --limit N             at most this many, 1 to 10000, a description long enough\n" +
		"                        to wrap at eighty columns (default 30)\n" +
		"  -o FILE               write the report to this file\n" +
		"  --visibility-timeout DURATION\n" +
		"                        reservation of a fetched job (default 30s)\n" +
		"  --when MOMENT         the MOMENT to start\n"
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func newHelpTestFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("addr", "127.0.0.1:8080", "listen address")
	fs.Bool("dry", false, "print only")
	fs.Int("limit", 30, "at most this many, 1 to 10000, a description long enough to wrap at eighty columns")
	fs.String("o", "", "write the report to this file")
	fs.Duration("visibility-timeout", 30*time.Second, "reservation of a fetched job")
	fs.String("when", "", "the `MOMENT` to start")
	fs.String("plant", "", "")
	return fs
}
