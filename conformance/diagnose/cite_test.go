package diagnose_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance/diagnose"
)

// A fix that names a topic cites the decision row about that topic: the
// rows are read from docs/decisions.md, and a fix about duplicate keys (or
// unknown fields, or PT0S) must cite a row whose question is about them.
func TestFixesCiteTheRowOfTheirTopic(t *testing.T) {
	doc, err := os.ReadFile("../../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	question := map[string]string{} // RK-nn -> the row's question
	for _, m := range regexp.MustCompile(`(?m)^\| (RK-\d+) \| ([^|]*)\|`).FindAllStringSubmatch(string(doc), -1) {
		question[m[1]] = strings.ToLower(m[2])
	}
	if len(question) < 100 {
		t.Fatalf("read %d decision rows", len(question))
	}
	topics := []struct {
		fix      *regexp.Regexp // the topic in a fix
		question string         // a word of the question of the row to cite
	}{
		{regexp.MustCompile(`(?i)duplicate key|repeats a key`), "duplicate"},
		{regexp.MustCompile(`(?i)unknown (policy )?fields?`), "unknown"},
		{regexp.MustCompile(`PT0S`), "pt0s"},
	}
	checked := 0
	for _, m := range diagnose.Models() {
		cited := regexp.MustCompile(`RK-\d+`).FindAllString(m.Fix, -1)
		for _, c := range cited {
			if question[c] == "" {
				t.Errorf("%s cites %s, which docs/decisions.md has no row for", m.Name, c)
			}
		}
		if len(cited) == 0 {
			continue
		}
		for _, tp := range topics {
			if !tp.fix.MatchString(m.Fix) {
				continue
			}
			checked++
			ok := false
			for _, c := range cited {
				ok = ok || strings.Contains(question[c], tp.question)
			}
			if !ok {
				t.Errorf("%s: the fix %q is about %q but cites %v, none of them the row about it", m.Name, m.Fix, tp.question, cited)
			}
		}
	}
	if checked < 3 {
		t.Errorf("only %d fixes about the topics checked", checked)
	}
}
