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
//
// Each subcommand lives in its own file and registers itself in commands.
// Exit status: 0 on success, 1 when a run found failures, 2 on bad input.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
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
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand. With no arguments it runs "schedule" on the
// default policy, the project's main job.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"schedule"}
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "retrykit: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: retrykit <command> [arguments]")
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
