#!/usr/bin/env python3
"""Writes docs/scoreboard/reports/sdk-interop.json from the table "The official
SDKs against serve" in docs/servers.md, so that the scoreboard shows the SDK
interop results as that guide records them.

    python3 docs/scoreboard/interop.py             # write the file
    python3 docs/scoreboard/interop.py --check     # fail if it is not current
    python3 docs/scoreboard/interop.py --out FILE  # write FILE instead
"""
import json
import os
import re
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
guide = os.path.join(root, "docs", "servers.md")
out = os.path.join(root, "docs", "scoreboard", "reports", "sdk-interop.json")
heading = "### The official SDKs against serve"

text = open(guide, encoding="utf-8").read()
if heading not in text:
    if len(sys.argv) == 3 and sys.argv[1] == "--out":
        # CI builds the site with whatever the guide has: no table, none shown
        print(f"interop.py: warning: {guide} has no section {heading!r}; no interop table")
        if os.path.exists(sys.argv[2]):
            os.remove(sys.argv[2])
        sys.exit(0)
    sys.exit(f"interop.py: {guide} has no section {heading!r}")
section = text.split(heading, 1)[1].split("\n#", 1)[0]
date = re.search(r"Tried on (\d{4}-\d{2}-\d{2})", section)
rows = []
for line in section.splitlines():
    if not line.startswith("| ") or line.startswith("| SDK") or line.startswith("|---"):
        continue
    cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
    if len(cells) != 3:
        sys.exit(f"interop.py: a row of {len(cells)} cells, want 3: {line[:80]}")
    rows.append({"name": cells[0], "works": cells[1], "fails": cells[2]})
if not rows:
    sys.exit("interop.py: the table has no rows")
doc = {"kind": "sdk-interop", "against": "retrykit serve", "source": "docs/servers.md, " + heading.lstrip("# "),
       "date": date.group(1) if date else "", "rows": rows}
data = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
if len(sys.argv) == 3 and sys.argv[1] == "--out":
    out = sys.argv[2]
if sys.argv[1:] == ["--check"]:
    old = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    if old != data:
        sys.exit("interop.py: docs/scoreboard/reports/sdk-interop.json is not current: run python3 docs/scoreboard/interop.py")
    print(f"sdk-interop.json: current ({len(rows)} SDKs)")
else:
    open(out, "w", encoding="utf-8").write(data)
    print(f"wrote {out}: {len(rows)} SDKs")
