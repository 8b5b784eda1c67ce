package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The one help style of every command. A command's --help prints its
// usage line and description, then "flags:" and one entry per flag,
// written by writeFlags:
//
//	  --limit N             print at most this many attempts, 1 to 10000
//	                        (default 50)
//	  --profile NAME        print the schedule of another system's profile
//	  -o FILE               write the report to this file
//
// Flags are written with two dashes (one for a one-letter flag), as the
// usage lines write them; the value is a placeholder in capitals; the
// description starts in one column and wraps at helpWidth. A flag defined
// on a command's flag set follows this style by itself.

// helpWidth is the width help text wraps at; helpColumn is where a flag's
// description starts.
const (
	helpWidth  = 80
	helpColumn = 24
)

// flagPlaceholders names the value of flags whose usage does not name it
// with back quotes (flag.UnquoteUsage), by flag name.
var flagPlaceholders = map[string]string{
	"svg": "FILE", "o": "FILE", "out": "DIR", "skip-file": "FILE", "write-skip-file": "FILE",
	"vectors": "DIR", "scenarios-dir": "DIR", "profiles-dir": "DIR", "policy": "POLICY",
	"profile": "NAME", "impl": "CMD", "server": "URL", "reset-url": "URL", "addr": "HOST:PORT",
	"format": "FORMAT", "run": "IDS", "requirement": "IDS", "flag": "FLAGS", "unclaimed": "FLAGS",
	"ops": "OPS", "rand": "R", "seed": "N", "to": "SYSTEM", "clock": "real|manual",
	"error-class": "CLASS", "retry-after": "DURATION",
	"jitter": "MODE", "error-type-field": "FIELD", "interval-form": "FORM", "strategy-field": "FIELD",
}

// flagPlaceholder returns the placeholder of f's value ("" for a boolean
// flag) and its description.
func flagPlaceholder(f *flag.Flag) (name, usage string) {
	name, usage = flag.UnquoteUsage(f)
	if name == "" {
		return "", usage // a boolean flag
	}
	if strings.Contains(f.Usage, "`") {
		return name, usage
	}
	if p, ok := flagPlaceholders[f.Name]; ok {
		return p, usage
	}
	switch name {
	case "int", "int64", "uint", "uint64":
		return "N", usage
	case "float":
		return "X", usage
	case "duration":
		return "DURATION", usage
	case "string":
		return "TEXT", usage
	}
	return "VALUE", usage
}

// flagDefault returns " (default X)" for a flag whose default is not its
// type's zero value, "" otherwise; a text default is quoted.
func flagDefault(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
		return fmt.Sprintf(" (default %q)", f.DefValue)
	}
	return " (default " + f.DefValue + ")"
}

// writeFlags writes the flags of fs, sorted by name, in the one help
// style: "  --name VALUE", the description from helpColumn, wrapped at
// helpWidth, and the default when it is not the zero value. A flag with an
// empty usage is not listed (a test-only flag).
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == "" {
			return
		}
		ph, usage := flagPlaceholder(f)
		dash := "--"
		if utf8.RuneCountInString(f.Name) == 1 {
			dash = "-"
		}
		head := "  " + dash + f.Name
		if ph != "" {
			head += " " + ph
		}
		// The default is one unit: "(default" never ends a line with
		// its value on the next.
		text := strings.Join(strings.Fields(usage), " ") + strings.Replace(flagDefault(f), "(default ", "(default\x00", 1)
		lines := wrapWords(text, helpWidth-helpColumn)
		for i := range lines {
			lines[i] = strings.ReplaceAll(lines[i], "\x00", " ")
		}
		if utf8.RuneCountInString(head) > helpColumn-2 {
			fmt.Fprintln(w, head)
		} else {
			fmt.Fprintf(w, "%-*s%s\n", helpColumn, head, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", helpColumn, "", l)
		}
	})
}

// wrapWords splits text into lines of at most width runes, between words
// (a longer word stands alone on its line).
func wrapWords(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wl := utf8.RuneCountInString(word)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(word)
		n += wl
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
