package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func init() {
	commands["conformance"] = command{
		summary: "run the conformance suite (vectors and executor scenarios) against retrykit or an adapter (--impl); export DIR writes the files",
		run:     runConformance,
	}
}

const conformanceUsage = `usage: retrykit conformance [flags]
       retrykit conformance export DIR

Runs the OJS retry conformance vectors against the built-in reference, or
against an adapter process speaking conformance/PROTOCOL.md (--impl), and
prints a report. Exit status: 0 when nothing failed or errored, 1 otherwise,
2 on bad usage, unreadable input, or an adapter that cannot be started or
fails its hello handshake (reported once, before any vector runs).

The executor scenario vectors (testdata/scenarios: job lifecycles with
visibility timeouts, heartbeats, dead letters) run too, through the
optional "scenario" op. An adapter that does not list that op in its hello
(a policy library without an executor) gets them reported as not run
(coverage), never as failures; --scenarios=false leaves them out.

Every report opens with three scores: spec requirements (MUST),
SHOULD-level and optional features (flags should:*, extension:*) and
retrykit decisions (RK-nn), and with the command of the spec-only run
(--spec-only: the MUST level alone). Failures and errors are then grouped
by cause (a failure class of the vectors, or a symptom such as "a rejection
was expected and a result came back"), before the per-vector list. Verdicts
that depend on the implementation's own random draws (opaque jitter, the
statistical check) are named; --repeat K runs them K times and reports any
that flip.

Numeric flags and what they cost:
  --parallel N         1..1024: N goroutines (a few KiB each) and N requests
                       in flight
  --jitter-samples K   0..1000000: K delay requests, 8 bytes kept per sample;
                       at the bound the built-in reference takes a few
                       seconds and about 35 MB peak RSS; an adapter takes its
                       own time per request times K (the Python example:
                       about 90 s)
  --repeat K           1..100: each extra run resends every draw-dependent
                       vector and the statistical check once

"--server URL" checks a running OJS server over the HTTP binding instead
(retrykit conformance --server URL -h lists its flags).

"export DIR" writes the embedded vector files (JSON, schema, README) to DIR,
and the scenario files to DIR/scenarios, for runners in other languages.

flags:
`

// listFlag collects comma-separated values from repeated flags.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// The bounds of the numeric flags (see conformanceUsage); the library
// documents and clamps to the same ones.
const (
	maxParallel      = 1024
	maxJitterSamples = 1_000_000
	maxRepeat        = 100
)

// suiteOnlyFlags are the conformance flags that select, score or record
// suite vectors, which --profiles does not run.
var suiteOnlyFlags = map[string]bool{
	"run": true, "requirement": true, "flag": true, "unclaimed": true, "spec-only": true,
	"skip-file": true, "strict": true, "write-skip-file": true, "repeat": true,
	"jitter-samples": true, "vectors": true, "scenarios": true, "scenarios-dir": true,
}

// maxTimeout bounds --timeout of conformance (and --server): a request
// that takes longer is as good as lost, and an hour-long wait per request
// of an unresponsive adapter or server is already a hang to a user.
const maxTimeout = time.Hour

