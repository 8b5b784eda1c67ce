package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/retrykit/retrykit/conformance"
)

// reportFlags are the report flags of both conformance modes (the suite and
// --server): --format repeated, each with its own -o in the same order, the
// last format alone allowed on standard output, and --write-skip-file.
type reportFlags struct {
	formats, outputs repeatFlag
	writeSkip        *string
}

// define adds --format, -o and --write-skip-file to fs; what names the
// checks or vectors in the help text ("checks", "vectors").
func (r *reportFlags) define(fs *flag.FlagSet, what string) {
	fs.Var(&r.formats, "format", "report format: "+strings.Join(conformance.Formats(), ", ")+" (repeatable, each with its own -o; default text)")
	fs.Var(&r.outputs, "o", "write the report to this file instead of standard output (repeatable, one per --format, in order)")
	r.writeSkip = fs.String("write-skip-file", "", "write the "+what+" that failed or errored to this file, as a skip file")
}

// check validates the flags after parsing, before the run: known formats,
// -o files paired with formats, every file writable. It returns a message
// for usageError, or "".
func (r *reportFlags) check() string {
	if len(r.formats) == 0 {
		r.formats = repeatFlag{"text"}
	}
	for _, f := range r.formats {
		if !validFormat(f) {
			return fmt.Sprintf("unknown --format %q (want %s)", f, strings.Join(conformance.Formats(), ", "))
		}
	}
	if msg := pairOutputs(r.formats, r.outputs); msg != "" {
		return msg
	}
	for _, o := range r.outputs {
		if msg := checkOutputs(o, ""); msg != "" {
			return msg
		}
	}
	return checkOutputs("", *r.writeSkip)
}

// write writes rep in every format to its file (the last format without one
// to stdout) and the skip file, and returns the exit status: the highest of
// writeReport's.
func (r *reportFlags) write(rep *conformance.Report, stdout, stderr io.Writer) int {
	rc := 0
	for i, f := range r.formats {
		out, skip := "", ""
		if i < len(r.outputs) {
			out = r.outputs[i]
		}
		if i == 0 {
			skip = *r.writeSkip
		}
		rc = max(rc, writeReport(rep, f, out, skip, stdout, stderr))
	}
	return rc
}

// repeatFlag is a flag that may be given several times, one value each.
type repeatFlag []string

func (r *repeatFlag) String() string { return strings.Join(*r, " ") }

func (r *repeatFlag) Set(s string) error { *r = append(*r, s); return nil }

// pairOutputs checks that the -o files pair with the formats: format i
// goes to -o i, and at most one format (the last) to standard output; no
// file twice.
func pairOutputs(formats, outputs []string) string {
	switch {
	case len(outputs) > len(formats):
		return fmt.Sprintf("-o: %d files for %d formats (one -o per --format, in order)", len(outputs), len(formats))
	case len(outputs) < len(formats)-1:
		return fmt.Sprintf("--format: %d formats but %d -o files; only the last format may go to standard output", len(formats), len(outputs))
	}
	seen := map[string]bool{}
	for _, o := range outputs {
		if seen[o] {
			return fmt.Sprintf("-o: %q given twice", o)
		}
		seen[o] = true
	}
	return ""
}
