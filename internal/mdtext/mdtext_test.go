package mdtext_test

import (
	"strings"
	"testing"

	"github.com/retrykit/retrykit/internal/mdtext"
)

// TestEscapeLeavesNoMarkup: after escaping, no character that opens a
// tag, a link, an image, a code span or emphasis, or splits a table cell,
// stands unescaped, and the text is on one line.
func TestEscapeLeavesNoMarkup(t *testing.T) {
	for _, s := range []string{
		"[docs](https://evil.example)", "![x](https://host/t.png)", "<img src=x onerror=alert(1)>",
		"a|b", "`code`", "**bold**", `back\slash[`, "two\nlines\r",
	} {
		got := mdtext.Escape(s)
		if strings.ContainsAny(got, "<>\n\r") {
			t.Errorf("%q → %q: a tag character or line break left", s, got)
		}
		for i, r := range got {
			if !strings.ContainsRune("|[]`*", r) {
				continue
			}
			n := 0 // backslashes just before: an odd number escapes r
			for j := i - 1; j >= 0 && got[j] == '\\'; j-- {
				n++
			}
			if n%2 == 0 {
				t.Errorf("%q → %q: %q at %d not escaped", s, got, r, i)
			}
		}
	}
}
