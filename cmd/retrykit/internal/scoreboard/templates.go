package scoreboard

import (
	"html/template"

	"github.com/retrykit/retrykit/conformance"
)

// siteCSS adds the scoreboard's cells and chart to the reports' style.
const siteCSS = `
main{max-width:96rem}
td.badges{white-space:nowrap}
p.badges img{max-width:100%;height:auto}
td.cell{text-align:center;white-space:nowrap}
td.cell.ok{background:#e7f5ea}td.cell.bad{background:#fdecea}td.cell.none{color:#57606a}
td.cell a{display:block;color:inherit;text-decoration:none}
.score.bad{color:#b42318;font-weight:600}.score.ok{color:#146c2e}
th{white-space:nowrap}
span.partial{font-size:.8em;background:#fff8c5;border:1px solid #d4a72c;border-radius:3px;padding:0 .3em;white-space:nowrap}
svg.history{max-width:40rem;display:block;margin:.5rem 0}
nav{margin:.3rem 0 1rem}
table.board td:first-child,table.board th:first-child{position:sticky;left:0;background:#fff;z-index:1}
table.board th:first-child{background:#f6f8fa}
table.interop-table td{min-width:10em}table.interop-table td:first-child{text-align:left;white-space:normal}
`

// funcs are the templates' functions: csp, the pages' policy.
var funcs = template.FuncMap{"csp": func() string { return conformance.ReportPolicy }}

var indexTemplate = template.Must(template.New("index").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>OJS retry conformance scoreboard</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1>OJS retry conformance scoreboard</h1>
<p class="meta">{{.Count}} implementations. Each table holds the reports of one suite version: scores of different suite versions are never mixed. A cell counts the requirements of a group (RET: ojs-retry, CORE: ojs-core, DLQ: ojs-dead-letter, TMO: ojs-timeouts, HTTP: the HTTP binding, RK: retrykit's readings where the spec is silent) that passed, of those the report judged, and links to that group in the report.</p>
{{range .Tables}}
<section class="suite" id="suite-{{.Suite}}">
<h2>{{if .Live}}OJS servers over HTTP — live checker {{.Suite}}{{else}}Libraries and adapters — suite {{.Suite}}{{end}} (spec {{.Spec}})</h2>
<div class="scroll"><table class="board">
<thead><tr><th>implementation</th><th>version</th><th class="num">MUST</th><th class="num">SHOULD</th><th class="num">RK</th>{{range .Columns}}<th>{{.}}-*</th>{{end}}<th class="num">causes</th><th>badge</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="impl-row"><td><a href="{{.Href}}">{{.Name}}</a></td><td>{{.Version}}{{with .Partial}} <span class="partial" title="{{.}}">partial run</span>{{end}}</td>{{range .Scores}}<td class="num score {{.Class}}">{{.Text}}</td>{{end}}{{$r := .}}{{range .Cells}}<td class="cell {{.Class}}">{{if .Total}}<a href="{{$r.Report}}#{{.Anchor}}" title="{{.Name}}: {{.Pass}} of {{.Total}} requirements passed, {{.Bad}} failed">{{.Pass}}/{{.Total}}</a>{{else}}–{{end}}</td>{{end}}<td class="num">{{if .Causes}}<a href="{{.Report}}#causes">{{.Causes}}</a>{{else}}0{{end}}</td><td class="badges"><img src="{{.Badge}}" alt="badge of {{.Name}}"></td></tr>
{{end}}</tbody></table></div>
</section>
{{end}}
{{range $i, $t := .Interop}}
<section class="interop" id="interop-{{$i}}">
<h2>Clients against {{.Against}}</h2>
<p class="meta">Tried by hand{{with .Date}} on {{.}}{{end}}, no score: what works and what fails, as {{.Source}} records it.</p>
<div class="scroll"><table class="interop-table">
<thead><tr><th>client</th><th>works</th><th>fails, and where</th></tr></thead>
<tbody>{{range .Rows}}<tr class="interop-row"><td class="cell {{.Class}}">{{.Name}}</td><td>{{.Works}}</td><td>{{.Fails}}</td></tr>
{{end}}</tbody></table></div>
</section>
{{end}}
{{if .Skipped}}<section id="skipped"><h2>Files left out</h2><ul>{{range .Skipped}}<li>{{.}}</li>{{end}}</ul></section>{{end}}
<footer><p class="meta">Built by <code>retrykit scoreboard</code> from JSON reports of <code>retrykit conformance --format json</code>. Each report's full page is under reports/.</p></footer>
</main>
</body>
</html>
`))

var implTemplate = template.Must(template.New("impl").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}} — OJS retry conformance</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<nav><a href="../index.html">← scoreboard</a></nav>
<h1>{{.Name}}</h1>
<p class="badges"><img src="../badges/{{.Slug}}.svg" alt="badge of {{.Name}}"></p>
<p class="meta">Badge for a README: <code>{{.Markdown}}</code></p>
{{range .Sections}}
<section class="suite" id="{{.Anchor}}">
<h2>{{if .Live}}Live checker {{.Suite}} (OJS server over HTTP){{else}}Suite {{.Suite}}{{end}}, spec {{.Spec}}</h2>
<h3>Latest: {{.Latest.Label}}</h3>
{{with .Latest.Partial}}<p class="warning">{{.}}: its scores are not those of the whole suite.</p>{{end}}
<div class="scroll"><table>
<thead><tr><th>MUST</th><th>SHOULD</th><th>RK</th>{{range .Cells}}<th>{{.Name}}-*</th>{{end}}</tr></thead>
<tbody><tr>{{range .Latest.Scores}}<td class="score {{.Class}}">{{.Text}}</td>{{end}}{{$l := .Latest}}{{range .Cells}}<td class="cell {{.Class}}"><a href="{{$l.Href}}#{{.Anchor}}">{{.Pass}}/{{.Total}}</a></td>{{end}}</tr></tbody>
</table></div>
<p><a href="{{.Latest.Href}}">Full report</a> · <a href="{{.Latest.JSON}}">JSON</a></p>
{{if .Causes}}<h3>Causes in the latest report</h3>
<ul class="causes">{{range .Causes}}<li><a href="{{.Href}}"><code>{{.Class}}</code></a> ({{.Count}}): {{.Explanation}}</li>{{end}}</ul>{{end}}
{{if .Figures}}<h3>Figures</h3><ul>{{range .Figures}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h3>History</h3>
<figure class="chart">{{.Chart}}<figcaption class="meta">Share of passes among judged results per report, by level; history order is the implementation's version, then the report's file name.</figcaption></figure>
<div class="scroll"><table class="history-table">
<thead><tr><th>report</th><th class="num">MUST</th><th class="num">SHOULD</th><th class="num">RK</th><th class="num">fail</th><th class="num">error</th><th class="num">causes</th></tr></thead>
<tbody>{{range .History}}<tr><td><a href="{{.Href}}">{{.Label}}</a>{{with .Partial}} <span class="partial" title="{{.}}">partial run</span>{{end}}</td>{{range .Scores}}<td class="num score {{.Class}}">{{.Text}}</td>{{end}}<td class="num">{{.Fail}}</td><td class="num">{{.Error}}</td><td class="num">{{.Causes}}</td></tr>
{{end}}</tbody></table></div>
</section>
{{end}}
</main>
</body>
</html>
`))
