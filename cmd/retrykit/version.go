package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

func init() {
	commands["version"] = command{
		summary: "print retrykit's version (the module's, or the commit of a clone) and the Go version it was built with",
		run:     runVersion,
	}
}

const versionUsage = `usage: retrykit version   (or: retrykit --version)

Prints the version of the retrykit module the command was built from: a
release, or for a build in a clone "(devel)" with the commit and whether
the work tree had changes, then the Go version. The conformance suite's
own version is in the first lines of every "retrykit conformance" report.
`

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, versionUsage)
			return 0
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "retrykit version: unexpected argument %s\n", quoteName(args[0]))
		return 2
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stdout, "retrykit (no build information)")
		return 0
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (commit %.12s%s)", rev, modified)
	}
	fmt.Fprintf(stdout, "retrykit %s, %s\n", v, bi.GoVersion)
	return 0
}