func runConformance(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "export" {
		return runExport(args[1:], stdout, stderr)
	}
	if serverRequested(args) { // live.go: --server URL checks a live OJS server
		return runLive(args, stdout, stderr)
	}
	fset := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), conformanceUsage)
		writeFlags(fset.Output(), fset)
	}
	if helpRequested(args) {
		fset.SetOutput(stdout)
	}
	var (
		impl       = fset.String("impl", "", "adapter command line, e.g. \"python3 conformance/adapters/python/adapter.py\" (default: the built-in reference)")
		report     reportFlags
		skipFile   = fset.String("skip-file", "", "known-failure list: vector ids to report as skipped")
		strict     = fset.Bool("strict", false, "run skip-listed vectors anyway and fail on those that pass")
		timeout    = fset.Duration("timeout", 5*time.Second, "per-request timeout for --impl, above 0 and at most 1h")
		vectorsDir = fset.String("vectors", "", "directory of vector files (default: the vectors embedded in retrykit)")
		scenarios  = fset.Bool("scenarios", true, "also run the executor scenario vectors (op scenario)")
		scenDir    = fset.String("scenarios-dir", "", "directory of scenario files (default: the scenarios embedded in retrykit)")
		parallel   = fset.Int("parallel", 32, "requests in flight at once, 1..1024")
		samples    = fset.Int("jitter-samples", conformance.DefaultJitterSamples, "samples for the statistical jitter check, 0..1000000 (0: leave it out)")
		repeat     = fset.Int("repeat", 1, "run draw-dependent vectors this many times, 1..100, and report any whose verdict flips")
		specOnly   = fset.Bool("spec-only", false, "run only the spec's MUST level: leave out SHOULD-level and optional features and retrykit decisions")
		profiles   = fset.Bool("profiles", false, "run the profile vectors (testdata/profiles) through the delay op's profile form instead of the suite (PROTOCOL.md 3.4.1)")
		profDir    = fset.String("profiles-dir", "", "directory of profile vector files (default: the ones embedded in retrykit)")
		ids, reqs  listFlag
		flags, unc listFlag
	)
	report.define(fset, "vectors")
	fset.Var(&ids, "run", "run only these vector ids (comma-separated, repeatable)")
	fset.Var(&reqs, "requirement", "run only vectors of these requirements, e.g. RET-04 (comma-separated, repeatable)")
	fset.Var(&flags, "flag", "run only vectors carrying one of these flags (comma-separated, repeatable)")
	fset.Var(&unc, "unclaimed", "flags the implementation does not claim; their vectors are reported as not run")
	// --server is handled before this flag set (serverRequested); it is
	// defined here so that the help lists it and a mistyped "--serve"
	// gets "did you mean --server?".
	fset.String("server", "", "check a running OJS server at this URL instead (retrykit conformance --server URL -h lists its flags)")
	if err := parseTerse(fset, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "retrykit conformance: unexpected argument %q\n", fset.Arg(0))
		fset.Usage()
		return 2
	}
	given := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case given["impl"] && strings.TrimSpace(*impl) == "":
		return usageError(stderr, "--impl: empty command line (leave the flag out to test the built-in reference)")
	case *timeout <= 0 || *timeout > maxTimeout:
		return usageError(stderr, fmt.Sprintf("--timeout: must be above 0 and at most %v, got %v", maxTimeout, *timeout))
	case *parallel < 1 || *parallel > maxParallel:
		return usageError(stderr, fmt.Sprintf("--parallel: must be in 1..%d, got %d", maxParallel, *parallel))
	case *samples < 0 || *samples > maxJitterSamples:
		return usageError(stderr, fmt.Sprintf("--jitter-samples: must be in 0..%d (0 leaves the check out), got %d", maxJitterSamples, *samples))
	case *repeat < 1 || *repeat > maxRepeat:
		return usageError(stderr, fmt.Sprintf("--repeat: must be in 1..%d, got %d", maxRepeat, *repeat))
	}
	if *profiles || *profDir != "" {
		// The profile vectors are not the suite: a flag that selects or
		// scores suite vectors would be silently dropped, so it is refused.
		var given []string
		fset.Visit(func(f *flag.Flag) {
			if suiteOnlyFlags[f.Name] {
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			return usageError(stderr, fmt.Sprintf("--profiles runs the profile vectors, not the suite: it takes no %s", strings.Join(given, ", ")))
		}
		if slices.Contains(report.formats, "html") {
			return usageError(stderr, "--format html: the profile vectors' report is text, json, junit or markdown")
		}
	}
	if *strict && *skipFile == "" {
		return usageError(stderr, "--strict: needs --skip-file (it runs the skip-listed vectors anyway and fails on those that pass)")
	}
	if msg := report.check(); msg != "" {
		return usageError(stderr, msg)
	}
	if (*profiles || *profDir != "") && len(report.formats) > 1 {
		return usageError(stderr, "--profiles writes one report: give --format once")
	}

	if *scenDir != "" && !*scenarios {
		fmt.Fprintln(stderr, "retrykit conformance: --scenarios-dir given with --scenarios=false")
		return 2
	}
	var vecFS, scenFS fs.FS = retrykit.Vectors, nil
	if *vectorsDir != "" {
		if msg := checkDir("--vectors", *vectorsDir); msg != "" {
			return usageError(stderr, msg)
		}
		vecFS = os.DirFS(*vectorsDir)
	}
	if *scenarios {
		scenFS = retrykit.Scenarios
		if *scenDir != "" {
			if msg := checkDir("--scenarios-dir", *scenDir); msg != "" {
				return usageError(stderr, msg)
			}
			scenFS = os.DirFS(*scenDir)
		}
	}
	suite, err := conformance.Load(vecFS, scenFS)
	if err != nil {
		// Load names files relative to the directory ("." for the
		// directory itself): say which directories were read.
		var from []string
		if *vectorsDir != "" {
			from = append(from, "--vectors "+*vectorsDir)
		}
		if scenFS != nil && *scenDir != "" {
			from = append(from, "--scenarios-dir "+*scenDir)
		}
		if len(from) > 0 {
			fmt.Fprintf(stderr, "retrykit conformance: reading %s: %v\n", strings.Join(from, " and "), err)
		} else {
			fmt.Fprintf(stderr, "retrykit conformance: %v\n", err)
		}
		return 2
	}
	if msg := unknownSelection(suite, ids, reqs, flags); msg != "" {
		fmt.Fprintf(stderr, "retrykit conformance: %s\n", msg)
		return 2
	}
	if msg := unknownUnclaimed(suite, unc); msg != "" {
		fmt.Fprintf(stderr, "retrykit conformance: %s\n", msg)
		return 2
	}
	opts := []conformance.Option{
		conformance.WithIDs(ids...), conformance.WithRequirements(reqs...), conformance.WithFlags(flags...),
		conformance.WithoutFlags(unc...), conformance.WithStrict(*strict), conformance.WithParallelism(*parallel),
		conformance.WithJitterSamples(*samples), conformance.WithRepeat(*repeat),
	}
	if *specOnly {
		opts = append(opts, conformance.WithSpecOnly())
	}
	if *skipFile != "" {
		skips, err := readSkipFile(*skipFile)
		if err != nil {
			return usageError(stderr, err.Error())
		}
		opts = append(opts, conformance.WithSkips(skips))
	}

	var target protocol.Implementation = conformance.Reference()
	if *impl != "" {
		argv, err := splitCommand(*impl)
		if err != nil || len(argv) == 0 {
			fmt.Fprintf(stderr, "retrykit conformance: --impl: cannot split %q into a command line\n", *impl)
			return 2
		}
		// Each adapter death (a silent adapter's timeout above all) is
		// named on standard error as it happens.
		var alog io.Writer
		stderr, alog = adapterLog(stderr, "retrykit conformance: ")
		p := protocol.NewProcess(argv, protocol.WithTimeout(*timeout), protocol.WithLog(alog))
		defer p.Close()
		// Start the adapter and check its hello once, up front: an adapter
		// that cannot start would otherwise turn every vector into the
		// same error.
		if _, err := p.Hello(context.Background()); err != nil {
			fmt.Fprintf(stderr, "retrykit conformance: --impl %q: the adapter did not start: %v\n", *impl, err)
			if tail := strings.TrimRight(p.Stderr(), "\n"); tail != "" {
				fmt.Fprintf(stderr, "adapter standard error:\n%s\n", indent(tail))
			}
			return 2
		}
		target = p
	}

	// writeOut writes a report to -o, or to stdout without it.
	writeOut := func(write func(io.Writer) error) error {
		if len(report.outputs) == 0 {
			return write(stdout)
		}
		return writeFile(report.outputs[0], write)
	}
	if *profiles || *profDir != "" { // profileconf.go
		var buf bytes.Buffer
		code := runProfileVectors(context.Background(), target, *profDir, report.formats[0], &buf, stderr)
		if code == 2 {
			return code
		}
		if err := writeOut(func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			fmt.Fprintf(stderr, "retrykit conformance: writing report: %v\n", err)
			return 2
		}
		return code
	}
	rep := conformance.NewRunner(suite, opts...).Run(context.Background(), target)
	rep.Command = commandLine(args)
	if p, ok := target.(*protocol.Process); ok {
		// End the adapter (and everything it started) before the report,
		// so that the command exits as soon as the report is written.
		p.Close()
	}

	return report.write(rep, stdout, stderr)
}

// readSkipFile reads the known-failure list named by --skip-file.
func readSkipFile(path string) (conformance.SkipList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--skip-file: %w", err)
	}
	defer f.Close()
	skips, err := conformance.ParseSkipList(f)
	if err != nil {
		return nil, fmt.Errorf("--skip-file %s: %w", path, err)
	}
	return skips, nil
}

