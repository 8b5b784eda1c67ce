// Package mdtext keeps text from a report (an implementation's name, a
// reason, a figure) as text in Markdown, which GitHub renders in step
// summaries and pull requests: a tag, a link, an image or a code span in
// the text must not become one, and a "|" must not split a table cell.
package mdtext

import "strings"

// Escape returns s written so that Markdown shows it as it is, on one
// line: "|", "[", "]", "`" and "*" escaped with a backslash (a table cell
// stays one cell; "![x](url)" and "[x](url)" are neither image nor link),
// "<", ">" and "&" as entities (Markdown renders inline HTML), and line
// breaks as spaces. It is for text outside code spans, where backslash
// escapes are read.
func Escape(s string) string { return replacer.Replace(s) }

var replacer = strings.NewReplacer(
	"|", `\|`, "[", `\[`, "]", `\]`, "`", "\\`", "*", `\*`, `\`, `\\`,
	"\n", " ", "\r", " ",
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
)
