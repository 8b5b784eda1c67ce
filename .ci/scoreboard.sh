#!/usr/bin/env bash
# The scoreboard and the HTML reports as a person sees them, and the
# GitHub Action's steps run here:
#
#  1. builds the site from the committed reports (docs/scoreboard/reports)
#     and an HTML report of a run with causes (a planted adapter), every
#     format of that run written at once; a board of one hostile name (a
#     tag, quotes, Unicode, 200 characters) with a release and its
#     candidate and a file that is no report; a fuzz --server HTML report
#     against serve with a planted fault (these add about 14 s);
#  2. loads the pages in headless Chromium (Debian's package, installed if
#     missing) and checks the DOM it rendered (no script element): one row
#     per implementation, a cause's reproduction command, a history chart,
#     the badges; the hostile name as text, the release as latest; the
#     fuzz --server page's case and commands; keeps a screenshot of every page at 390 px (a phone) and
#     of the index, a history page and a report at 1280 px under
#     build/scoreboard/screenshots;
#  3. runs the run: steps of action.yml as GitHub would, against the
#     built-in reference (must pass) and a planted adapter (must fail on
#     its MUST failures), the install step building this checkout instead
#     of fetching a release.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/scoreboard
rm -rf "$out"
mkdir -p "$out/screenshots"
t0=$(date +%s)

if ! command -v chromium >/dev/null 2>&1; then
  s=$(date +%s)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  echo "chromium installed in $(( $(date +%s) - s )) s"
fi
chromium --version

go build -o "$out/retrykit" ./cmd/retrykit
rk=$PWD/$out/retrykit

echo "-- site from docs/scoreboard/reports, the SDK interop table as docs/servers.md has it now"
cp -r docs/scoreboard/reports "$out/reports"
python3 docs/scoreboard/interop.py --out "$out/reports/sdk-interop.json"
"$rk" scoreboard "$out/reports" -o "$out/site"
echo "-- a run with causes, every format at once"
"$rk" conformance --impl "python3 conformance/adapters/testdata/planted_adapter.py regex-match" --jitter-samples 200 \
  --format html -o "$out/planted.html" --format json -o "$out/planted.json" --format markdown -o "$out/planted.md" \
  --format junit -o "$out/planted.xml" --format text -o "$out/planted.txt" && { echo "the planted adapter passed"; exit 1; }
for f in html json md xml txt; do [ -s "$out/planted.$f" ] || { echo "planted.$f not written"; exit 1; }; done

echo "-- a board of one name with a tag, quotes, a slash, Unicode and 200 more characters, a release and its candidate, a file that is no report"
mkdir -p "$out/hostile"
python3 - "$out/planted.json" "$out/hostile" <<'PY'
import json, sys
src, d = sys.argv[1], sys.argv[2]
r = json.load(open(src))
r["implementation"]["implementation"] = '<img src=x onerror=alert(1)> "q" / \u2713 ' + "long-" * 40
for i, version in enumerate(["1.0.0", "1.0.0-rc.1"]):
    r["implementation"]["version"] = version
    json.dump(r, open(f"{d}/r{i}.json", "w"))
open(d + "/notes.json", "w").write('["not a report"]')
PY
"$rk" scoreboard "$out/hostile" -o "$out/hostile-site" 2>"$out/hostile.err"
grep -q "left out .*notes.json" "$out/hostile.err" || { echo "notes.json not named as left out"; cat "$out/hostile.err"; exit 1; }
echo "-- fuzz --server against serve with a planted fault, html and json in one run"
"$rk" serve --addr 127.0.0.1:0 --plant regex-match >"$out/serve.url" 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do [ -s "$out/serve.url" ] && break; sleep 0.1; done
"$rk" fuzz --server "$(head -1 "$out/serve.url")" --jobs 100 --seed 15849421751359933509 --out "$out/fuzz-cases" \
  --format html -o "$out/fuzz-server.html" --format json -o "$out/fuzz-server.json" >/dev/null || true
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true
[ -s "$out/fuzz-server.html" ] || { echo "fuzz --server wrote no HTML report"; exit 1; }

# shot PAGE WIDTH NAME: a screenshot of PAGE at WIDTH px.
shot() {
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="$2,1600" --screenshot="$out/screenshots/$3.png" "file://$PWD/$1" >/dev/null 2>&1
  [ -s "$out/screenshots/$3.png" ] || { echo "no screenshot of $1"; exit 1; }
}
# dom PAGE: the DOM Chromium rendered (--dump-dom needs JavaScript on;
# the check below fails any page that has a script element).
dom() {
  chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$PWD/$1" 2>/dev/null
}

echo "-- what Chromium shows"
dom "$out/site/index.html" >"$out/index.dom"
impl=$(find docs/scoreboard/reports -mindepth 1 -maxdepth 1 -type d | wc -l)
history=$(ls "$out/site/impl/" | head -1)
for p in "$out/site/impl/"*.html; do
  if [ "$(ls "$out/site/reports/$(basename "$p" .html)" | grep -c '\.json$')" -gt 1 ]; then history=$(basename "$p"); break; fi
