#!/usr/bin/env python3
"""The Python example adapter with one planted bug, for the diagnosis test.

Usage: planted_adapter.py BUG[+BUG...], where each BUG is one of

  no-post-jitter-cap  the delay is multiplied by the jitter after the cap
                      and not capped again (cap, jitter; no second cap)
  regex-match         non_retryable_errors entries are full-match regular
                      expressions ("auth.*" matches "auth" and "authx")
  no-backoff-strategy the backoff_strategy extension field is not
                      implemented: a policy carrying it is rejected as an
                      unknown field, and the effective policy lacks it,
                      while hello still claims every flag

Everything else is the example adapter's. The conformance report of each
must name exactly those bugs as its causes, explaining every failure
(.ci/run, conformance/adapters/testdata/check_diagnosis.py).
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import adapter  # noqa: E402
import ojs_retry as lib  # noqa: E402


def _uncapped_delay(self, n, r=None, rng=None):
    d = self.base(n)
    if not self.jitter:
        return d
    if r is None:
        r = (rng or lib._RNG).random()
    a, b = lib._clamped_ratio(r)
    return (d * (b + 2 * a)) // (2 * b)  # no min(..., max_interval)


def _regex_match(self, error_type):
    for p in self.patterns:
        try:
            if re.fullmatch(p, error_type):
                return True
        except re.error:
            pass
    return False


_effective = lib.Policy.effective


def _effective_without_strategy(self):
    e = _effective(self)
    del e["backoff_strategy"]
    return e


def _no_backoff_strategy():
    lib._FIELD_SET = lib._FIELD_SET - {"backoff_strategy"}
    lib.Policy.effective = _effective_without_strategy


BUGS = {
    "no-post-jitter-cap": lambda: setattr(lib.Policy, "delay", _uncapped_delay),
    "regex-match": lambda: setattr(lib.Matcher, "match", _regex_match),
    "no-backoff-strategy": _no_backoff_strategy,
}

if __name__ == "__main__":
    names = sys.argv[1].split("+") if len(sys.argv) == 2 else []
    if not names or any(n not in BUGS for n in names):
        sys.exit("usage: planted_adapter.py BUG[+BUG...], BUG one of " + "|".join(sorted(BUGS)))
    for n in names:
        BUGS[n]()
    adapter.IMPLEMENTATION = "planted-" + sys.argv[1]
    sys.exit(adapter.main())
