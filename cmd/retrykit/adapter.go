package main

import (
	"context"
	"fmt"
	"io"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func init() {
	commands["adapter"] = command{
		summary: "speak the conformance adapter protocol for retrykit on stdin/stdout",
		run:     runAdapter,
	}
}

// runAdapter serves the reference implementation over the line protocol of
// conformance/PROTOCOL.md until standard input ends.
func runAdapter(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprintln(stdout, "usage: retrykit adapter\n\nReads protocol requests (conformance/PROTOCOL.md) on standard input and\nanswers them for retrykit's reference implementation on standard output.")
			return 0
		}
		fmt.Fprintf(stderr, "retrykit adapter: unexpected argument %q\n", args[0])
		return 2
	}
	if err := protocol.Serve(context.Background(), conformance.Reference(), stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "retrykit adapter: %v\n", err)
		return 1
	}
	return 0
}