// checkOutputs returns a message naming the flag when the file of -o
// (output) or --write-skip-file (writeSkip) cannot be written, or "". The
// files written at the end are checked before the run, so that a bad path
// fails at once rather than after the run, with the report lost.
func checkOutputs(output, writeSkip string) string {
	for _, f := range []struct{ flag, path string }{{"-o", output}, {"--write-skip-file", writeSkip}} {
		if f.path == "" {
			continue
		}
		if err := checkWritable(f.path); err != nil {
			return fmt.Sprintf("%s: %v", f.flag, err)
		}
	}
	return ""
}

// writeReport writes rep in format to output (stdout when output is "")
// and, when writeSkip is set, its failures as a skip file there. It
// returns the exit status: 2 when a file cannot be written, 1 when rep
// has failures or errors, else 0.
func writeReport(rep *conformance.Report, format, output, writeSkip string, stdout, stderr io.Writer) int {
	write := func(w io.Writer) error { return rep.Write(w, format) }
	var err error
	if output == "" {
		err = write(stdout)
	} else {
		err = writeFile(output, write)
	}
	if err != nil {
		return usageError(stderr, fmt.Sprintf("writing report: %v", err))
	}
	if writeSkip != "" {
		if err := writeFile(writeSkip, func(w io.Writer) error { return conformance.WriteSkipList(w, rep) }); err != nil {
			return usageError(stderr, fmt.Sprintf("--write-skip-file: %v", err))
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// errSymlink is the error of export for a symbolic link where it would
// write: writing through it would change a file outside DIR.
var errSymlink = errors.New("is a symbolic link; export does not write through links")

// exportDir makes the directory path for export. Inside DIR (top false) an
// existing symbolic link is refused, so that nothing is written outside
// DIR; DIR itself is the user's choice and may be a link.
func exportDir(path string, top bool) error {
	if fi, err := os.Lstat(path); err == nil && !top && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, errSymlink)
	}
	return os.MkdirAll(path, 0o755)
}

// exportFile writes data at path without following a link there: a
// symbolic link at path is refused, and the data goes to a new temporary
// file in the same directory (created exclusively) that is then renamed
// over path, so that a link made in between is replaced, not followed.
func exportFile(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, errSymlink)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".export-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// helpRequested reports whether args ask for help (-h, -help, --help)
// before any "--".
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandLine returns "retrykit conformance" (self: how the user runs this
// program, see selfCommand) followed by args, each quoted
// for a POSIX shell where needed, so that a report can show a command the
// reader can paste.
func commandLine(args []string) string {
	parts := []string{self, "conformance"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote returns s unchanged when a POSIX shell reads it as one literal
// word, else s in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkDir returns a message naming flag and path when path is not an
// existing directory, or "".
func checkDir(flag, path string) string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s: %s does not exist", flag, path)
	case err != nil:
		return fmt.Sprintf("%s: %v", flag, err)
	case !fi.IsDir():
		return fmt.Sprintf("%s: %s is not a directory", flag, path)
	}
	return ""
}

// usageError reports a bad flag value and returns exit status 2.
func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "retrykit conformance: %s\n", msg)
	return 2
}

