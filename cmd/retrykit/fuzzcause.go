package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
)

// fuzzRequestFlags are the flags a fuzz request can carry
// (policytest.Flags), the ones --unclaimed takes.
var fuzzRequestFlags = []string{"extension:backoff_strategy", "should:date-components", "should:prefix-match", "float-tolerance"}

// unknownFuzzUnclaimed returns a message naming the --unclaimed flags no
// fuzz request carries, or "": a misspelt flag would otherwise unclaim
// nothing.
func unknownFuzzUnclaimed(unc []string) string {
	var bad []string
	for _, f := range unc {
		known := false
		for _, k := range fuzzRequestFlags {
			known = known || f == k
		}
		if !known {
			bad = append(bad, fmt.Sprintf("%q", f))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("--unclaimed: no fuzz request carries the flag %s (want some of %s)",
		strings.Join(bad, ", "), strings.Join(fuzzRequestFlags, ", "))
}

// unclaimedArgs returns the --unclaimed arguments that repeat unc.
func unclaimedArgs(unc []string) string {
	var b strings.Builder
	for _, f := range unc {
		b.WriteString(" --unclaimed " + f)
	}
	return b.String()
}

// writeFuzzCause writes what a disagreement shows: the bug model that
// reproduces the implementation's answer and its fix, the rule broken,
// the flags its vector carries and, for a missing extension, the command
// that declares it unclaimed (repeat with --unclaimed).
func writeFuzzCause(w io.Writer, c fuzz.Cause, repeat string) {
	rule := c.Requirement
	if c.Section != "" {
		rule += ", section " + c.Section
	}
	if c.Found() {
		fmt.Fprintf(w, "  cause:    bug:%s (%s)\n  fix:      %s\n", c.Model.Name, rule, c.Model.Fix)
		if u := c.Model.Unclaim(); u != "" {
			fmt.Fprintf(w, "  without it: %s\n", repeat+unclaimedArgs(strings.Split(u, ",")))
		}
	} else {
		fmt.Fprintf(w, "  cause:    no bug model reproduces this answer (rule %s)\n", rule)
	}
	if len(c.Flags) > 0 {
		fmt.Fprintf(w, "  flags:    %s\n", strings.Join(c.Flags, ", "))
	}
}
