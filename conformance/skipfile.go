package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/internal/bounded"
)

// SkipList maps vector ids to the reason they are expected to fail (a
// known-failure list). A nil SkipList skips nothing.
//
// The file format (read by [ParseSkipList], written by [WriteSkipList]) is
// line-based: blank lines and lines starting with '#' are ignored; otherwise
// the first whitespace-separated word is a vector id, and the rest of the
// line, after an optional '#', is the reason.
//
//	# known failures of my-queue 2.4.0
//	delay-0083   # RET-06: no cap after jitter
//	delay-0092   # [draw-dependent] fail RET-06: outside the jitter bounds
//	dur-0079
type SkipList map[string]string

// MaxSkipLine bounds a skip-file entry, in bytes: its id and reason
// written as "id  # reason" (the form [WriteSkipList] writes) must fit, so
// that every accepted file reads back the same. A raw line may run 64
// bytes longer (blanks).
const MaxSkipLine = 64 << 10

// maxSkipFileSize and maxSkipEntries bound a whole skip file: the suite
// has about a thousand vectors, so a larger file is not a skip list (a
// wrong path, a device).
const (
	maxSkipFileSize = 16 << 20
	maxSkipEntries  = 100_000
)

// ParseSkipList reads a skip file, of at most 16 MiB and 100 000 ids. An
// entry longer than [MaxSkipLine] bytes is an error.
func ParseSkipList(r io.Reader) (SkipList, error) {
	data, err := bounded.Read(r, maxSkipFileSize)
	if err != nil {
		return nil, fmt.Errorf("conformance: skip file: %w", err)
	}
	s := SkipList{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4<<10), MaxSkipLine+64)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		id, rest, _ := strings.Cut(t, " ")
		if i := strings.IndexByte(id, '\t'); i >= 0 {
			id, rest = id[:i], id[i+1:]+" "+rest
		}
		rest = strings.TrimSpace(rest)
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "#"))
		if len(id)+len("  # ")+len(rest) > MaxSkipLine {
			return nil, fmt.Errorf("conformance: skip file line %d: entry longer than %d bytes", line, MaxSkipLine)
		}
		if len(s) == maxSkipEntries {
			return nil, fmt.Errorf("conformance: skip file line %d: more than %d ids", line, maxSkipEntries)
		}
		if _, dup := s[id]; dup {
			return nil, fmt.Errorf("conformance: skip file line %d: %s listed twice", line, id)
		}
		s[id] = rest
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, fmt.Errorf("conformance: skip file line %d: longer than %d bytes", line+1, MaxSkipLine)
		}
		return nil, fmt.Errorf("conformance: skip file: %w", err)
	}
	return s, nil
}

// drawDependentMark starts the reason of a skip-file entry whose verdict
// depends on the implementation's own random draws.
const drawDependentMark = "[draw-dependent]"

// drawDependentEntry reports whether a skip-file reason marks its vector
// as draw-dependent.
func drawDependentEntry(reason string) bool { return strings.HasPrefix(reason, drawDependentMark) }

// WriteSkipList writes the vectors of rep that failed or errored as a skip
// file, one per line with the class, requirement and reason as a comment, so
// that a CI run can start from the current state and, in strict mode, notice
// every fix. Vectors already skipped in rep (still failing) are kept. A
// vector whose verdict depends on the implementation's own draws is marked
// "[draw-dependent]": in strict mode, such an entry that passes is stale
// only when it passed in every run of [WithRepeat] (K > 1); with one run it
// stays skipped, since another draw may fail it again.
func WriteSkipList(w io.Writer, rep *Report) error {
	ew := &errWriter{w: w}
	ew.printf("# retrykit conformance known failures: %s, suite %s\n", strings.TrimSpace(rep.Implementation.Implementation+" "+rep.Implementation.Version), rep.SuiteVersion)
	ew.printf("# one vector id per line; the rest of the line is the reason\n")
	var lines []string
	for _, res := range rep.Results {
		if res.Status == StatusPass {
			continue
		}
		if res.Status == StatusFail && strings.HasPrefix(res.Reason, stalePrefix) {
			continue
		}
		if res.Kind == "skip-file" {
			continue // an unknown id of the skip file read, not a vector
		}
		reason := strings.ReplaceAll(res.Reason, "\n", " ")
		if len(reason) > 160 {
			reason = reason[:160] + "…"
		}
		mark := ""
		if res.Random {
			mark = drawDependentMark + " "
		}
		lines = append(lines, fmt.Sprintf("%s  # %s%s %s: %s", res.ID, mark, res.Status, res.Requirement, reason))
	}
	sort.Strings(lines)
	for _, l := range lines {
		ew.printf("%s\n", l)
	}
	return ew.err
}
