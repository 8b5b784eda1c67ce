#!/usr/bin/env bash
# Regenerates the reports under docs/scoreboard/reports with this checkout's
# `retrykit conformance`, then the site (build/scoreboard/site):
#
#   bash docs/scoreboard/regenerate.sh [--server NAME=URL]... [--adapter NAME=COMMIT=COMMAND]...
#        [--serve-history] [--library-history] [--python-sdk DIR] [--ruby-sdk DIR]
#        [--js-sdk DIR] [--playground DIR] [--site-only]
#
#   (always)          the library (built-in reference) and `retrykit serve`
#                     of this checkout: reports/retrykit/library-DATE-TIME-COMMIT.json
#                     and reports/retrykit/serve-DATE-TIME-COMMIT.json
#   --server NAME=URL an OJS server already running at URL (before /ojs/v1),
#                     checked with `conformance --server URL` into
#                     reports/NAME/COMMIT.json; NAME is the server's directory
#                     there, e.g. ojs-backend-redis=http://127.0.0.1:8080, and
#                     COMMIT its pinned commit from BUILD.md. ojs-backend-kafka
#                     gets --late-bound 5s (its promoter hands retries out up
#                     to 2 s late). Nothing is built here: BUILD.md says what
#                     ran where.
#   --python-sdk DIR  a checkout of openjobspec/ojs-python-sdk (at the commit
#                     in BUILD.md), through adapters/ojs_python_sdk.py into
#                     reports/ojs-python-sdk/COMMIT.json
#   --ruby-sdk DIR    a checkout of openjobspec/ojs-ruby-sdk, likewise
#                     (adapters/ojs_ruby_sdk.rb, reports/ojs-ruby-sdk/COMMIT.json)
#   --js-sdk DIR      openjobspec/ojs-js-sdk's src/retry.ts already compiled
#                     to CommonJS: DIR holds retry.js (BUILD.md says how it
#                     was prepared; nothing is built here), through
#                     adapters/ojs_js_sdk.mjs into reports/ojs-js-sdk/COMMIT.json
#   --playground DIR  openjobspec/ojs-playground's ui/src/engine already
#                     compiled to CommonJS: DIR holds src/engine/*.js and
#                     public/schema/*.json, with ajv, ajv-formats and yaml
#                     resolvable from there; through adapters/ojs_playground.mjs
#                     into reports/ojs-playground/COMMIT.json
#   --adapter NAME=COMMIT=COMMAND
#                     any library behind a protocol adapter already prepared:
#                     `conformance --impl COMMAND` into reports/NAME/COMMIT.json.
#                     NAME must have a row in BUILD.md with that COMMIT (it says
#                     how the adapter was prepared; nothing is built here), e.g.
#                     ojs-go-sdk=7528da5=/work/ext-E/bin/ojs-go-sdk-adapter
#   --serve-history   also `serve` at the commits listed in BUILD.md, each
#                     built from this repository's history in a temporary
#                     worktree and checked by this checkout's checker
#   --library-history also the library at the commits listed in BUILD.md,
#                     each built likewise and driven through its own
#                     `retrykit adapter` by this checkout's suite
#   --site-only       only rebuild the site from the committed reports
#
# reports/sdk-interop.json is always written again from the table "The
# official SDKs against serve" of docs/servers.md (interop.py).
#
# The site is what CI builds (.ci/run); CI does not re-run any server.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage() { sed -n '2,51p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
servers=() adapters=() history=false libhistory=false site_only=false pysdk="" rbsdk="" jssdk="" playground=""
while [ $# -gt 0 ]; do
  case $1 in
    --server) [ $# -ge 2 ] && [[ $2 == *=http* ]] || { echo "regenerate.sh: --server NAME=URL" >&2; usage; }; servers+=("$2"); shift 2 ;;
    --adapter) [ $# -ge 2 ] && [[ $2 =~ ^[a-z0-9][a-z0-9.-]*=[0-9a-f]{7,40}=.+ ]] || { echo "regenerate.sh: --adapter NAME=COMMIT=COMMAND" >&2; usage; }; adapters+=("$2"); shift 2 ;;
    --serve-history) history=true; shift ;;
    --library-history) libhistory=true; shift ;;
    --python-sdk) [ $# -ge 2 ] && [ -d "$2" ] || { echo "regenerate.sh: --python-sdk DIR" >&2; usage; }; pysdk=$2; shift 2 ;;
    --ruby-sdk) [ $# -ge 2 ] && [ -d "$2" ] || { echo "regenerate.sh: --ruby-sdk DIR" >&2; usage; }; rbsdk=$2; shift 2 ;;
    --js-sdk) [ $# -ge 2 ] && [ -f "$2/retry.js" ] || { echo "regenerate.sh: --js-sdk DIR (DIR/retry.js, the compiled src/retry.ts)" >&2; usage; }; jssdk=$2; shift 2 ;;
    --playground) [ $# -ge 2 ] && [ -f "$2/src/engine/retry.js" ] || { echo "regenerate.sh: --playground DIR (DIR/src/engine/retry.js, the compiled ui/src/engine)" >&2; usage; }; playground=$2; shift 2 ;;
    --site-only) site_only=true; shift ;;
    -h|--help) usage ;;
    *) echo "regenerate.sh: unknown argument $1" >&2; usage ;;
  esac
done
out=docs/scoreboard/reports
build=build/scoreboard
mkdir -p "$build" "$out/retrykit"
go build -o "$build/retrykit" ./cmd/retrykit
rk=$PWD/$build/retrykit

