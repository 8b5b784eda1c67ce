// Command retrykit prints retry schedules of OJS retry policies and runs the
// retrykit conformance suite.
//
// Usage:
//
//	retrykit schedule [--json] [policy.json]
//	retrykit conformance [flags]
//	retrykit adapter
//	retrykit simulate [flags]
//	retrykit fuzz --impl CMD [flags]
//	retrykit scoreboard DIR -o SITE
//	retrykit serve [--addr HOST:PORT] [--clock real|manual]
//	retrykit version
//	retrykit help [command]
//
// With no arguments retrykit runs "retrykit schedule" (the OJS default
// policy's schedule) and says so on stderr. "--help" (or -h, or "help
// COMMAND") prints a command's usage on stdout and exits 0. Each subcommand
// lives in its own file and registers itself in commands.
// Exit status: 0 on success, 1 when a run found failures, 2 on bad input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retrykit/retrykit/internal/suggest"
)

// command is one subcommand: it gets its arguments (without the subcommand
// name) and the process streams, and returns the exit status.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands is filled by init functions in the subcommand files.
var commands = map[string]command{}

func main() {
	initSelf()
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// The last chance to hear of lost output (a file system that reports
	// a failed write only when the file is closed).
	if err := os.Stdout.Close(); err != nil && code != 2 {
		fmt.Fprintf(os.Stderr, "retrykit: standard output: %v\n", err)
		code = 2
	}
	os.Exit(code)
}

// run runs a command with its standard output checked: the first failed
// write (a full disk, a closed pipe) is reported on stderr and the command
// exits 2, whatever it would have returned, because its output is lost.
// Writes after a failed one are dropped.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := dispatch(args, stdin, out, stderr)
	if out.err != nil {
		fmt.Fprintf(stderr, "retrykit: writing standard output: %v (the output is incomplete)\n", out.err)
		return 2
	}
	return code
}

// checkedWriter passes writes on to w until one fails, and keeps that
// error.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// dispatch runs a subcommand. With no arguments it runs "schedule" on the
// default policy, the project's main job, after a note on stderr.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, `retrykit: no command given: running "retrykit schedule" (the default policy's schedule); "retrykit --help" lists the commands`)
		args = []string{"schedule"}
	}
	name := args[0]
	if name == "--version" || name == "-version" {
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		if len(args) > 1 && args[1] != "help" && !helpRequested(args[1:2]) {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdin, stdout, stderr)
			}
			fmt.Fprintf(stderr, "retrykit help: unknown command %s%s\n", quoteName(args[1]), commandHint(args[1]))
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "retrykit: unknown command %s%s\n", quoteName(name), commandHint(name))
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: retrykit <command> [arguments]")
	fmt.Fprintln(w, "       retrykit help <command>     (or: retrykit <command> --help)")
	fmt.Fprintln(w, "\nWith no arguments, retrykit runs \"retrykit schedule\": the retry schedule")
	fmt.Fprintln(w, "of the OJS default policy. Exit status: 0 on success, 1 when a run found")
	fmt.Fprintln(w, "failures, 2 on bad usage or bad input.")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}

// parseFlags parses args with fs, accepting flags before and after the
// positional arguments ("schedule p.json --json" is "schedule --json
// p.json"); everything after "--" is positional. It returns the positional
// arguments in order. A help request (-h, -help, --help) prints the usage
// on stdout and returns flag.ErrHelp, for which a command exits 0.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := parseTerse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// maxNameShown is the longest command or flag name echoed whole in a
// message; a longer one is cut, so a huge argument makes no huge message.
const maxNameShown = 64

// quoteName quotes a name the user typed for a message, cut to
// maxNameShown bytes (at a UTF-8 boundary) with its full length noted.
func quoteName(s string) string {
	if len(s) <= maxNameShown {
		return strconv.Quote(s)
	}
	n := maxNameShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + fmt.Sprintf("…(%d bytes)", len(s))
}

