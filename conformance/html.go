package conformance

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

// maxEvidence bounds the results a cause shows with want and got in the
// HTML format; the rest are listed by id.
const maxEvidence = 5

//go:embed report.css
var reportCSS string

// ReportCSS returns the style sheet the HTML format inlines, for pages
// that show reports beside it (the scoreboard).
func ReportCSS() string { return reportCSS }

// ReportPolicy is the Content-Security-Policy every HTML page of retrykit
// carries (reports, fuzz reports, the scoreboard): no script runs, nothing
// is loaded from elsewhere, styles are inline, images (badges) come from
// the page's own site. A name that slipped through escaping could still
// not run; a browser shows the page as it does with JavaScript off.
const ReportPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"

// htmlTemplate is the HTML format: one page, its style inline, no script
// and nothing loaded from elsewhere, so that it reads the same offline.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"css":    func() template.CSS { return template.CSS(reportCSS) },
	"csp":    func() string { return ReportPolicy },
	"join":   func(s []string) string { return strings.Join(s, ", ") },
	"anchor": resultAnchor,
	"lower":  strings.ToLower,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.M.Verdict}} — {{.M.Title}}</title>
<style>{{css}}</style>
</head>
<body>
<main>
<header>
<p class="verdict {{lower .M.Verdict}}" id="verdict">{{.M.Verdict}}</p>
<h1>{{.M.Title}}</h1>
{{with .R.Implementation}}{{if .Protocol}}<p class="meta">protocol {{.Protocol}}, resolution {{.ResolutionNS}} ns, jitter {{.Jitter}}, ops {{join .Ops}}</p>{{end}}{{end}}
{{with .R.Command}}<p class="meta">command: <code>{{.}}</code></p>{{end}}
{{range .R.Warnings}}<p class="warning">warning: {{.}}</p>{{end}}
</header>

<section id="scores-section">
<h2>Scores</h2>
{{template "table" .M.Scores}}
{{if .M.SpecOnly}}<p>Spec-only run (MUST level only): <code>{{.M.SpecOnly}}</code></p>{{else}}<p>This is the spec-only run: SHOULD-level features and retrykit decisions were not selected.</p>{{end}}
{{if .R.ScenariosLeftOut}}<p>{{.R.ScenariosLeftOut}} executor scenarios left out of the scores and coverage: the implementation does not list the scenario op.</p>{{end}}
<p class="totals">{{.M.Totals}}</p>
</section>

{{if .M.Causes}}
<section id="causes">
<h2>Failures by cause</h2>
{{template "table" .M.CauseTable}}
{{range .Causes}}
<article class="cause" id="{{.V.Anchor}}">
<h3><code>{{.V.Class}}</code> <span class="count">{{len .V.IDs}} {{if eq (len .V.IDs) 1}}result{{else}}results{{end}}</span></h3>
{{if .V.Reproduced}}<p><strong>Fix:</strong> {{.V.Explanation}}</p>
<p class="meta">A bug model that reproduces every answer it claims; contradicted by {{len .V.Contradicted}} {{if eq (len .V.Contradicted) 1}}pass{{else}}passes{{end}}{{if .V.Contradicted}} ({{join .V.Contradicted}}){{end}}.</p>
{{if .V.Equivalent}}<p class="meta">Equally explained by: {{join .V.Equivalent}}</p>{{end}}
{{if .V.Unclaim}}<p>Without the feature: <code class="cmd">{{.V.Unclaim}}</code></p>{{end}}
{{else}}<p>{{.V.Explanation}}</p>
<p class="meta">Not reproduced by any bug model: grouped by what was observed.</p>
{{with .V.Reproduction}}<p>Smallest reproduction:</p><pre>{{.}}</pre>{{end}}{{end}}
<p class="meta">Requirements: {{.V.Requirements}}</p>
<p class="repro">Reproduce: <code class="cmd">{{.V.Reproduce}}</code></p>
<h4>Evidence</h4>
{{range .Evidence}}{{template "result" .}}{{end}}
{{if .More}}<p class="meta">and {{len .More}} more: {{range $i, $id := .More}}{{if $i}}, {{end}}<a href="#{{anchor $id}}">{{$id}}</a>{{end}}</p>{{end}}
</article>
{{end}}
</section>
{{end}}

{{if .M.Random}}
<section id="draws">
<h2>Draw-dependent verdicts</h2>
<p>{{len .M.Random}} verdicts depend on the implementation's own random draws; another run can judge them differently: {{join .M.Random}}.</p>
{{if gt .M.Repeat 1}}<p>Run {{.M.Repeat}} times each{{if .M.Flipped}}; flipped: {{join .M.Flipped}}{{else}}; none flipped{{end}}.</p>{{else}}<p>Run once; <code>--repeat K</code> runs them K times and reports any that flip.</p>{{end}}
</section>
{{end}}

