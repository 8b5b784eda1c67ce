package main

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// pageHead defines "head", the start of the fuzz reports' pages up to
// </head>, given the title: the conformance reports' style inline, a
// policy that lets no script run and nothing load from elsewhere
// (conformance.ReportPolicy), a viewport for phones.
var pageHead = template.Must(template.New("head").Funcs(template.FuncMap{
	"css": func() template.CSS { return template.CSS(conformance.ReportCSS()) },
	"csp": func() string { return conformance.ReportPolicy },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}</title>
<style>{{css}}</style>
</head>`))

// fuzzHTMLTemplate is the HTML report of fuzz: one page in the style of
// the conformance reports (conformance.ReportCSS), no script, nothing
// loaded from elsewhere.
var fuzzHTMLTemplate = template.Must(template.Must(pageHead.Clone()).New("fuzz").Parse(`{{template "head" (printf "%s — fuzzing %s" .Verdict .Impl)}}
<body>
<main>
<header>
<p class="verdict {{if .OK}}pass{{else}}fail{{end}}" id="verdict">{{.Verdict}}</p>
<h1>Differential fuzzing of {{.Impl}} against the retrykit reference</h1>
<p class="meta">jitter {{.Jitter}}, resolution {{.Resolution}} ns, seed {{.Seed}}</p>
{{with .Command}}<p class="meta">command: <code>{{.}}</code></p>{{end}}
</header>
<section id="ops-section">
<h2>Ops</h2>
<div class="scroll"><table id="ops">
<thead><tr><th>op</th><th>result</th><th class="num">cases</th><th class="num">planned</th><th class="num">not sent</th><th class="num">unsupported</th></tr></thead>
<tbody>{{range .Ops}}<tr{{if .Bad}} class="bad"{{end}}><td><code>{{.Op}}</code></td><td>{{if .Anchor}}<a href="#{{.Anchor}}">{{.Status}}</a>{{else}}{{.Status}}{{end}}</td><td class="num">{{.Cases}}</td><td class="num">{{.Planned}}</td><td class="num">{{.Skipped}}</td><td class="num">{{.Unsupported}}</td></tr>
{{end}}</tbody></table></div>
<p class="meta">not sent: requests carrying a flag the implementation does not claim; unsupported: answered "unsupported" (not covered).</p>
{{with .Stopped}}<p class="warning">{{.}}</p>{{end}}
</section>
{{if .Findings}}<section id="causes">
<h2>Disagreements and failures</h2>
{{range $f := .Findings}}<article class="cause" id="{{.Anchor}}">
<h3><code>{{.Op}}</code> {{.Title}}</h3>
{{with .Cause}}<p><strong>Cause:</strong> <code>{{.}}</code></p>{{end}}
{{with .Fix}}<p><strong>Fix:</strong> {{.}}</p>{{end}}
{{with .Rule}}<p class="meta">Rule: {{if $f.RuleURL}}<a href="{{$f.RuleURL}}">{{.}}</a>{{else}}{{.}}{{end}}</p>{{end}}
{{with .Reason}}<p><strong>reason:</strong> {{.}}</p>{{end}}
{{with .Sent}}<p class="label">sent</p><pre>{{.}}</pre>{{end}}
{{with .Expected}}<p class="label">expected (reference)</p><pre>{{.}}</pre>{{end}}
{{with .Got}}<p class="label">got</p><pre>{{.}}</pre>{{end}}
{{with .Stderr}}<p class="label">adapter standard error</p><pre>{{.}}</pre>{{end}}
<p class="repro">Reproduce: <code class="cmd">{{.Repeat}}</code></p>
{{with .Replay}}<p class="repro">Replay the written {{$.Kind .}}: <code class="cmd">{{.}}</code></p>{{end}}
{{with .Unclaim}}<p>Without the feature: <code class="cmd">{{.}}</code></p>{{end}}
</article>
{{end}}</section>{{end}}
<section id="figures">
<h2>Figures</h2>
<ul><li>{{.Total}} cases in {{.Elapsed}} ({{.Rate}} cases/s)</li></ul>
</section>
</main>
</body>
</html>
`))

type fuzzHTMLOp struct {
	Op                                   string
	Cases, Planned, Skipped, Unsupported int
	Status, Anchor                       string
	Bad                                  bool
	Title, Cause, Fix, Rule, Reason      string
	Sent, Expected, Got, Stderr          string
	Repeat, Replay, Unclaim, RuleURL     string
}

type fuzzHTMLPage struct {
	OK                    bool
	Verdict, Impl, Jitter string
	Resolution            int64
	Seed                  uint64
	Command               string
	Ops, Findings         []fuzzHTMLOp
	Stopped               string
	Total                 int
	Elapsed, Rate         string
}

// Kind names what a replay command replays.
func (fuzzHTMLPage) Kind(cmd string) string {
	if strings.Contains(cmd, "--scenarios-dir") {
		return "scenario"
	}
	return "vector"
}

// writeFuzzHTML writes the fuzz report as one self-contained HTML page:
// the verdict, the ops, each disagreement with its cause, fix, the request
// sent, the reference's answer and the implementation's, and the commands
// that reproduce it (fuzz again with the seed; the written vector or
// scenario), and the throughput.
func writeFuzzHTML(w io.Writer, res *fuzz.Result, command string, repro func(string) string, replay func(id, dirFlags string) string, vectors map[string][2]string) error {
	h := res.Hello
	p := fuzzHTMLPage{OK: res.OK(), Verdict: "PASS", Impl: strings.TrimSpace(h.Implementation + " " + h.Version),
		Jitter: h.Jitter, Resolution: h.ResolutionNS, Seed: res.Seed, Command: command,
		Elapsed: res.Elapsed.Round(time.Millisecond).String()}
	if !p.OK {
		p.Verdict = "FAIL"
	}
	planned := 0
	for _, o := range res.Ops {
		p.Total += o.Cases
		planned += o.Planned
		row := fuzzHTMLOp{Op: o.Op, Cases: o.Cases, Planned: o.Planned, Skipped: o.Skipped, Unsupported: o.Unsupported, Status: "ok"}
		if o.OutOfTime {
			row.Status = "ok, out of time"
		}
		switch {
		case o.Disagreement != nil:
			d := o.Disagreement
			c := causeOf(o, h.Jitter == protocol.JitterOpaque)
			row.Status, row.Bad, row.Anchor = "disagreement", true, "op-"+o.Op
			f := row
			f.Title = "minimal disagreement (shrunk in " + o.Shrink.Round(time.Millisecond).String() + ")"
			f.Reason, f.Sent, f.Expected, f.Got = d.Reason, string(d.Request.AppendJSON(nil)), string(d.Want.AppendJSON(nil)), string(d.Got.AppendJSON(nil))
			f.Rule, f.RuleURL = c.Requirement, conformance.SpecURL(c.Requirement, c.Section)
			if c.Section != "" {
				f.Rule += ", section " + c.Section
			}
			if c.Found() {
				f.Cause, f.Fix = "bug:"+c.Model.Name, c.Model.Fix
				if u := c.Model.Unclaim(); u != "" {
					f.Unclaim = repro(o.Op) + unclaimedArgs(strings.Split(u, ","))
				}
			} else {
				f.Cause = "no bug model reproduces this answer"
			}
			f.Repeat = repro(o.Op)
			if v, ok := vectors[o.Op]; ok && o.Op == protocol.OpScenario {
				f.Replay = replay(v[1], "--scenarios-dir "+shellQuote(filepath.Dir(v[0])))
			} else if ok {
				f.Replay = replay(v[1], "--vectors "+shellQuote(filepath.Dir(v[0]))+" --scenarios=false")
			}
			p.Findings = append(p.Findings, f)
		case o.Failure != nil:
			row.Status, row.Bad, row.Anchor = "adapter failure", true, "op-"+o.Op
			f := row
			f.Title = "the adapter failed"
			f.Reason, f.Repeat = o.Failure.Error(), repro(o.Op)
			if o.FailedRequest != nil {
				f.Sent = string(o.FailedRequest.AppendJSON(nil))
			}
			var ae *protocol.AdapterError
			if errors.As(o.Failure, &ae) {
				f.Stderr = strings.TrimRight(ae.Stderr, "\n")
			}
			p.Findings = append(p.Findings, f)
		}
		p.Ops = append(p.Ops, row)
	}
	if res.OutOfTime || res.Stopped {
		why := "the --time budget"
		if res.Stopped {
			why = "an interrupt"
		}
		p.Stopped = fmt.Sprintf("stopped by %s: %d of %d cases sent", why, p.Total, planned)
	}
	p.Rate = fmt.Sprintf("%.0f", float64(p.Total)/max(res.Elapsed.Seconds(), 1e-9))
	return fuzzHTMLTemplate.Execute(w, p)
}

// fuzzCommandLine returns "retrykit fuzz" (self) and args, quoted for a
// shell.
func fuzzCommandLine(args []string) string {
	parts := []string{self, "fuzz"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}