// indent prefixes every line of s with four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// unknownSelection returns a message naming the --run ids, --requirement
// ids and --flag names that match no vector of suite, or "". A typo in a
// selection would otherwise select nothing and report an empty PASS.
func unknownSelection(suite *conformance.Suite, ids, reqs, flags []string) string {
	knownReq, knownFlag := map[string]bool{"RET-05": true}, map[string]bool{"statistical": true}
	for _, v := range suite.Vectors {
		knownReq[v.Requirement] = true
		for _, c := range v.Covers {
			knownReq[c] = true
		}
		for _, f := range v.Flags {
			knownFlag[f] = true
		}
	}
	var bad []string
	for _, id := range ids {
		if suite.Vector(id) == nil && id != conformance.JitterCheckID {
			bad = append(bad, "--run "+id)
		}
	}
	for _, r := range reqs {
		if !knownReq[r] {
			bad = append(bad, "--requirement "+r)
		}
	}
	for _, f := range flags {
		if !knownFlag[f] {
			bad = append(bad, "--flag "+f)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "no vector matches " + strings.Join(bad, ", ")
}

// unknownUnclaimed returns a message naming the --unclaimed flags that no
// vector carries, or "": a misspelt flag would otherwise unclaim nothing.
func unknownUnclaimed(suite *conformance.Suite, unc []string) string {
	known := map[string]bool{"statistical": true}
	for _, v := range suite.Vectors {
		for _, f := range v.Flags {
			known[f] = true
		}
	}
	var bad []string
	for _, f := range unc {
		if !known[f] {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "--unclaimed: no vector carries the flag " + strings.Join(bad, ", ")
}

// checkWritable reports whether a file can be written at path, without
// changing it: an existing file is opened for writing and closed, and a
// missing one is created and removed again.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// writeFile creates (or truncates) the file at path and writes it with
// write through a buffer; the error of the write, the flush or the close,
// whichever comes first, is returned.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func validFormat(f string) bool {
	for _, x := range conformance.Formats() {
		if f == x {
			return true
		}
	}
	return false
}

// splitCommand is hand-written: a shell-words library would be a run-time
// dependency of the main module for forty lines, and no expansion is wanted.
//
// splitCommand splits a command line the way a POSIX shell would for simple
// cases: whitespace separates words, single quotes keep everything
// literally, double quotes keep spaces and honour backslash escapes of ",
// \ and $, and a backslash outside quotes escapes the next character. No
// expansion of any kind is done.
func splitCommand(s string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

func runExport(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: retrykit conformance export DIR\n\nWrites the embedded vector files (JSON, schema, README) to DIR and the\nscenario files to DIR/scenarios, for runners in other languages."
	if helpRequested(args) {
		fmt.Fprintln(stdout, usage)
		return 0
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		switch {
		case len(args) == 0:
			fmt.Fprintln(stderr, "retrykit conformance export: give the directory to write (DIR)")
		case strings.HasPrefix(args[0], "-") && args[0] != "-":
			fmt.Fprintf(stderr, "retrykit conformance export: takes no flags, got %s\n", quoteName(args[0]))
		case len(args) > 1:
			fmt.Fprintf(stderr, "retrykit conformance export: one directory, got %d arguments (flags included)\n", len(args))
		default:
			fmt.Fprintf(stderr, "retrykit conformance export: %s is not a directory name\n", quoteName(args[0]))
		}
		fmt.Fprintln(stderr, usage)
		return 2
	}
	dir := args[0]
	if strings.TrimSpace(dir) == "" {
		fmt.Fprintln(stderr, "retrykit conformance export: DIR is empty (give a directory; \".\" for the current one)")
		return 2
	}
	n := 0
	copyTree := func(src fs.FS, to string) error {
		return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			target := filepath.Join(to, filepath.FromSlash(path))
			if d.IsDir() {
				return exportDir(target, path == "." && to == dir)
			}
			data, err := fs.ReadFile(src, path)
			if err != nil {
				return err
			}
			n++
			return exportFile(target, data)
		})
	}
	err := copyTree(retrykit.Vectors, dir)
	if err == nil {
		err = copyTree(retrykit.Scenarios, filepath.Join(dir, "scenarios"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrykit conformance export: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "wrote %d files to %s\n", n, dir)
	return 0
}