// commandHint is ` (did you mean "schedule"?)` for the command nearest to
// a mistyped one, or "".
func commandHint(name string) string {
	// The profiles are a flag of schedule, not a command.
	switch strings.ToLower(strings.TrimLeft(name, "-")) {
	case "profiles", "profile", "list-profiles":
		return ` (the profiles are listed by "retrykit schedule --list-profiles")`
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return suggest.Hint(name, names)
}

// parseTerse parses args with fs. On a parse error it prints one line,
// "retrykit CMD: unknown flag "-jsno" (did you mean --json?)" or the flag
// package's error after "retrykit CMD: ", then the usage line and a
// pointer to --help, instead of the whole help text, so that the error
// stays on the screen. A help request prints the whole help on
// fs.Output(), as fs.Parse does.
func parseTerse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	long := fs.Usage
	if !helpRequested(args) {
		fs.Usage = func() {}
	}
	var msg strings.Builder
	fs.SetOutput(&msg) // the flag package's error line, replaced below
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = long
	if err == nil {
		return refuseEmpty(fs)
	}
	if errors.Is(err, flag.ErrHelp) {
		long() // -h after a flag's value ("--limit 3 -h")
		return err
	}
	fmt.Fprintf(out, "retrykit %s: %s\n", fs.Name(), flagError(fs, err))
	var b strings.Builder
	fs.SetOutput(&b)
	long()
	fs.SetOutput(out)
	head, _, _ := strings.Cut(b.String(), "\n\n")
	fmt.Fprintf(out, "%s\n(\"retrykit %s --help\" describes every flag)\n", strings.TrimRight(head, "\n"), helpName(fs))
	return err
}

// helpName is the command of fs as its --help is asked for
// ("conformance --server URL").
func helpName(fs *flag.FlagSet) string {
	return strings.Replace(fs.Name(), "--server", "--server URL", 1)
}

// noEmptyValue names the flags for which an empty value means nothing:
// files, names, lists and numbers written as text. Given empty (an unset
// shell variable, "--svg="), they were ignored, and the command ran
// without them: an empty --profile printed the default policy's schedule.
var noEmptyValue = map[string]bool{
	"profile": true, "svg": true, "o": true, "out": true, "skip-file": true,
	"write-skip-file": true, "vectors": true, "scenarios-dir": true, "profiles-dir": true,
	"rand": true, "seed": true, "run": true, "requirement": true, "flag": true,
	"unclaimed": true, "ops": true, "reset-url": true, "retry-after": true, "to": true,
	"addr": true, // serve: an empty address listens on every interface
}

// errEmptyValue is returned by parseTerse for a flag of noEmptyValue
// given an empty value; the message is already printed.
var errEmptyValue = errors.New("empty flag value")

// refuseEmpty reports, on fs.Output(), the first flag of noEmptyValue that
// was given an empty (or blank) value.
func refuseEmpty(fs *flag.FlagSet) error {
	var bad string
	fs.Visit(func(f *flag.Flag) {
		if bad == "" && noEmptyValue[f.Name] && strings.TrimSpace(f.Value.String()) == "" {
			bad = f.Name
		}
	})
	if bad == "" {
		return nil
	}
	dash := "--"
	if len(bad) == 1 {
		dash = "-"
	}
	fmt.Fprintf(fs.Output(), "retrykit %s: %s%s: empty value (leave the flag out to go without it; \"retrykit %s --help\" describes it)\n", fs.Name(), dash, bad, helpName(fs))
	return errEmptyValue
}

// flagError is the message for a parse error of fs: for an undefined flag
// with the nearest defined one, "unknown flag "-jsno" (did you mean
// --json?)".
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return "unknown flag " + quoteName("-"+name) + flagSuggestion(name, names)
}

// flagSuggestion is " (did you mean --json?)" for the flag of names nearest
// to the typed flag (its dashes and any "=value" ignored), or "".
func flagSuggestion(typed string, names []string) string {
	typed, _, _ = strings.Cut(strings.TrimLeft(typed, "-"), "=")
	if s, ok := suggest.Closest(typed, names); ok {
		return " (did you mean --" + s + "?)"
	}
	return ""
}
