package conformance

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
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
//	dur-0079
type SkipList map[string]string

// ParseSkipList reads a skip file.
func ParseSkipList(r io.Reader) (SkipList, error) {
	s := SkipList{}
	sc := bufio.NewScanner(r)
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
		if _, dup := s[id]; dup {
			return nil, fmt.Errorf("conformance: skip file line %d: %s listed twice", line, id)
		}
		s[id] = rest
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("conformance: skip file: %w", err)
	}
	return s, nil
}

// WriteSkipList writes the vectors of rep that failed or errored as a skip
// file, one per line with the class, requirement and reason as a comment, so
// that a CI run can start from the current state and, in strict mode, notice
// every fix. Vectors already skipped in rep (still failing) are kept.
func WriteSkipList(w io.Writer, rep *Report) error {
	ew := &errWriter{w: w}
	ew.printf("# retrykit conformance known failures: %s %s, suite %s\n", rep.Implementation.Implementation, rep.Implementation.Version, rep.SuiteVersion)
	ew.printf("# one vector id per line; the rest of the line is the reason\n")
	var lines []string
	for _, res := range rep.Results {
		if res.Status == StatusPass {
			continue
		}
		if res.Status == StatusFail && strings.HasPrefix(res.Reason, stalePrefix) {
			continue
		}
		reason := strings.ReplaceAll(res.Reason, "\n", " ")
		if len(reason) > 160 {
			reason = reason[:160] + "…"
		}
		lines = append(lines, fmt.Sprintf("%s  # %s %s: %s", res.ID, res.Status, res.Requirement, reason))
	}
	sort.Strings(lines)
	for _, l := range lines {
		ew.printf("%s\n", l)
	}
	return ew.err
}