# check_serve BINARY NAME: start BINARY serve on a free loopback port,
# check it with this checkout's checker into $out/retrykit/NAME.json, stop it.
check_serve() {
  local bin=$1 name=$2 url pid
  "$bin" serve --addr 127.0.0.1:0 > "$build/serve.out" 2>"$build/serve.err" &
  pid=$!
  for _ in $(seq 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$build/serve.out" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { kill "$pid"; echo "regenerate.sh: serve did not start: $(cat "$build/serve.err")" >&2; exit 1; }
  "$rk" conformance --server "$url" --format json -o "$out/retrykit/$name.json" || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s %d/%d" % (s["name"], s["pass"], s["pass"]+s["fail"]+s["error"]) for s in d["scores"]))' "$out/retrykit/$name.json")"
}

# built_at COMMIT: this repository's retrykit at COMMIT, built in a
# temporary worktree (once), as a path.
built_at() {
  local bin=$PWD/$build/retrykit-$1 tmp
  if [ ! -x "$bin" ]; then
    tmp=$(mktemp -d)
    git worktree add -q --detach "$tmp" "$1"
    (cd "$tmp" && go build -o "$bin" ./cmd/retrykit)
    git worktree remove --force "$tmp"
  fi
  echo "$bin"
}

# commit_of NAME: NAME's commit in its row of BUILD.md.
commit_of() { sed -n "s/^| $1 | \`\([0-9a-f]*\)\`.*/\1/p" docs/scoreboard/BUILD.md | head -1; }

# adapter_report NAME COMMIT COMMAND: `conformance --impl COMMAND` into
# reports/NAME/COMMIT.json, once BUILD.md's row for NAME names COMMIT.
adapter_report() {
  local built
  built=$(commit_of "$1")
  [ "$built" = "$2" ] || { echo "regenerate.sh: BUILD.md has no row \"| $1 | \`$2\`\" (it has \"${built:-none}\")" >&2; exit 2; }
  mkdir -p "$out/$1"
  "$rk" conformance --impl "$3" --format json -o "$out/$1/$2.json" || true
}

if ! $site_only; then
  head=$(git rev-parse --short HEAD)
  day=$(git log -1 --format=%cd --date=format:%Y-%m-%d-%H%M HEAD)
  "$rk" conformance --format json -o "$out/retrykit/library-$day-$head.json" || true
  check_serve "$rk" "serve-$day-$head"
  if $history; then
    for c in $(sed -n 's/^| serve history | `\([0-9a-f]*\)`.*/\1/p' docs/scoreboard/BUILD.md); do
      check_serve "$(built_at "$c")" "serve-$(git log -1 --format=%cd --date=format:%Y-%m-%d-%H%M "$c")-$c"
    done
  fi
  if $libhistory; then
    for c in $(sed -n 's/^| library history | `\([0-9a-f]*\)`.*/\1/p' docs/scoreboard/BUILD.md); do
      "$rk" conformance --impl "$(built_at "$c") adapter" --format json \
        -o "$out/retrykit/library-$(git log -1 --format=%cd --date=format:%Y-%m-%d-%H%M "$c")-$c.json" || true
    done
  fi
  [ -z "$pysdk" ] || adapter_report ojs-python-sdk "$(commit_of ojs-python-sdk)" "python3 docs/scoreboard/adapters/ojs_python_sdk.py $pysdk"
  [ -z "$rbsdk" ] || adapter_report ojs-ruby-sdk "$(commit_of ojs-ruby-sdk)" "ruby docs/scoreboard/adapters/ojs_ruby_sdk.rb $rbsdk"
  for a in "${adapters[@]}"; do
    rest=${a#*=}
    adapter_report "${a%%=*}" "${rest%%=*}" "${rest#*=}"
  done
  # library NAME ADAPTER DIR: the adapter over DIR into reports/NAME/COMMIT.json,
  # COMMIT being NAME's row in BUILD.md.
  library() {
    local commit
    commit=$(sed -n "s/^| $1 | \`\([0-9a-f]*\)\`.*/\1/p" docs/scoreboard/BUILD.md)
    [ -n "$commit" ] || { echo "regenerate.sh: $1 is not in docs/scoreboard/BUILD.md" >&2; exit 2; }
    mkdir -p "$out/$1"
    "$rk" conformance --impl "node docs/scoreboard/adapters/$2 $3" --format json -o "$out/$1/$commit.json" || true
  }
  [ -z "$jssdk" ] || library ojs-js-sdk ojs_js_sdk.mjs "$jssdk"
  [ -z "$playground" ] || library ojs-playground ojs_playground.mjs "$playground"
  for s in "${servers[@]}"; do
    name=${s%%=*} url=${s#*=}
    commit=$(sed -n "s/^| $name | \`\([0-9a-f]*\)\`.*/\1/p" docs/scoreboard/BUILD.md)
    [ -n "$commit" ] || { echo "regenerate.sh: $name is not in docs/scoreboard/BUILD.md" >&2; exit 2; }
    extra=()
    [ "$name" = ojs-backend-kafka ] && extra=(--late-bound 5s)
    mkdir -p "$out/$name"
    "$rk" conformance --server "$url" "${extra[@]}" --format json -o "$out/$name/$commit.json" || true
  done
fi
python3 docs/scoreboard/interop.py   # the SDK interop table of docs/servers.md
rm -rf "$build/site"
"$rk" scoreboard "$out" -o "$build/site"
