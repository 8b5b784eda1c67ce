#!/usr/bin/env python3
"""Checks a JSON conformance report for exactly one diagnosed cause.

Usage: check_diagnosis.py BUG < report.json

Exit 0 when the report has failures, every failure and error sits under
one cause, that cause is the bug model "bug:BUG" reproduced by the
diagnosis, and no passing vector contradicts it; exit 1 otherwise, with
the causes found.
"""

import json
import sys


def main():
    want = "bug:" + sys.argv[1]
    rep = json.load(sys.stdin)
    t = rep["totals"]
    bad = t["fail"] + t["error"]
    causes = rep.get("causes") or []
    summary = ", ".join(f'{c["class"]}x{len(c["ids"])}' for c in causes)
    ok = (bad > 0 and len(causes) == 1 and causes[0]["class"] == want
          and causes[0].get("reproduced") and len(causes[0]["ids"]) == bad
          and not causes[0].get("contradicted"))
    print(f"{want}: {bad} failed or errored; causes: {summary or 'none'}: {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
