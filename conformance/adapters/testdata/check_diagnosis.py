#!/usr/bin/env python3
"""Checks a JSON conformance report for exactly one diagnosed cause.

Usage: check_diagnosis.py BUG[+BUG...] < report.json

Exit 0 when the report has failures, every failure and error sits under
one of the causes, the causes are exactly the bug models "bug:BUG"
reproduced by the diagnosis, no passing vector contradicts them, and the
model of a missing extension names the flag to unclaim; exit 1
otherwise, with the causes found.
"""

# The planted bugs that are a missing optional feature, and the flag the
# report must tell the implementer to declare unclaimed.
UNCLAIM = {"no-backoff-strategy": ("backoff-strategy-unsupported", "extension:backoff_strategy")}

# The planted bugs of a family the diagnosis fits, and the fitted cause
# that must name each.
FAMILY = {"jitter-range": "jitter-range([0.75,1.25))", "exponent-offset": "exponent-offset(+1)",
          "linear-as-exponential": "strategy-as(linear→exponential)"}

import json
import sys


def main():
    want, flags = set(), {}
    for b in sys.argv[1].split("+"):
        model, flag = UNCLAIM.get(b, (FAMILY.get(b, b), ""))
        want.add("bug:" + model)
        flags["bug:" + model] = flag
    rep = json.load(sys.stdin)
    t = rep["totals"]
    bad = t["fail"] + t["error"]
    causes = rep.get("causes") or []
    summary = ", ".join(f'{c["class"]}x{len(c["ids"])}' for c in causes)
    ok = (bad > 0 and {c["class"] for c in causes} == want and len(causes) == len(want)
          and all(c.get("reproduced") and not c.get("contradicted")
                  and c.get("unclaim", "") == flags[c["class"]] for c in causes)
          and sum(len(c["ids"]) for c in causes) == bad)
    print(f"{sys.argv[1]}: {bad} failed or errored; causes: {summary or 'none'}: {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