{{if .M.Figures}}
<section id="figures">
<h2>Figures</h2>
<ul>{{range .M.Figures}}<li>{{.}}</li>{{end}}</ul>
</section>
{{end}}

<section id="requirements-section">
<h2>Requirements</h2>
<p class="meta">Each requirement links to its spec section; a requirement with a failure links to its first failing result.</p>
{{template "table" .M.Requirements}}
</section>

{{if .Problems}}
<section id="results">
<h2>Failures, errors and skips</h2>
{{template "table" .M.Problems}}
{{range .Problems}}{{template "result" .}}{{end}}
</section>
{{end}}

{{if .M.NotRun}}
<section id="not-run">
<h2>Not run (coverage)</h2>
<ul>{{range .M.NotRun}}<li>{{.}}</li>{{end}}</ul>
</section>
{{end}}
<footer><p class="meta">suite {{.R.SuiteVersion}}, spec {{.R.SpecVersion}}, {{.Elapsed}}. Written by retrykit.</p></footer>
</main>
</body>
</html>
{{define "table"}}<div class="scroll"><table id="{{.ID}}">
<thead><tr>{{range $i, $h := .Head}}<th{{if $.IsNum $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>{{range $r, $row := .Rows}}<tr{{with $.RowID $r}} id="{{.}}"{{end}}{{if $.IsBad $r}} class="bad"{{end}}>{{range $i, $c := $row}}<td{{if $.IsNum $i}} class="num"{{end}}>{{if eq $i 0}}{{with $.Start $r}}<span id="{{.}}"></span>{{end}}{{end}}{{if $c.Href}}<a href="{{$c.Href}}">{{end}}{{if $c.Code}}<code>{{$c.Text}}</code>{{else}}{{$c.Text}}{{end}}{{if $c.Href}}</a>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{define "result"}}<details class="result {{.Status}}"{{with .Anchor}} id="{{.}}"{{end}}{{if .Open}} open{{end}}>
<summary><span class="status">{{.Status}}</span> <code>{{.ID}}</code> {{.Requirement}}{{with .Section}} §{{.}}{{end}}</summary>
<p>{{.Description}}</p>
{{with .Reason}}<p><strong>reason:</strong> {{.}}</p>{{end}}
{{with .Want}}<p class="label">want</p><pre>{{.}}</pre>{{end}}
{{with .Got}}<p class="label">got</p><pre>{{.}}</pre>{{end}}
{{with .Stderr}}<p class="label">adapter standard error</p><pre>{{.}}</pre>{{end}}
</details>
{{end}}`))

// htmlResult is a result as the HTML format shows it.
type htmlResult struct {
	ID, Requirement, Section, Description, Status, Reason, Want, Got, Stderr string
	// Anchor is the HTML id of the result: set where the report lists
	// every failure, not in a cause's evidence, which repeats some.
	Anchor string
	Open   bool
}

type htmlCause struct {
	V        causeView
	Evidence []htmlResult
	More     []string
}

func toHTMLResult(res *Result, anchor string, open bool) htmlResult {
	reason := res.Reason
	if res.Status.erroneous() {
		reason = errorReason(*res)
	}
	return htmlResult{ID: res.ID, Requirement: res.Requirement, Section: res.Section, Description: res.Description,
		Status: res.Status.String(), Reason: reason, Want: compactJSON(res.Want), Got: compactJSON(res.Got), Stderr: res.Stderr, Anchor: anchor, Open: open}
}

// writeHTML writes the report as one self-contained HTML page: the
// verdict and scores, the causes (each with its fix, the command that
// reproduces it and the evidence: want and got of its first results), the
// figures, the requirement table linking each requirement to its spec
// section, and every failure, error and skip. It draws the tables of the
// model shared with Markdown and JUnit.
func (r *Report) writeHTML(w io.Writer) error {
	m := r.buildModel()
	byID := r.byID()
	data := struct {
		R        *Report
		M        *model
		Causes   []htmlCause
		Problems []htmlResult
		Elapsed  string
	}{R: r, M: m, Elapsed: r.Elapsed.Round(1e6).String()}
	for _, c := range m.Causes {
		hc := htmlCause{V: c}
		for i, id := range c.IDs {
			if i >= maxEvidence {
				hc.More = c.IDs[i:]
				break
			}
			if res := byID[id]; res != nil {
				hc.Evidence = append(hc.Evidence, toHTMLResult(res, "", i == 0))
			}
		}
		data.Causes = append(data.Causes, hc)
	}
	for i := range r.Results {
		if r.Results[i].Status != StatusPass {
			data.Problems = append(data.Problems, toHTMLResult(&r.Results[i], resultAnchor(r.Results[i].ID), false))
		}
	}
	return htmlTemplate.Execute(w, data)
}