done
dom "$out/site/impl/$history" >"$out/impl.dom"
report=$(grep -l 'class="cause"' "$out/site/reports/"*/*.html | head -1)
dom "$report" >"$out/report.dom"
dom "$out/planted.html" >"$out/planted.dom"
dom "$out/hostile-site/index.html" >"$out/hostile-index.dom"
dom "$(ls "$out/hostile-site/impl/"*.html | head -1)" >"$out/hostile-impl.dom"
dom "$out/fuzz-server.html" >"$out/fuzz-server.dom"
python3 - "$out" "$impl" "$PWD/$report" <<'PY'
import re, sys, xml.etree.ElementTree as ET
out, impl, report = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def read(p): return open(p, encoding="utf-8").read()
fails = []
def need(cond, what):
    if not cond: fails.append(what)
index = read(out + "/index.dom")
rows = re.findall(r'<tr class="impl-row">', index)
names = set(re.findall(r'<tr class="impl-row"><td><a href="impl/([^".]+)\.html', index))
need(len(names) >= impl, f"index: {len(names)} implementations in its rows, the reports have {impl} directories")
badges = re.findall(r'<img src="(badges/[^"]+\.svg)"', index)
need(len(badges) == len(rows), f"index: {len(badges)} badges for {len(rows)} rows")
for b in set(badges):
    svg = ET.parse(out + "/site/" + b).getroot()
    texts = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    need(any("MUST" in t for t in texts), f"{b}: no MUST score in {texts}")
need(len(re.findall(r'<td class="cell (ok|bad|none)"><a href="reports/[^"]+#group-', index)) >= len(rows), "index: group cells do not link to report groups")
import os
if os.path.exists(out + "/reports/sdk-interop.json"):
    need(len(re.findall(r'<tr class="interop-row">', index)) >= 4, "index: the SDK interop table has fewer than 4 SDKs")
page = read(out + "/impl.dom")
need('<svg class="history"' in page and "<polyline" in page, "history page: no chart with a line")
need(len(re.findall(r"<circle ", page)) >= 2, "history page: fewer than two points")
for name, dom in (("index", index), ("history page", page), ("site report", read(out + "/report.dom")),
                  ("planted report", read(out + "/planted.dom")), ("fuzz --server report", read(out + "/fuzz-server.dom"))):
    need("<script" not in dom and 'name="viewport"' in dom, f"{name}: a script, or no viewport for phones")
    # a browser runs no script there even if a tag slipped through escaping
    need("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';" in dom, f"{name}: no policy forbidding scripts")
for name, dom in (("site report", read(out + "/report.dom")), ("planted report", read(out + "/planted.dom"))):
    need("<script" not in dom, f"{name}: a script element")
    need(re.search(r'Reproduce: <code class="cmd">retrykit conformance [^<]* --run [a-z]', dom) is not None, f"{name}: no reproduction command")
    need('<article class="cause"' in dom, f"{name}: no cause")
    need(re.search(r'href="https://github.com/openjobspec/spec/blob/main/spec/ojs-[a-z-]+\.md#', dom) is not None, f"{name}: no link to a spec section")
    need('name="viewport"' in dom, f"{name}: no viewport for phones")
# A name with a tag is text in what Chromium built, never an element; the
# release, not its candidate, is the latest; both are in the history.
hi, hp = read(out + "/hostile-index.dom"), read(out + "/hostile-impl.dom")
need("<img src=\"x\"" not in hi + hp and "&lt;img src=x onerror=alert(1)&gt;" in hi, "hostile board: the name's tag became an element")
need(len(re.findall(r'<tr class="impl-row">', hi)) == 1 and "<td>1.0.0</td>" in hi, "hostile board: not one row showing 1.0.0 as latest")
hist = re.findall(r'<tr><td><a href="[^"]+\.html">([^<]+)</a>', hp)
need(len(re.findall(r"<circle ", hp)) >= 2 and hist == ["1.0.0-rc.1 (r1)", "1.0.0 (r0)"], f"hostile board: history {hist}, want rc.1 then 1.0.0")
fz = read(out + "/fuzz-server.dom")
need('id="verdict"' in fz and 'id="figures"' in fz and "<script" not in fz and 'name="viewport"' in fz, "fuzz --server report: no verdict, figures or viewport, or a script")
if 'class="verdict fail"' in fz:
    need('<article class="cause"' in fz and re.search(r'Reproduce: <code class="cmd">retrykit fuzz --server \S+ --seed \d+', fz) and "--replay " in fz,
         "fuzz --server report: a disagreement without its case or commands")
for f in fails: print("FAIL:", f)
if fails: sys.exit(1)
print(f"index: {len(rows)} rows, {len(set(badges))} badges; history chart and reproduction commands shown")
PY
n=0
for p in $(cd "$out" && find site -name '*.html' | sort) planted.html fuzz-server.html hostile-site/index.html; do
  n=$((n+1)); shot "$out/$p" 390 "phone-$(echo "$p" | tr / _ | sed 's/\.html$//')"
done
shot "$out/site/index.html" 1280 index
shot "$out/site/impl/$history" 1280 history
shot "$report" 1280 report
echo "screenshots: $n pages at 390 px, 3 at 1280 px in $out/screenshots"

echo "-- the Action's steps (action.yml), run here"
python3 - "$out" "$rk" <<'PY'
import os, subprocess, sys, yaml
out, rk = sys.argv[1], sys.argv[2]
action = yaml.safe_load(open("action.yml"))
assert action["runs"]["using"] == "composite", "action.yml is not a composite action"
steps = action["runs"]["steps"]
install = steps[0]["run"]
assert "go install \"github.com/retrykit/retrykit/cmd/retrykit@${RETRYKIT_VERSION}\"" in install, "the install step does not go install"
def expr(s, ctx):
    # ${{ inputs.x }} and ${{ steps.id.outputs.y }}, as GitHub fills them
    import re
    def one(m):
        e = m.group(1).strip()
        if e.startswith("inputs."): return ctx["inputs"][e[7:]]
        if e.startswith("steps."):
            _, sid, _, key = e.split(".", 3); return ctx["steps"].get(sid, {}).get(key, "")
        raise ValueError("unknown expression " + e)
    return re.sub(r"\$\{\{(.*?)\}\}", one, s)
def run(case, inputs, want_fail):
    d = os.path.join(out, "action-" + case)
    os.makedirs(d, exist_ok=True)
    ins = {k: v.get("default", "") for k, v in action["inputs"].items()}
    ins.update(inputs, **{"report-dir": os.path.join(d, "report")})
    ctx = {"inputs": ins, "steps": {}}
    summary = os.path.join(d, "summary")
    open(summary, "w").close()
    failed = None
    for st in steps:
        if "run" not in st:
            continue  # uses: actions/upload-artifact, GitHub's own
        gh_out, gh_path = os.path.join(d, "output"), os.path.join(d, "path")
        open(gh_out, "w").close(); open(gh_path, "w").close()
        env = dict(os.environ, GITHUB_OUTPUT=gh_out, GITHUB_STEP_SUMMARY=summary, GITHUB_PATH=gh_path,
                   PATH=os.path.dirname(rk) + os.pathsep + os.environ["PATH"])
        for k, v in st.get("env", {}).items():
            env[k] = expr(str(v), ctx)
        script = st["run"]
        if st is steps[0]:
            script = "go build -o \"$GOBIN_DIR/retrykit\" ./cmd/retrykit"  # this checkout, not a release
            env["GOBIN_DIR"] = os.path.dirname(rk)
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=env, capture_output=True, text=True)
        outs = dict(l.split("=", 1) for l in open(gh_out).read().splitlines() if "=" in l)
        ctx["steps"][st.get("id", "")] = outs
        if r.returncode != 0:
            failed = (st["name"], r.returncode, r.stdout[-400:] + r.stderr[-400:])
            break
    text = open(summary).read()
    if want_fail:
        assert failed and failed[0] == "Summary and verdict" and failed[1] == 1, f"{case}: want the verdict step to fail, got {failed}"
        assert int(ctx["steps"]["verdict"]["must-failures"]) > 0, case
    else:
        assert failed is None, f"{case}: step failed: {failed}"
        assert ctx["steps"]["verdict"]["must-failures"] == "0", case
    assert text.startswith("### ") and "| score |" in text, f"{case}: no summary written: {text[:200]!r}"
    assert os.path.getsize(ctx["steps"]["run"]["report"]) > 1000, f"{case}: no HTML report"
    print(f"action ({case}): {'failed as it must' if want_fail else 'passed'}; summary {len(text)} bytes; report {ctx['steps']['run']['report']}")
# The guide's examples use inputs the action has.
import re
guide = open("docs/publishing.md").read()
uses = 0
for block in re.findall(r"```yaml\n(.*?)```", guide, re.S):
    for m in re.finditer(r"uses: retrykit/retrykit@\S+\n\s+with:\n((?:\s+[a-z-]+: .*\n)+)", block):
        for key in re.findall(r"^\s+([a-z-]+):", m.group(1), re.M):
            assert key in action["inputs"], f"docs/publishing.md uses the input {key}, which action.yml lacks"
        assert "version:" in m.group(1), "docs/publishing.md: an example without version"
        uses += 1
assert uses >= 2, f"docs/publishing.md: {uses} examples of the action found"
run("reference", {"version": "local", "impl": rk + " adapter"}, False)
run("planted", {"version": "local", "impl": "python3 conformance/adapters/testdata/planted_adapter.py regex-match", "args": "--jitter-samples 200"}, True)
PY
echo "scoreboard checks: $(( $(date +%s) - t0 )) s"
