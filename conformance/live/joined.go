// One mechanism, one cause: the no-merge models of a run joined.

package live

import (
	"strconv"
	"strings"

	"github.com/retrykit/retrykit/conformance"
)

// noMergePrefix names the bug models of a partial policy stored without
// the defaults, one model a field (servermodel: no-merge-max-attempts,
// no-merge-jitter, ...).
const noMergePrefix = "bug:no-merge-"

// joinNoMerge joins the causes of two or more no-merge models into one
// cause, bug:no-defaults-merge(FIELD,...), the fields in the order the
// causes came: a server that stores a partial policy without merging it
// over the defaults shows the one mechanism in every field it leaves
// absent, and is one bug to fix (merge field by field), not several. The
// joined cause explains the union of the checks, is replayed on the union
// of the passing checks its parts were replayed on (passes maps a cause's
// class to those checks; each part was replayed alone, and none is
// contradicted), and its explanation lists each field's fix. One no-merge
// cause alone is left as it is.
func joinNoMerge(causes []conformance.Cause, passes map[string][]string) []conformance.Cause {
	var parts []int
	for i, c := range causes {
		if c.Reproduced && strings.HasPrefix(c.Class, noMergePrefix) {
			parts = append(parts, i)
		}
	}
	if len(parts) < 2 {
		return causes
	}
	var fields, fixes []string
	joined := conformance.Cause{Reproduced: true}
	seen := map[string]bool{}
	add := func(to *[]string, ids []string) {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				*to = append(*to, id)
			}
		}
	}
	names := map[string]bool{}
	for _, i := range parts {
		c := causes[i]
		fields = append(fields, strings.ReplaceAll(strings.TrimPrefix(c.Class, noMergePrefix), "-", "_"))
		names[strings.TrimPrefix(c.Class, "bug:")] = true
		fixes = append(fixes, c.Explanation)
		add(&joined.IDs, c.IDs)
	}
	clear(seen)
	var replayed []string
	for _, i := range parts {
		add(&replayed, passes[causes[i].Class])
	}
	n := len(replayed)
	joined.PassesReplayed = &n
	clear(seen)
	for _, i := range parts {
		for _, eq := range causes[i].Equivalent {
			if !names[eq] && !seen[eq] {
				seen[eq] = true
				joined.Equivalent = append(joined.Equivalent, eq)
			}
		}
	}
	joined.Class = "bug:no-defaults-merge(" + strings.Join(fields, ",") + ")"
	joined.Explanation = "a partial policy is stored without the defaults, in " + strconv.Itoa(len(fields)) + " fields: " + strings.Join(fixes, "; ")
	out := make([]conformance.Cause, 0, len(causes)-len(parts)+1)
	for i, c := range causes {
		switch {
		case i == parts[0]:
			out = append(out, joined)
		case strings.HasPrefix(c.Class, noMergePrefix) && c.Reproduced:
		default:
			out = append(out, c)
		}
	}
	return out
}
