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

  jitter-range        the jitter multiplier is 0.75 + r/2, in [0.75, 1.25),
                      not 0.5 + r
  exponent-offset     the exponential delay after attempt n is
                      initial_interval * coefficient^n (one power too many)
  linear-as-exponential
                      the linear strategy is computed by the exponential
                      formula; the effective policy still says linear

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


def _narrow_delay(self, n, r=None, rng=None):
    d = self.base(n)
    if not self.jitter:
        return d
    if r is None:
        r = (rng or lib._RNG).random()
    a, b = lib._clamped_ratio(r)
    j = (d * (3 * b + 2 * a)) // (4 * b)  # 0.75 + r/2
    return min(j, self.max_interval)


_base = lib.Policy.base


def _exponent_offset_base(self, n):
    if self.backoff_strategy == "exponential" and type(n) is int and n >= 1:
        return _base(self, n + 1)
    return _base(self, n)


def _linear_as_exponential_base(self, n):
    if self.backoff_strategy == "linear":
        object.__setattr__(self, "backoff_strategy", "exponential")
        try:
            return _base(self, n)
        finally:
            object.__setattr__(self, "backoff_strategy", "linear")
    return _base(self, n)


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
    "jitter-range": lambda: setattr(lib.Policy, "delay", _narrow_delay),
    "exponent-offset": lambda: setattr(lib.Policy, "base", _exponent_offset_base),
    "linear-as-exponential": lambda: setattr(lib.Policy, "base", _linear_as_exponential_base),
}

if __name__ == "__main__":
    names = sys.argv[1].split("+") if len(sys.argv) == 2 else []
    if not names or any(n not in BUGS for n in names):
        sys.exit("usage: planted_adapter.py BUG[+BUG...], BUG one of " + "|".join(sorted(BUGS)))
    for n in names:
        BUGS[n]()
    adapter.IMPLEMENTATION = "planted-" + sys.argv[1]
    sys.exit(adapter.main())
