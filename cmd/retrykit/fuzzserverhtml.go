package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"
)

// serverFuzzHTMLTemplate is the HTML report of fuzz --server: one page in
// the style of the conformance reports, no script, nothing loaded from
// elsewhere. It renders the same serverFuzzReport the JSON format writes.
var serverFuzzHTMLTemplate = template.Must(template.Must(pageHead.Clone()).New("fuzz-server").Parse(`{{template "head" (printf "%s — fuzzing the OJS server at %s" .Verdict .Rep.Server)}}
<body>
<main>
<header>
<p class="verdict {{if .OK}}pass{{else}}fail{{end}}" id="verdict">{{.Verdict}}</p>
<h1>Fuzzing the OJS server at {{.Rep.Server}} against the retrykit reference executor</h1>
<p class="meta">seed {{.Rep.Seed}}, late bound {{.Late}}; oracle: the reference executor, run in process</p>
{{with .Command}}<p class="meta">command: <code>{{.}}</code></p>{{end}}
</header>
<section id="summary">
<h2>Result</h2>
<p>{{if .Rep.Cases}}{{len .Rep.Cases}} {{if eq (len .Rep.Cases) 1}}disagreement{{else}}disagreements{{end}} with the reference executor, shrunk in {{.Rep.Shrinks}} replays in all.{{else}}No disagreement with the reference executor.{{end}}
{{if .Rep.Inconclusive}} {{.Rep.Inconclusive}} cases could not be observed in time, even when played again: neither agreement nor disagreement.{{end}}</p>
{{with .Rep.Stopped}}<p class="warning">stopped early: {{.}}</p>{{end}}
</section>
{{if .Cases}}<section id="causes">
<h2>Disagreements</h2>
{{range .Cases}}<article class="cause" id="{{.Anchor}}">
<h3><code>{{.Kind}}</code> at delivery {{.Step}}</h3>
<p><strong>got:</strong> {{.Got}}</p>
<p class="label">the case (policy and the failures reported, one per delivery)</p><pre>{{.JSON}}</pre>
<p class="repro">Reproduce: <code class="cmd">{{$.Repro}}</code></p>
{{if .File}}<p class="repro">Replay this case: <code class="cmd">{{.Replay}}</code></p>{{else}}<p class="meta">Replay this case: save it as a file, then <code>{{.Replay}}</code> (or run with --out DIR, which writes it).</p>{{end}}
</article>
{{end}}</section>{{end}}
{{if .Rep.Reasons}}<section id="inconclusive">
<h2>Inconclusive</h2>
<ul>{{range .Rep.Reasons}}<li>{{.}}</li>{{end}}</ul>
</section>{{end}}
<section id="figures">
<h2>Figures</h2>
<ul>
<li>{{.Rep.Jobs}} jobs pushed (at most {{.Rep.MaxJobs}}) in {{.Elapsed}}, {{printf "%.1f" .Rep.JobsPerS}} jobs/s</li>
<li>{{.Rep.Reobserved}} plays repeated to observe a case in time</li>
{{with .Rep.Cleanup}}<li>{{.}}</li>{{end}}
</ul>
</section>
</main>
</body>
</html>
`))

type serverFuzzHTMLCase struct {
	Kind, Got, JSON, Anchor, File, Replay string
	Step                                  int
}

// writeServerFuzzHTML writes rep, the report of a fuzz --server run with
// flags f, as one self-contained HTML page: the verdict, each
// disagreement with its case and the commands that reproduce it (the run
// again with its seed, the case replayed), the inconclusive cases and the
// figures.
func writeServerFuzzHTML(w io.Writer, rep *serverFuzzReport, f serverFuzz) error {
	p := struct {
		Rep                    *serverFuzzReport
		OK                     bool
		Verdict, Late, Command string
		Elapsed, Repro         string
		Cases                  []serverFuzzHTMLCase
	}{Rep: rep, OK: len(rep.Cases) == 0, Verdict: "PASS", Late: f.late.String(), Command: f.command,
		Elapsed: time.Duration(rep.Seconds * float64(time.Second)).Round(time.Millisecond).String()}
	if !p.OK {
		p.Verdict = "FAIL"
	}
	p.Repro = fmt.Sprintf("%s fuzz --server %s --seed %d --jobs %d --late-bound %v", self, shellQuote(rep.Server), rep.Seed, rep.MaxJobs, f.late)
	if f.all {
		p.Repro += " --all"
	}
	for i, c := range rep.Cases {
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		hc := serverFuzzHTMLCase{Kind: c.Kind, Got: c.Got, JSON: string(b), Step: c.Step, Anchor: "case-" + strconv.Itoa(i+1)}
		file := "CASE.json"
		if i < len(rep.caseFiles) && rep.caseFiles[i] != "" {
			hc.File, file = rep.caseFiles[i], rep.caseFiles[i]
		}
		hc.Replay = fmt.Sprintf("%s fuzz --server %s --replay %s", self, shellQuote(rep.Server), shellQuote(file))
		p.Cases = append(p.Cases, hc)
	}
	return serverFuzzHTMLTemplate.Execute(w, p)
}
