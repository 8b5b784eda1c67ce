#!/usr/bin/env python3
"""Generate the retrykit conformance vectors (testdata/vectors/*.json).

Usage:
    python3 testdata/vectors/generate.py                     # write the vector files and README coverage
    python3 testdata/vectors/generate.py --check             # exit 1 if any file would change
    python3 testdata/vectors/generate.py --update-decisions  # also fill the "pinned by" column
                                                             # of docs/decisions.md

Standard library only, deterministic: running it twice gives byte-identical files.

Where expected values come from
-------------------------------
Every expected value is either typed in literally from a table of the OJS retry
specification (1.0.0-rc.1), or computed by the small exact formulas in this file
(integers and fractions.Fraction, never floats), following the project's rules:

  * n = the attempt that just failed (1-based) = the spec's "retry number";
  * raw delay: none I, linear I*n, exponential I*C^(n-1), polynomial I*n^C;
  * cap at max_interval; jitter multiplies the capped delay by (0.5 + r); the
    result is truncated toward zero to whole nanoseconds and capped again;
  * durations: Y = 365 days, month = 730 hours, D = 24 hours; fractions of a
    second exact, digits past the ninth rounded half up.

The formula used for each computed value is written into the vector's
description. Nothing here imports, runs or reads retrykit's Go code.

Ids
---
Ids are assigned sequentially per kind in the order the vectors are added
below. They are immutable: NEVER insert a vector in the middle of a kind,
NEVER reorder, NEVER reuse an id. New vectors are appended at the end of the
kind's function (after the "APPEND NEW VECTORS BELOW" marker). A vector that
must go is replaced by `k.retire("reason")`, which consumes its id without
emitting anything. As a safety net the generator compares with the files
already on disk and refuses to change the input or requirement of an existing
id (pass --allow-id-change to override after a deliberate decision).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from decimal import Decimal, getcontext, ROUND_FLOOR
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SCHEMA_VERSION = 1
SUITE_VERSION = "0.2.0"
SPEC_VERSION = "1.0.0-rc.1"

ERR_POLICY = "validation.retry_policy_invalid"
ERR_PATTERN = "validation.pattern_invalid"
ERR_REQUEST = "validation.invalid_request"

# ---------------------------------------------------------------------------
# units
NS = 1
US = 1000
MS = 1000 * US
S = 1000 * MS
MIN = 60 * S
H = 60 * MIN
D = 24 * H
MONTH = 730 * H
Y = 365 * D
MAX_NS = (1 << 63) - 1  # the largest duration: 2562047h47m16.854775807s
MAX_ISO = "PT2562047H47M16.854775807S"
INT64_MAX = (1 << 63) - 1

# exact binary fractions used as injected random draws
R_HI = 0.999755859375  # 1 - 2^-12: close to 1, exact in binary
R_VALUES = [0.0, 0.125, 0.25, 0.5, 0.75, R_HI]

# ---------------------------------------------------------------------------
# flags and notes

FLAG_NOTES = {
    "extension:backoff_strategy": (
        "The vector's policy uses, or its effective policy reports, the extension field "
        "backoff_strategy (none | linear | exponential | polynomial; absent = exponential, RK-01). "
        "The spec (section 3) allows such a field but does not require it; an implementation that "
        "does not support it lists this flag in unclaimed_flags and the vector is not sent."),
    "should:prefix-match": (
        "The expected answer depends on prefix matching of entries ending in '.*' (section 6.2), "
        "which the spec makes a SHOULD, not a MUST. An implementation with exact matching only "
        "may leave this flag unclaimed."),
    "should:date-components": (
        "The duration uses date components (Y, M before T, D), which the spec says SHOULD be "
        "supported (section 4.2). Their lengths are retrykit's (RK-07: Y = 365 days, month = 730 "
        "hours, D = 24 hours). An implementation without date components leaves this flag "
        "unclaimed."),
    "implementation-defined": (
        "The spec leaves the outcome open. 'expected' holds an 'acceptable' list: the answer "
        "passes when it matches any one entry (each entry has the shape of an ordinary expected "
        "value of the kind; an entry with min_ns/max_ns accepts any ns value in those inclusive "
        "bounds). The description says what must hold for each choice. Another vector, flagged "
        "retrykit:decision, pins retrykit's own choice."),
    "retrykit:decision": (
        "Pins a row of docs/decisions.md (the vector's requirement is that row's RK id): the spec "
        "is silent or contradicts itself there and the expected value is retrykit's resolution. "
        "An implementation that has not adopted retrykit's decisions may leave this flag unclaimed."),
    "float-tolerance": (
        "The exact answer (computed with exact rational or 60-digit decimal arithmetic from the "
        "decimal value of the JSON numbers) may differ from a correct float64 computation by "
        "rounding. A runner accepts |got - want| <= max(1 ns, want * 2^-40) in addition to its "
        "resolution_ns rule."),
    "class:post-jitter-cap": (
        "Failure class: no max_interval cap after jitter (section 5.3, RET-06, RK-05). An "
        "implementation that caps only before jitter answers more than max_interval here."),
    "class:default-merge": (
        "Failure class: partial policies not merged with the section 8 defaults (RET-10). An "
        "implementation that uses zero values, or the whole default only when no policy is given, "
        "answers differently here."),
    "class:strategy-field": (
        "Failure class: backoff strategy read from the wrong field (RK-01): inferred from "
        "backoff_coefficient, or taken from some field other than backoff_strategy."),
    "class:lenient-duration": (
        "Failure class: malformed or zero durations accepted as zero (P, PT, P1DT, the empty string, "
        "PT0S as an initial_interval) instead of being rejected (RET-19, RK-12)."),
    "class:overflow": (
        "Failure class: integer or float overflow at large attempt numbers, coefficients or "
        "intervals, giving negative, wrapped, NaN or uncapped delays (RK-17), or durations past the "
        "largest representable value silently wrapped (RK-11)."),
    "class:regex-match": (
        "Failure class: non_retryable_errors entries used as regular expressions or globs "
        "(section 6.2, RK-15): 'auth.*' must not match 'auth' or 'authx', and '.', '*', '+', '^', "
        "'[', '(' are ordinary characters."),
    # The retry extensions (docs/extensions.md): opt-in, only an implementation whose hello lists
    # the extension_decide op is sent these vectors; it may unclaim any one feature.
    "extension:error_rules": (
        "The policy has error_rules: per-error-type attempt limits and backoff (docs/extensions.md "
        "section 3.2, RK-302, RK-303). Sent only to an implementation that answers extension_decide; "
        "one without this feature lists the flag in unclaimed_flags."),
    "extension:retry_after": (
        "The failure carries a delay the handler asked for (retry_after_ns), bounded by "
        "max_retry_after (docs/extensions.md section 3.3, RK-304)."),
    "extension:snooze": (
        "The failure is a snooze (snooze_ns, snoozes): the job waits without spending an attempt, "
        "bounded by max_snoozes and max_snooze (docs/extensions.md section 3.5, RK-306)."),
    "extension:jitter_mode": (
        "The policy has jitter_mode full, equal or decorrelated (docs/extensions.md section 3.4, "
        "RK-305); decorrelated reads the case's prev_delay_ns."),
}
ALL_FLAGS = list(FLAG_NOTES)

REQ_SECTION = {
    "RET-01": "2.2", "RET-02": "4.2", "RET-03": "2.2", "RET-04": "3.5", "RET-05": "5.1",
    "RET-06": "5.3", "RET-07": "6.3", "RET-08": "7.2", "RET-09": "8", "RET-10": "8.1",
    "RET-16": "11.1", "RET-17": "2.2", "RET-18": "6.2", "RET-19": "4.2", "RET-20": "14",
    "RK-01": "3", "RK-02": "14", "RK-03": "4.2", "RK-04": "2.2", "RK-05": "5.3", "RK-06": "5.1",
    "RK-07": "4.2", "RK-08": "14", "RK-09": "8", "RK-10": "14", "RK-11": "4.2", "RK-12": "11.1",
    "RK-13": "7.2", "RK-14": "2.2", "RK-15": "6.2", "RK-16": "3", "RK-17": "3.5",
    "RK-23": "3.3",
    # ojs-timeouts (sections of spec/ojs-timeouts.md) and ojs-dead-letter section 7
    "TMO-01": "5.1", "TMO-02": "5.2", "TMO-03": "9.1", "TMO-04": "5.5", "TMO-05": "6",
    "TMO-06": "7.1", "TMO-07": "8", "TMO-08": "9.1", "DLQ-R003": "7.1",
    "RK-215": "9.1", "RK-216": "7.1", "RK-217": "5.2", "RK-219": "8",
    "RK-221": "7.1", "RK-222": "7.1", "RK-223": "7.2", "RK-224": "7.1",
    # the retry extensions: sections of docs/extensions.md
    "RK-300": "4", "RK-301": "3.1", "RK-302": "3.2", "RK-303": "3.2", "RK-304": "3.3", "RK-305": "3.4",
    "RK-306": "3.5",
}
LIBRARY_RET = ["RET-%02d" % i for i in list(range(1, 11)) + list(range(16, 21))]
RK_IDS = ["RK-%02d" % i for i in range(1, 18)] + ["RK-23"]
# requirements of the timeouts and dead-letter extensions (README "Requirements of the
# extensions"): each has at least one vector
EXT_REQS = ["TMO-%02d" % i for i in range(1, 9)] + ["DLQ-R003", "RK-215", "RK-216", "RK-217", "RK-219",
                                                   "RK-221", "RK-222", "RK-223", "RK-224"] + \
    ["RK-%d" % i for i in range(301, 307)]

KIND_NOTES = {
    "extension_decide": (
        "The retry extensions of docs/extensions.md (a proposal, not OJS 1.0). input.case: policy (a "
        "retry policy that may use jitter_mode, error_rules, max_retry_after, max_snoozes, "
        "max_snooze), attempt, error {type, code}, optional rand, and the failure's extension "
        "inputs: retry_after_ns (a delay the handler asked for), snooze_ns (a snooze), snoozes (how "
        "many the job has taken, absent 0), prev_delay_ns (the delay before the failed attempt, "
        "absent 0). expected.result: {action, and for retry delay_ns and snoozed (true when the "
        "attempt is not spent)}. Rules, in order (section 3.1): handler code; a snooze while "
        "snoozes < max_snoozes waits min(snooze, max_snooze or max_interval); non_retryable_errors; "
        "the first matching error rule is in force (its absent fields are the policy's; a rule "
        "without jitter inherits no jitter_mode); attempt >= max(max_attempts, 1) of the rule in "
        "force -> on_exhaustion; a requested delay (or a snooze past max_snoozes) waits "
        "min(d, max_retry_after of the rule, else of the policy, else the max_interval in force), "
        "unjittered; else the rule's backoff with its jitter mode: with b the capped delay, I the "
        "initial and M the max interval, proportional min(floor(b(0.5+r)), M), full floor(b r), "
        "equal floor((b + floor(b r))/2), decorrelated min(M, I + floor(r (3p - I))) with "
        "p = max(prev_delay, I). An invalid policy is validation.retry_policy_invalid naming the "
        "field, an invalid case validation.invalid_request."),
    "timeout_decide": (
        "ojs-timeouts. input.case: timeouts (the job's timeout fields in integer seconds; absent = the "
        "section 6 defaults), policy (retry policy, merged with the defaults; every policy here has "
        "jitter false), created_at_ms and now_ms (milliseconds after 2026-01-01T00:00:00Z: the job's "
        "created_at and the decision time), attempt (the attempt that just failed), error {type, code}. "
        "expected.result: {action, delay_ns (only for retry)}. Rules: a handler code decides first "
        "(ojs-retry 7.2); then a job past its total timeout (now - created_at > total_timeout) gets the "
        "policy's on_exhaustion action whatever attempts remain (section 5.2, RK-217); then the retry "
        "policy; a retry with created_at + total_timeout < now + delay + timeout is on_exhaustion instead "
        "(section 9.1; equality retries, RK-215; timeout is the effective one, 1800 when absent). An "
        "invalid timeouts object is validation.invalid_request naming the field (section 6)."),
    "timeout_expiry": (
        "ojs-timeouts. input.case: timeouts, kind (execution | stalled | total | enqueue_ttl), since_ms "
        "(started_at, the last heartbeat, or created_at) and now_ms. expected.result is {expired: false}, "
        "or {expired: true, type, timeout_kind, limit_seconds, elapsed_seconds}: the section 8 error "
        "object. A limit has passed when now - since > limit (execution: timeout + grace_period, "
        "section 7.1; stalled: heartbeat_timeout, 7.3; RK-216). limit_seconds is the timeout (without "
        "the grace period) or the other limit; elapsed_seconds is now - since rounded up to a whole "
        "second (RK-219)."),
    "replay": (
        "ojs-dead-letter section 7. input.case: rules (the replay_rules document of section 7.1) and "
        "letter {error_type (of the most recent error), queue, type, discarded_at_ms, meta (with "
        "ojs.replay_count when replayed before)}. expected.result is {replay: false}, or {replay: true, "
        "rule, at_ms, replay_count}: the first enabled rule in list order whose filter matches and whose "
        "max_replays exceeds ojs.replay_count replays the letter at discarded_at + delay, and the count "
        "becomes one more (RK-221..RK-224). Invalid rules are validation.invalid_request naming the field."),
    "duration": (
        "input.value is an OJS duration string; expected.ns is its length in nanoseconds, or "
        "expected.error is the rejection type. Valid lengths are computed as "
        "Y*365d + M*730h + D*24h + h*3600s + m*60s + s (exact decimal seconds, digits past the ninth "
        "rounded half up), as written in each description."),
    "validate": (
        "input.policy is sent as the validate op's policy; input.policy_raw is raw JSON text the "
        "runner splices verbatim in place of the policy value (to keep duplicate keys, 3.0 or 1e400); "
        "an input without either is an absent policy. expected.effective is the merged policy "
        "(durations compared by value); expected.error_fields lists JSON field names that must "
        "appear in the rejection message."),
    "delay": (
        "input: policy (merged with the section 8 defaults), attempt n (the attempt that just "
        "failed), optional rand r in [0,1). expected.delay_ns is exact; without rand, min_ns/max_ns "
        "are inclusive bounds lo = trunc(D*0.5), hi = min(trunc(D*1.5), max_interval) with D the "
        "capped delay (the spec's 1.5 bound is exclusive; checking with <= against the truncated "
        "value is the inclusive equivalent)."),
    "match": (
        "input.patterns is a non_retryable_errors list, input.error_type the handler's error type; "
        "expected.match is whether it matches (section 6.2), or expected.error when the list is "
        "invalid (an empty entry)."),
    "decide": (
        "input: policy, attempt n (the attempt that just failed), error {type, code} (code absent "
        "means RETRY), optional rand. expected.action is retry | discard | dead_letter; delay_ns "
        "(or min_ns/max_ns without rand) only for retry. Precedence (RK-13): DISCARD/FAIL -> "
        "discard; DEAD_LETTER -> dead_letter; else a non_retryable match or n >= max(max_attempts, 1) "
        "-> on_exhaustion; else retry."),
}

# ---------------------------------------------------------------------------
# exact helpers (independent of the Go code)

DUR_RE = re.compile(
    r"\AP(?!\Z)([0-9]+Y)?([0-9]+M)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+(\.[0-9]+)?S)?)?\Z")


def sec_ns(text: str) -> int:
    """Exact ns of a decimal seconds string, digits past the ninth rounded half up."""
    if "." in text:
        whole, frac = text.split(".")
    else:
        whole, frac = text, ""
    ns = int(whole) * S
    if len(frac) <= 9:
        return ns + int((frac + "000000000")[:9] or "0")
    head, tail = frac[:9], frac[9:]
    ns += int(head)
    if tail[0] >= "5":
        ns += 1
    return ns


def parse_iso(text: str):
    """Strict OJS grammar (spec section 14 pattern, ASCII digits). Returns ns or None."""
    m = DUR_RE.match(text)
    if not m:
        return None
    y, mo, d, _, h, mi, s, _ = m.groups()
    ns = 0
    if y: ns += int(y[:-1]) * Y
    if mo: ns += int(mo[:-1]) * MONTH
    if d: ns += int(d[:-1]) * D
    if h: ns += int(h[:-1]) * H
    if mi: ns += int(mi[:-1]) * MIN
    if s: ns += sec_ns(s[:-1])
    if ns > MAX_NS:
        return None
    return ns


def fmt_iso(ns: int) -> str:
    """Canonical time-only ISO form of a ns count ("PT0S", "PT1H30M", "PT0.5S")."""
    if ns == 0:
        return "PT0S"
    h, rem = divmod(ns, H)
    m, rem = divmod(rem, MIN)
    s, frac = divmod(rem, S)
    out = "PT"
    if h: out += "%dH" % h
    if m: out += "%dM" % m
    if s or frac:
        out += "%d" % s
        if frac:
            out += ("." + "%09d" % frac).rstrip("0")
        out += "S"
    return out


def fsec(ns: int) -> str:
    """Human form of a ns count in seconds for descriptions: 1500000000 -> '1.5s'."""
    if 0 < ns < US:
        return "%dns" % ns
    s, frac = divmod(ns, S)
    if frac == 0:
        return "%ds" % s
    return ("%d.%09d" % (s, frac)).rstrip("0") + "s"


def exact(x) -> Fraction:
    """Exact value of a JSON number as written (its decimal text), not its float64."""
    if isinstance(x, bool):
        raise TypeError
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(repr(x))


DEFAULTS = {
    "max_attempts": 3,
    "initial_interval": "PT1S",
    "backoff_coefficient": 2.0,
    "max_interval": "PT5M",
    "jitter": True,
    "non_retryable_errors": [],
    "on_exhaustion": "discard",
    "backoff_strategy": "exponential",
}
FIELD_ORDER = list(DEFAULTS)


def merged(policy: dict) -> dict:
    out = dict(DEFAULTS)
    out.update(policy)
    return out


def effective(policy: dict) -> dict:
    """The effective policy of a valid partial policy, durations in canonical form."""
    m = merged(policy)
    ii, mi = parse_iso(m["initial_interval"]), parse_iso(m["max_interval"])
    assert ii is not None and mi is not None and 0 < ii <= mi, policy
    c = m["backoff_coefficient"]
    return {
        "max_attempts": m["max_attempts"],
        "initial_interval": fmt_iso(ii),
        "backoff_coefficient": float(c),
        "max_interval": fmt_iso(mi),
        "jitter": m["jitter"],
        "non_retryable_errors": list(m["non_retryable_errors"]),
        "on_exhaustion": m["on_exhaustion"],
        "backoff_strategy": m["backoff_strategy"],
    }


def capped(policy: dict, n: int) -> int:
    """Capped delay before jitter (exact), truncated toward zero to ns."""
    m = merged(policy)
    i = parse_iso(m["initial_interval"])
    mx = parse_iso(m["max_interval"])
    c = exact(m["backoff_coefficient"])
    st = m["backoff_strategy"]
    assert n >= 1
    if st == "none":
        raw = Fraction(i)
    elif st == "linear":
        if i * n >= mx:
            return mx
        raw = Fraction(i * n)
    elif st == "exponential":
        if c == 1:
            raw = Fraction(i)
        else:
            raw = Fraction(i)
            for _ in range(n - 1):  # c > 1: leaves after at most a few hundred steps
                raw *= c
                if raw >= mx:
                    return mx
    elif st == "polynomial":
        if i * n >= mx and n > 1:  # n^c >= n for c >= 1
            return mx
        if c.denominator == 1:
            raw = Fraction(i * n ** c.numerator)
        elif iroot(n ** c.numerator, c.denominator) is not None:
            raw = Fraction(i * iroot(n ** c.numerator, c.denominator))
        else:  # irrational: 60-digit decimal, flagged float-tolerance by the caller
            getcontext().prec = 60
            p = (Decimal(c.numerator) / Decimal(c.denominator) * Decimal(n).ln()).exp()
            if n == 1:
                p = Decimal(1)
            v = (Decimal(i) * p).to_integral_value(rounding=ROUND_FLOOR)
            return min(int(v), mx)
    else:
        raise ValueError(st)
    if raw >= mx:
        return mx
    return int(raw)  # int() truncates toward zero; raw >= 0


def iroot(x: int, q: int):
    """The exact integer q-th root of x, or None when x is not a perfect q-th power."""
    lo, hi = 0, 1
    while hi ** q <= x:
        hi *= 2
    while lo < hi - 1:
        mid = (lo + hi) // 2
        if mid ** q <= x:
            lo = mid
        else:
            hi = mid
    return lo if lo ** q == x else None


def jittered(policy: dict, n: int, r: float) -> int:
    m = merged(policy)
    mx = parse_iso(m["max_interval"])
    dcap = capped(policy, n)
    if not m["jitter"]:
        return dcap
    v = Fraction(dcap) * (Fraction(1, 2) + Fraction(r))  # Fraction(float) is exact
    return min(int(v), mx)


def bounds(policy: dict, n: int):
    m = merged(policy)
    mx = parse_iso(m["max_interval"])
    dcap = capped(policy, n)
    if not m["jitter"]:
        return dcap, dcap
    return dcap // 2, min(dcap * 3 // 2, mx)


def is_match(patterns, t) -> bool:
    for p in patterns:
        if p == t:
            return True
        if p.endswith(".*") and t.startswith(p[:-1]):
            return True
    return False


# ---------------------------------------------------------------------------
# vector collection

class Kind:
    def __init__(self, kind: str, prefix: str):
        self.kind = kind
        self.prefix = prefix
        self.counter = 0
        self.vectors = []

    def retire(self, reason: str):
        """Consume the next id without emitting a vector (the vector was withdrawn)."""
        self.counter += 1

    def add(self, req, desc, inp, exp, flags=(), section=None):
        self.counter += 1
        vid = "%s-%04d" % (self.prefix, self.counter)
        assert req in REQ_SECTION, req
        assert "\n" not in desc and desc.strip() == desc and desc, desc
        fl = list(flags)
        if req.startswith("RK-") and "retrykit:decision" not in fl and "implementation-defined" not in fl:
            fl.append("retrykit:decision")
        for f in fl:
            assert f in FLAG_NOTES, f
        assert len(set(fl)) == len(fl), (vid, fl)
        fl = sorted(fl, key=ALL_FLAGS.index)
        if "implementation-defined" in fl:
            assert list(exp) == ["acceptable"], vid
        self.vectors.append({
            "id": vid,
            "requirement": req,
            "section": section or REQ_SECTION[req],
            "description": desc,
            "flags": fl,
            "input": inp,
            "expected": exp,
        })
        return vid


def ext_flags(policy: dict):
    return ["extension:backoff_strategy"] if "backoff_strategy" in policy else []


def strategy_flags(policy: dict, n: int, r=None):
    """class:strategy-field when the policy names a strategy and the delay differs from the one the
    same policy gives without it (an implementation that ignores backoff_strategy, or infers the
    strategy from the coefficient, answers differently)."""
    if policy.get("backoff_strategy", "exponential") == "exponential":
        return []
    plain = dict(policy)
    del plain["backoff_strategy"]
    if r is not None:
        same = jittered(policy, n, r) == jittered(plain, n, r)
    else:
        same = bounds(policy, n) == bounds(plain, n)
    return [] if same else ["class:strategy-field"]


# ---------------------------------------------------------------------------
# duration

def gen_duration(k: Kind):
    def ok(req, value, ns, formula, flags=(), section=None):
        chk = parse_iso(value)
        assert chk == ns, (value, chk, ns)
        k.add(req, "%s = %s = %d ns" % (value, formula, ns), {"value": value}, {"ns": ns},
              flags, section)

    def bad(req, value, why, flags=(), section=None, label=None):
        assert parse_iso(value) is None, value
        k.add(req, "%s is rejected: %s" % (label or json.dumps(value), why), {"value": value},
              {"error": ERR_POLICY}, flags, section)

    # spec section 4.1 table, literally
    for v, ns, f in [("PT0.5S", 500 * MS, "500ms"), ("PT1S", S, "1s"), ("PT5S", 5 * S, "5s"),
                     ("PT30S", 30 * S, "30s"), ("PT1M", MIN, "1min = 60s"),
                     ("PT5M", 5 * MIN, "5min = 300s"), ("PT15M", 15 * MIN, "15min = 900s"),
                     ("PT1H", H, "1h = 3600s"), ("PT24H", 24 * H, "24h = 86400s")]:
        ok("RET-02", v, ns, f + " (section 4.1 table)", section="4.1")
    # more time-only values
    ok("RK-12", "PT0S", 0, "0s (a valid duration; only initial_interval must be > 0)")
    for v, ns, f in [
        ("PT0.1S", 100 * MS, "0.1s"),
        ("PT1.5S", 1500 * MS, "1.5s"),
        ("PT0.000000001S", 1, "1ns (nine fraction digits)"),
        ("PT0.123456789S", 123456789, "0.123456789s"),
        ("PT1H30M", H + 30 * MIN, "1h + 30min = 5400s"),
        ("PT1H30M15S", H + 30 * MIN + 15 * S, "3600s + 1800s + 15s = 5415s"),
        ("PT1H0M0S", H, "1h + 0min + 0s"),
        ("PT0H0M1S", S, "0h + 0min + 1s"),
        ("PT36H", 36 * H, "36h = 129600s"),
        ("PT90M", 90 * MIN, "90min = 5400s (no carry needed)"),
        ("PT3600S", H, "3600s"),
        ("PT100000S", 100000 * S, "100000s"),
        ("PT00001S", S, "leading zeros: 00001s = 1s"),
        ("PT10.50S", 10500 * MS, "trailing zero in the fraction: 10.50s"),
        ("PT1M30.25S", MIN + 30250 * MS, "60s + 30.25s"),
        ("PT0.0S", 0, "0.0s (a zero duration is valid as a string, RK-12; only initial_interval must be > 0)"),
        ("PT2H5S", 2 * H + 5 * S, "2h + 5s (minutes omitted)"),
        ("PT2562047H", 2562047 * H, "2562047h (largest whole hour count that fits)"),
        ("PT153722867M", 153722867 * MIN, "153722867min"),
    ]:
        # A zero duration is valid only by RK-12, as dur-0010 PT0S is.
        ok("RK-12" if ns == 0 else "RET-02", v, ns, f)
    # largest value and rounding (RK-11)
    ok("RK-11", MAX_ISO, MAX_NS, "2562047h + 47min + 16.854775807s, the largest duration (2^63-1 ns)",
       ["class:overflow"])
    ok("RK-11", "PT9223372036.854775807S", MAX_NS, "the largest duration written in seconds",
       ["class:overflow"])
    for v, ns, f in [
        ("PT0.0000000005S", 1, "0.5ns rounded half up to 1ns"),
        ("PT0.0000000004S", 0, "0.4ns rounded to 0ns"),
        ("PT0.00000000149S", 1, "1.49ns rounded to 1ns (only the tenth digit decides)"),
        ("PT0.0000000015S", 2, "1.5ns rounded half up to 2ns"),
        ("PT1.9999999995S", 2 * S, "1.9999999995s rounded half up, carrying into whole seconds"),
        ("PT0.9999999999S", S, "0.9999999999s rounded up to 1s"),
        ("PT0.12345678949S", 123456789, "tenth digit 4: 0.123456789s"),
        ("PT0.12345678950S", 123456790, "tenth digit 5: rounded up to 0.123456790s"),
        ("PT0.000000000999999999999S", 1, "0.000000000999...s rounded up to 1ns"),
        ("PT1.1234567890000000000000000000001S", 1123456789, "digits past the ninth are zero then 1: rounded down"),
        ("PT2562047H47M16.8547758074S", MAX_NS, "rounds down to the largest duration"),
    ]:
        ok("RK-11", v, ns, f)
    bad("RK-11", "PT2562047H47M16.8547758075S",
        "rounds half up to 2^63 ns, one past the largest duration", ["class:overflow"])
    # date components (SHOULD, RK-07)
    dc = ["should:date-components"]
    for v, ns, f in [
        ("P1D", D, "1 * 24h"),
        ("P2D", 2 * D, "2 * 24h"),
        ("P1Y", Y, "1 * 365 * 24h"),
        ("P1M", MONTH, "1 * 730h (month)"),
        ("P12M", 12 * MONTH, "12 * 730h = 8760h = 365 days"),
        ("P1MT1M", MONTH + MIN, "730h (month, before T) + 1min (minute, after T)"),
        ("P1Y2M3DT4H5M6.5S", Y + 2 * MONTH + 3 * D + 4 * H + 5 * MIN + 6500 * MS,
         "365d + 2*730h + 3*24h + 4h + 5min + 6.5s"),
        ("P1DT12H", D + 12 * H, "24h + 12h"),
        ("P0D", 0, "0 days"),
        ("P30D", 30 * D, "30 * 24h"),
        ("P0Y0M0DT0H0M0S", 0, "all components zero"),
        ("P106751D", 106751 * D, "106751 * 24h (largest whole day count that fits)"),
        ("P292Y", 292 * Y, "292 * 365d"),
    ]:
        ok("RK-07", v, ns, f, dc)
    bad("RK-11", "P106752D", "106752 days is past the largest duration (2^63-1 ns)", dc + ["class:overflow"])
    bad("RK-11", "P293Y", "293 * 365 days is past the largest duration", dc + ["class:overflow"])
    # weeks (RK-03)
    for v in ["P1W", "P2W", "P1WT1H", "P1Y2W"]:
        bad("RK-03", v, "weeks are not in the OJS grammar")
    # the lenient-duration family
    lenient = ["class:lenient-duration"]
    bad("RET-19", "", "empty string", lenient)
    bad("RET-19", "P", "no component at all", lenient)
    bad("RET-19", "PT", "no component after T", lenient)
    bad("RET-19", "P1DT", "trailing T without a time component", lenient)
    bad("RET-19", "PTS", "S without digits", lenient)
    bad("RK-12", "PT.S", "no digits around the point", lenient)
    bad("RK-12", "P0", "number without a designator", lenient)
    bad("RK-12", "0", "bare number", lenient)
    # other malformed strings
    for v, why in [
        ("PT1S ", "trailing space"),
        (" PT1S", "leading space"),
        ("PT1Sx", "trailing junk"),
        ("PT1S\n", "trailing newline"),
        ("PT1S\u0000", "trailing NUL"),
        ("PT 1S", "space inside"),
        ("-PT1S", "sign"),
        ("+PT1S", "sign"),
        ("PT-1S", "negative component"),
        ("P-1D", "negative component"),
        ("PT1,5S", "comma as decimal separator"),
        ("PT1.S", "point without fraction digits"),
        ("PT.5S", "fraction without integer digits"),
        ("PT1.5M", "fraction on minutes"),
        ("PT1.5H", "fraction on hours"),
        ("P1.5D", "fraction on days"),
        ("pt1s", "lowercase designators"),
        ("Pt1S", "lowercase t"),
        ("PT1s", "lowercase s"),
        ("p1D", "lowercase p"),
        ("PT1S1M", "minutes after seconds"),
        ("PT1M1H", "hours after minutes"),
        ("P1D1Y", "years after days"),
        ("P1D1M", "months after days"),
        ("PT1S1S", "seconds twice"),
        ("PT1H1H", "hours twice"),
        ("PT1M1M", "minutes twice"),
        ("P1D1D", "days twice"),
        ("PT1H2", "trailing digits without designator"),
        ("PT1", "digits without designator"),
        ("T1S", "missing P"),
        ("1S", "missing P and T"),
        ("1s", "Go-style duration"),
        ("1000", "bare number"),
        ("PT1Y", "Y in the time part"),
        ("P1H", "H in the date part"),
        ("P1S", "S in the date part"),
        ("PT1D", "D in the time part"),
        ("P1DT1D", "D in the time part"),
        ("PPT1S", "P twice"),
        ("PTT1S", "T twice"),
        ("PT1E3S", "exponent notation"),
        ("PT0x10S", "hexadecimal"),
        ("PT1_000S", "digit separator"),
        ("PT1.5.5S", "two points"),
        ("PT1..5S", "two points"),
        ("P1DT1H1M1S1", "trailing digit"),
        ("R/PT1S", "repeating interval, not a duration"),
        ("PT1S/PT2S", "interval, not a duration"),
        ("P\u0661D", "Arabic-Indic digit"),
        ("PT\u0661S", "Arabic-Indic digit"),
        ("PT\uff11S", "fullwidth digit"),
        ("PT\u00b2S", "superscript digit"),
        ("PT\u0967S", "Devanagari digit"),
        ("\uff30T1S", "fullwidth P"),
        ("PT1S\u200b", "trailing zero-width space"),
        ("PT1\u00a0S", "no-break space inside"),
        ("PT1.5\u0665S", "Arabic-Indic digit in the fraction"),
    ]:
        bad("RET-19", v, why)
    # overflow
    ov = ["class:overflow"]
    bad("RK-11", "PT2562048H", "2562048h is past the largest duration (2^63-1 ns)", ov)
    bad("RK-11", "PT9223372037S", "9223372037s is past the largest duration", ov)
    bad("RK-11", "PT2562047H47M17S", "0.145224193s past the largest duration", ov)
    bad("RK-11", "PT153722868M", "153722868min is past the largest duration", ov)
    bad("RK-11", "PT18446744073709551616S", "2^64 seconds (wraps to 0 in 64-bit arithmetic)", ov)
    bad("RK-11", "PT18446744073.709551616S", "2^64 ns written in seconds (wraps to 0 in uint64 ns)", ov)
    bad("RK-11", "PT99999999999999999999999999S", "huge digit string", ov)
    bad("RK-11", "PT" + "9" * 400 + "S", "a 400-digit number of seconds", ov, label='"PT99...9S"')
    bad("RK-11", "PT5124095576030431H", "about 2^64 seconds written in hours; wraps in unchecked 64-bit arithmetic", ov)
    # implementation-defined alternatives (retrykit's choice is pinned above)
    ok_err = {"error": ERR_POLICY}
    k.add("RK-07", "P1M: the spec calls month lengths ambiguous; an implementation rejects date "
          "components or gives a month between 28 and 31 days (retrykit: 730h)",
          {"value": "P1M"}, {"acceptable": [ok_err, {"min_ns": 28 * D, "max_ns": 31 * D}]},
          ["implementation-defined", "should:date-components"])
    k.add("RK-07", "P1Y: rejected, or between 365 and 366 days (retrykit: 365 days)",
          {"value": "P1Y"}, {"acceptable": [ok_err, {"min_ns": 365 * D, "max_ns": 366 * D}]},
          ["implementation-defined", "should:date-components"])
    k.add("RK-07", "P1D: rejected, or between 23 and 25 hours (retrykit: 24h)",
          {"value": "P1D"}, {"acceptable": [ok_err, {"min_ns": 23 * H, "max_ns": 25 * H}]},
          ["implementation-defined", "should:date-components"])
    k.add("RK-11", "PT0.0000000005S: half a nanosecond; an implementation may round either way "
          "(retrykit rounds half up to 1ns)",
          {"value": "PT0.0000000005S"}, {"acceptable": [{"ns": 0}, {"ns": 1}]},
          ["implementation-defined"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


# ---------------------------------------------------------------------------
# validate

def gen_validate(k: Kind):
    def eff(req, desc, policy, flags=(), section=None):
        fl = list(flags)
        for f in ext_flags(policy):
            if f not in fl:
                fl.append(f)
        k.add(req, desc, {"policy": policy}, {"effective": effective(policy)}, fl, section)

    def eff_raw(req, desc, raw, as_policy, flags=(), section=None):
        json.loads(raw)  # must be valid JSON text
        k.add(req, desc, {"policy_raw": raw}, {"effective": effective(as_policy)}, flags, section)

    def rej(req, desc, policy, fields, flags=(), section=None):
        fl = list(flags)
        if isinstance(policy, dict):
            for f in ext_flags(policy):
                if f not in fl:
                    fl.append(f)
        k.add(req, desc, {"policy": policy}, {"error": ERR_POLICY, "error_fields": fields}, fl, section)

    def rej_raw(req, desc, raw, fields, flags=(), section=None):
        k.add(req, desc, {"policy_raw": raw}, {"error": ERR_POLICY, "error_fields": fields}, flags, section)

    dm = ["class:default-merge"]
    # absent and empty
    k.add("RET-09", "absent policy (no retry object) -> the section 8 default policy", {},
          {"effective": effective({})}, dm)
    eff("RET-10", "{} -> every field from the section 8 defaults", {}, dm)
    eff_raw("RK-09", "top-level JSON null -> the default policy", "null", {}, dm)
    # section 8 default written out, 8.1 and 12.x examples
    full_default = {k_: v for k_, v in DEFAULTS.items() if k_ != "backoff_strategy"}
    eff("RET-09", "the section 8 default policy written out in full is its own effective policy",
        dict(full_default), section="8")
    eff("RET-10", "section 8.1 example: max_attempts 10 and on_exhaustion dead_letter merged with defaults",
        {"max_attempts": 10, "on_exhaustion": "dead_letter"}, dm, section="8.1")
    eff("RET-10", "section 12.1 example: max_attempts 1 merged with defaults",
        {"max_attempts": 1}, dm, section="12.1")
    k.add("RET-09", "section 12.2 example: no retry configuration -> the default policy", {},
          {"effective": effective({})}, dm, "12.2")
    p123 = {"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0,
            "max_interval": "PT1H", "jitter": True,
            "non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
            "on_exhaustion": "dead_letter"}
    eff("RK-01", "section 12.3 example policy as written (no backoff_strategy: exponential, RK-01)",
        dict(p123), section="12.3")
    eff("RK-01", "section 12.3 example with backoff_strategy polynomial added (RK-01)",
        dict(p123, backoff_strategy="polynomial"), ["class:strategy-field"], section="12.3")
    p124 = {"max_attempts": 5, "initial_interval": "PT30S", "backoff_coefficient": 2.0,
            "max_interval": "PT15M", "jitter": True,
            "non_retryable_errors": ["auth.invalid_credentials", "auth.account_suspended",
                                     "resource.not_found", "validation.*", "external.crm.api_deprecated"],
            "on_exhaustion": "dead_letter"}
    eff("RET-20", "section 12.4 example policy", dict(p124), section="12.4")
    p125 = {"max_attempts": 60, "initial_interval": "PT10S", "backoff_coefficient": 1.0,
            "max_interval": "PT10S", "jitter": False, "non_retryable_errors": [],
            "on_exhaustion": "dead_letter"}
    eff("RET-20", "section 12.5 example: coefficient 1.0 and max_interval == initial_interval are valid",
        dict(p125), section="12.5")
    eff("RET-10", "section 12.6 example: max_attempts 1, dead_letter merged with defaults",
        {"max_attempts": 1, "on_exhaustion": "dead_letter"}, dm, section="12.6")
    # every single-field override
    singles = [
        ("max_attempts", 5), ("max_attempts", 0), ("max_attempts", 1), ("max_attempts", 25),
        ("max_attempts", 1000),
        ("initial_interval", "PT5S"), ("initial_interval", "PT0.5S"), ("initial_interval", "PT5M"),
        ("backoff_coefficient", 1.0), ("backoff_coefficient", 1.5), ("backoff_coefficient", 3),
        ("backoff_coefficient", 10.0),
        ("max_interval", "PT1H"), ("max_interval", "PT1S"), ("max_interval", "PT24H"),
        ("jitter", False), ("jitter", True),
        ("non_retryable_errors", ["payment.card_stolen"]),
        ("non_retryable_errors", ["auth.*", "resource.not_found"]),
        ("on_exhaustion", "dead_letter"), ("on_exhaustion", "discard"),
    ]
    for f, v in singles:
        req = "RK-04" if (f, v) == ("max_attempts", 0) else "RET-10"
        eff(req, "only %s = %s given; the other fields from the defaults" % (f, json.dumps(v)),
            {f: v}, dm if req == "RET-10" else [])
    for st in ["none", "linear", "exponential", "polynomial"]:
        eff("RK-01", "only backoff_strategy = %s given; the seven spec fields from the defaults" % st,
            {"backoff_strategy": st}, ["class:strategy-field"])
    # accepted edge values
    eff_raw("RK-10", "max_attempts 3.0 is an integer value (JSON Schema 'integer') and is accepted",
            '{"max_attempts": 3.0}', {"max_attempts": 3})
    eff_raw("RK-10", "max_attempts 3e0 is accepted as 3", '{"max_attempts": 3e0}', {"max_attempts": 3})
    eff_raw("RK-10", "max_attempts 9223372036854775807 (2^63-1, the largest accepted) is accepted",
            '{"max_attempts": 9223372036854775807}', {"max_attempts": INT64_MAX}, ["class:overflow"])
    eff_raw("RK-14", "backoff_coefficient 1 (integer literal) is a number >= 1.0", '{"backoff_coefficient": 1}',
            {"backoff_coefficient": 1.0})
    eff("RK-14", "backoff_coefficient 1e308 is finite and accepted", {"backoff_coefficient": 1e308},
        ["class:overflow"])
    eff("RK-14", "backoff_coefficient 1.7976931348623157e308 (largest float64) is accepted",
        {"backoff_coefficient": 1.7976931348623157e308}, ["class:overflow"])
    eff("RK-12", "max_interval == initial_interval (PT10S) is valid",
        {"initial_interval": "PT10S", "max_interval": "PT10S"})
    eff("RK-12", "initial_interval PT0.000000001S (1ns) is > 0 and valid",
        {"initial_interval": "PT0.000000001S"})
    eff("RK-11", "max_interval at the largest duration is valid",
        {"max_interval": MAX_ISO}, ["class:overflow"])
    eff("RK-11", "initial_interval == max_interval == the largest duration is valid",
        {"initial_interval": MAX_ISO, "max_interval": MAX_ISO}, ["class:overflow"])
    eff("RK-07", "date components: P1D and P2D are 24h and 48h",
        {"initial_interval": "P1D", "max_interval": "P2D"}, ["should:date-components"])
    eff("RET-02", "PT1H30M max_interval is 5400s", {"max_interval": "PT1H30M"})
    eff("RK-15", "'*', 'auth*' and 'a.*.b' are ordinary entries and valid",
        {"non_retryable_errors": ["*", "auth*", "a.*.b"]}, ["class:regex-match"])
    # max_attempts negatives
    for v, why in [(-1, "negative"), ("3", "a string"), (True, "a boolean"), (2.5, "not an integer"),
                   (None, "null is a wrong type, not 'use the default' (RK-09)"), ([3], "an array"),
                   ({"n": 3}, "an object"), (-0.5, "negative and not an integer"), (False, "a boolean"),
                   ("", "a string")]:
        req = "RK-09" if v is None else "RET-16"
        rej(req, "max_attempts %s is rejected: %s" % (json.dumps(v), why), {"max_attempts": v}, ["max_attempts"])
    rej_raw("RK-10", "max_attempts 9223372036854775808 (2^63) is above the largest integer and rejected",
            '{"max_attempts": 9223372036854775808}', ["max_attempts"], ["class:overflow"])
    rej_raw("RK-10", "max_attempts 1e20 is integer-valued but above the largest integer: rejected",
            '{"max_attempts": 1e20}', ["max_attempts"], ["class:overflow"])
    rej_raw("RK-10", "max_attempts 3.5 is not an integer", '{"max_attempts": 3.5}', ["max_attempts"])
    rej_raw("RK-10", "max_attempts -1.0 is a negative integer value", '{"max_attempts": -1.0}', ["max_attempts"])
    # interval negatives
    lenient = ["class:lenient-duration"]
    for fld in ["initial_interval", "max_interval"]:
        for v, why, req, fl in [
            ("", "empty string", "RET-19", lenient),
            ("P", "no component", "RET-19", lenient),
            ("PT", "no component after T", "RET-19", lenient),
            ("P1DT", "trailing T", "RET-19", lenient),
            ("1s", "not ISO 8601", "RET-19", []),
            ("PT1S ", "trailing space", "RET-19", []),
            ("-PT1S", "sign", "RET-19", []),
            ("PT1,5S", "comma", "RET-19", []),
            ("P1W", "weeks (RK-03)", "RK-03", []),
            (1, "a number, not a string", "RET-16", []),
            (1000, "milliseconds as a number (OJS v0.2 style)", "RET-16", []),
            (None, "null is a wrong type (RK-09)", "RK-09", lenient),
            (True, "a boolean", "RET-16", []),
            (["PT1S"], "an array", "RET-16", []),
            ("PT2562048H", "past the largest duration (RK-11)", "RK-11", ["class:overflow"]),
        ]:
            rej(req, "%s %s is rejected: %s" % (fld, json.dumps(v), why), {fld: v}, [fld], fl)
    rej("RK-12", "initial_interval PT0S is a valid duration but not > 0",
        {"initial_interval": "PT0S"}, ["initial_interval"], lenient)
    rej("RK-12", "initial_interval PT0.0S is zero", {"initial_interval": "PT0.0S"}, ["initial_interval"], lenient)
    rej("RK-12", "initial_interval P0D is zero", {"initial_interval": "P0D"}, ["initial_interval"],
        lenient + ["should:date-components"])
    rej("RK-12", "initial_interval PT0S with max_interval PT0S: initial must be > 0",
        {"initial_interval": "PT0S", "max_interval": "PT0S"}, ["initial_interval"], lenient)
    rej("RK-11", "initial_interval PT0.0000000001S rounds to 0ns and is not > 0",
        {"initial_interval": "PT0.0000000001S"}, ["initial_interval"], lenient)
    rej("RK-12", "max_interval PT0S is below the default initial_interval PT1S",
        {"max_interval": "PT0S"}, ["max_interval"], dm)
    rej("RK-12", "max_interval PT0.5S is below the default initial_interval PT1S",
        {"max_interval": "PT0.5S"}, ["max_interval"], dm)
    rej("RK-12", "initial_interval PT10M alone: the default max_interval PT5M is below it",
        {"initial_interval": "PT10M"}, ["max_interval"], dm)
    rej("RK-12", "max_interval PT1M < initial_interval PT2M",
        {"initial_interval": "PT2M", "max_interval": "PT1M"}, ["max_interval"])
    rej("RK-12", "max_interval PT59.999999999S < initial_interval PT1M (1ns short)",
        {"initial_interval": "PT1M", "max_interval": "PT59.999999999S"}, ["max_interval"])
    rej("RK-12", "max_interval PT1H < initial_interval P1D",
        {"initial_interval": "P1D", "max_interval": "PT1H"}, ["max_interval"], ["should:date-components"])
    # coefficient negatives
    for v, why in [(0.99, "below 1.0"), (0.5, "below 1.0"), (0, "zero"), (-1, "negative"),
                   (-2.0, "negative"), (0.9999999999999999, "just below 1.0"),
                   ("2.0", "a string"), (True, "a boolean"), ([2], "an array")]:
        rej("RET-03", "backoff_coefficient %s is rejected: %s" % (json.dumps(v), why),
            {"backoff_coefficient": v}, ["backoff_coefficient"])
    rej("RK-09", "backoff_coefficient null is a wrong type", {"backoff_coefficient": None}, ["backoff_coefficient"])
    rej_raw("RK-14", "backoff_coefficient 1e400 is not a finite number", '{"backoff_coefficient": 1e400}',
            ["backoff_coefficient"], ["class:overflow"])
    rej_raw("RK-14", "backoff_coefficient -1e400 is not finite and below 1", '{"backoff_coefficient": -1e400}',
            ["backoff_coefficient"], ["class:overflow"])
    rej("RK-14", "backoff_coefficient 0.5 is rejected even with backoff_strategy none, which ignores it",
        {"backoff_strategy": "none", "backoff_coefficient": 0.5}, ["backoff_coefficient"])
    rej("RK-14", "backoff_coefficient 0 is rejected even with backoff_strategy linear",
        {"backoff_strategy": "linear", "backoff_coefficient": 0}, ["backoff_coefficient"])
    rej("RK-14", "backoff_coefficient 0.9 is rejected with backoff_strategy polynomial",
        {"backoff_strategy": "polynomial", "backoff_coefficient": 0.9}, ["backoff_coefficient"])
    # jitter negatives
    for v, why in [("true", "a string"), (1, "a number"), (0, "a number"), ("false", "a string"),
                   ([], "an array"), ("yes", "a string")]:
        rej("RET-16", "jitter %s is rejected: %s" % (json.dumps(v), why), {"jitter": v}, ["jitter"])
    rej("RK-09", "jitter null is a wrong type", {"jitter": None}, ["jitter"])
    # non_retryable_errors negatives
    for v, why, req in [("auth.*", "a string, not an array", "RET-16"), ([1], "contains a number", "RET-16"),
                        ([""], "contains an empty string (schema minLength 1)", "RET-20"),
                        ([None], "contains null", "RET-16"), ({"a": "b"}, "an object", "RET-16"),
                        (["ok.x", 2], "contains a number", "RET-16"),
                        (["ok.x", ""], "contains an empty string", "RK-15"), (True, "a boolean", "RET-16"),
                        ([["a.b"]], "contains an array", "RET-16")]:
        rej(req, "non_retryable_errors %s is rejected: %s" % (json.dumps(v), why),
            {"non_retryable_errors": v}, ["non_retryable_errors"])
    rej("RK-09", "non_retryable_errors null is a wrong type", {"non_retryable_errors": None},
        ["non_retryable_errors"])
    # on_exhaustion negatives
    for v, why in [("DISCARD", "case-sensitive"), ("dead-letter", "hyphen"), ("deadletter", "no underscore"),
                   ("", "empty"), (1, "a number"), ("retry", "not an exhaustion action"),
                   ("Dead_Letter", "case-sensitive"), (" discard", "leading space"), (["discard"], "an array")]:
        rej("RET-16", "on_exhaustion %s is rejected: %s" % (json.dumps(v), why),
            {"on_exhaustion": v}, ["on_exhaustion"])
    rej("RK-09", "on_exhaustion null is a wrong type", {"on_exhaustion": None}, ["on_exhaustion"])
    # backoff_strategy negatives (extension)
    for v, why in [("Exponential", "case-sensitive"), ("constant", "not one of the four names"),
                   ("fixed", "not one of the four names"), ("", "empty"), (1, "a number"),
                   ("exponential ", "trailing space"), ("random", "not one of the four names")]:
        rej("RK-01", "backoff_strategy %s is rejected: %s" % (json.dumps(v), why),
            {"backoff_strategy": v}, ["backoff_strategy"], ["class:strategy-field"])
    rej("RK-09", "backoff_strategy null is a wrong type", {"backoff_strategy": None}, ["backoff_strategy"],
        ["class:strategy-field"])
    # unknown fields (RK-02)
    for name, v, fl in [("maxAttempts", 5, []), ("max_retries", 5, []), ("retry", True, []),
                        ("strategy", "polynomial", ["class:strategy-field"]),
                        ("backoff_type", "linear", ["class:strategy-field"]),
                        ("backoff", "exponential", ["class:strategy-field"]),
                        ("Max_Attempts", 5, []), ("jitter_factor", 0.5, []), ("timeout", "PT1S", [])]:
        rej("RK-02", "unknown field %s is rejected (schema additionalProperties: false)" % name,
            {name: v}, [name], fl)
    # duplicate keys (RK-08)
    for raw, fld, why in [
        ('{"max_attempts": 3, "max_attempts": 50}', "max_attempts", "different values"),
        ('{"max_attempts": 3, "max_attempts": 3}', "max_attempts", "even with equal values"),
        ('{"on_exhaustion": "discard", "on_exhaustion": "dead_letter"}', "on_exhaustion", "different values"),
        ('{"non_retryable_errors": [], "non_retryable_errors": ["auth.*"]}', "non_retryable_errors", "different values"),
        ('{"jitter": true, "jitter": false}', "jitter", "different values"),
        ('{"initial_interval": "PT1S", "max_interval": "PT5M", "initial_interval": "PT1H"}', "initial_interval",
         "a later duplicate would break max >= initial"),
    ]:
        rej_raw("RK-08", "duplicate key %s is rejected (%s)" % (fld, why), raw, [fld])
    rej_raw("RK-08", "duplicate key backoff_strategy is rejected",
            '{"backoff_strategy": "none", "backoff_strategy": "exponential"}', ["backoff_strategy"],
            ["extension:backoff_strategy", "class:strategy-field"])
    # not an object
    for v, why in [([], "an array"), ("PT1S", "a string"), (3, "a number"), (True, "a boolean")]:
        rej("RET-20", "policy %s is rejected: %s, not an object" % (json.dumps(v), why), v, [])
    # multi-error
    rej("RET-16", "three invalid fields are all reported",
        {"max_attempts": -1, "backoff_coefficient": 0.5, "on_exhaustion": "never"},
        ["max_attempts", "backoff_coefficient", "on_exhaustion"])
    rej("RET-16", "invalid duration, wrong jitter type and wrong max_attempts type are all reported",
        {"max_attempts": "3", "initial_interval": "PT", "jitter": "yes"},
        ["max_attempts", "initial_interval", "jitter"], lenient)
    rej("RET-16", "every one of the seven fields invalid: all seven reported",
        {"max_attempts": 2.5, "initial_interval": "1s", "backoff_coefficient": 0.1, "max_interval": "P",
         "jitter": 1, "non_retryable_errors": [""], "on_exhaustion": "DISCARD"},
        ["max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "jitter",
         "non_retryable_errors", "on_exhaustion"], lenient)
    rej("RK-02", "an unknown field and an invalid field are both reported",
        {"maxAttempts": 5, "max_attempts": -5}, ["maxAttempts", "max_attempts"])
    rej("RET-16", "invalid non_retryable_errors and unknown-case on_exhaustion both reported",
        {"non_retryable_errors": "auth.*", "on_exhaustion": "Discard"}, ["non_retryable_errors", "on_exhaustion"])
    rej("RK-12", "initial_interval PT0S and coefficient 0.5 both reported",
        {"initial_interval": "PT0S", "backoff_coefficient": 0.5}, ["initial_interval", "backoff_coefficient"], lenient)
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


# ---------------------------------------------------------------------------
# delay

def gen_delay(k: Kind):
    def dl(req, policy, n, r=None, flags=(), section=None, formula="", ):
        fl = list(flags)
        for f in ext_flags(policy) + strategy_flags(policy, n, r):
            if f not in fl:
                fl.append(f)
        inp = {"policy": policy, "attempt": n}
        m = merged(policy)
        if r is not None:
            inp["rand"] = r
            v = jittered(policy, n, r)
            exp = {"delay_ns": v}
            res = fsec(v)
        elif m["jitter"]:
            lo, hi = bounds(policy, n)
            exp = {"min_ns": lo, "max_ns": hi}
            res = "[%s, %s]" % (fsec(lo), fsec(hi))
        else:
            v = capped(policy, n)
            exp = {"delay_ns": v}
            res = fsec(v)
        desc = "n=%d: %s -> %s" % (n, formula, res)
        return k.add(req, desc, inp, exp, fl, section)

    def dl_err(req, desc, policy, n, err, flags=()):
        k.add(req, desc, {"policy": policy, "attempt": n}, {"error": err}, flags)

    # 3.1 none PT5S
    p = {"initial_interval": "PT5S", "backoff_strategy": "none", "jitter": False}
    for n in [1, 2, 3, 4]:
        dl("RET-04", p, n, formula="none: I = 5s (section 3.1 table)", section="3.1")
    # 3.2 linear PT5S
    p = {"initial_interval": "PT5S", "backoff_strategy": "linear", "jitter": False}
    for n in [1, 2, 3, 4]:
        dl("RET-04", p, n, formula="linear: 5s * %d (section 3.2 table)" % n, section="3.2")
    # 3.3 exponential
    p = {"initial_interval": "PT1S", "backoff_coefficient": 2.0, "max_interval": "PT5M", "jitter": False}
    for n in range(1, 11):
        raw = 2 ** (n - 1)
        f = "1s * 2^%d = %ds" % (n - 1, raw) + (", capped at PT5M" if raw > 300 else "")
        dl("RET-04", p, n, formula=f + " (section 3.3 table, retry #%d)" % n, section="3.3")
    # 3.4 polynomial
    p = {"initial_interval": "PT1S", "backoff_coefficient": 4.0, "max_interval": "PT5M",
         "backoff_strategy": "polynomial", "jitter": False}
    for n in range(1, 6):
        raw = n ** 4
        f = "1s * %d^4 = %ds" % (n, raw) + (", capped at PT5M" if raw > 300 else "")
        dl("RET-04", p, n, formula=f + " (section 3.4 table)", section="3.4")
    # 5.3 jitter ranges (bounds)
    p = {"initial_interval": "PT10S", "backoff_coefficient": 2.0, "jitter": True}
    for n in range(1, 7):
        raw = 10 * 2 ** (n - 1)
        cap = min(raw, 300)
        f = "D = min(10s * 2^%d, PT5M default) = %ds, bounds [D*0.5, min(D*1.5, 300s)] (section 5.3 table)" % (n - 1, cap)
        dl("RET-05", p, n, flags=["class:default-merge"] + (["class:post-jitter-cap"] if n == 6 else []),
           formula=f, section="5.3")
    # 5.3 exact draws
    for n, r in [(1, 0.0), (1, 0.5), (1, R_HI), (5, 0.75), (5, R_HI)]:
        cap = 10 * 2 ** (n - 1)
        dl("RET-05", p, n, r, formula="%ds * (0.5 + %r)" % (cap, r), section="5.3")
    for r in [0.0, 0.25, 0.5, 0.75, R_HI]:
        f = "min(300s * (0.5 + %r), 300s)" % r
        dl("RET-06", p, 6, r, flags=["class:post-jitter-cap"], formula=f + " (section 5.3 last row)", section="5.3")
    # 12.2 default
    for n in [1, 2]:
        dl("RET-09", {}, n, 0.5, ["class:default-merge"],
           formula="default policy, 1s * 2^%d * (0.5 + 0.5) (section 12.2: 1s, 2s)" % (n - 1), section="12.2")
    for n in [1, 2, 3]:
        dl("RET-09", {}, n, None, ["class:default-merge"],
           formula="default policy, D = 1s * 2^%d" % (n - 1), section="12.2")
    for n in [1, 2]:
        dl("RET-10", {"jitter": False}, n, None, ["class:default-merge"],
           formula="jitter false merged with defaults, 1s * 2^%d" % (n - 1), section="12.2")
    # 12.3 with backoff_strategy polynomial
    p123 = {"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0,
            "max_interval": "PT1H", "jitter": True,
            "non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
            "on_exhaustion": "dead_letter", "backoff_strategy": "polynomial"}
    for n in range(1, 6):
        raw = 15 * n ** 4
        f = "15s * %d^4 = %ds" % (n, raw) + (", capped at PT1H" if raw > 3600 else "") + ", * (0.5 + 0.5)"
        dl("RK-01", p123, n, 0.5, ["class:strategy-field"], formula=f + " (section 12.3 table)", section="12.3")
    p123nj = dict(p123, jitter=False)
    for n in range(1, 6):
        raw = 15 * n ** 4
        f = "15s * %d^4 = %ds" % (n, raw) + (", capped at PT1H" if raw > 3600 else "")
        dl("RK-01", p123nj, n, formula=f + " (section 12.3 table, jitter off)", section="12.3")
    dl("RET-06", p123, 5, None, ["class:post-jitter-cap"],
       formula="D = 3600s (capped), bounds [1800s, min(5400s, 3600s)]", section="12.3")
    dl("RET-06", p123, 5, R_HI, ["class:post-jitter-cap"],
       formula="min(3600s * (0.5 + %r), 3600s)" % R_HI, section="12.3")
    # 12.3 as written (no backoff_strategy): exponential 15s * 4^(n-1) (RK-01)
    p123x = {k_: v for k_, v in p123nj.items() if k_ != "backoff_strategy"}
    for n in [2, 3, 4]:
        raw = 15 * 4 ** (n - 1)
        dl("RK-01", p123x, n, None, ["class:strategy-field"],
           formula="no backoff_strategy: exponential 15s * 4^%d = %ds%s (not polynomial 15s * %d^4)" % (
               n - 1, raw, ", capped at PT1H" if raw > 3600 else "", n), section="12.3")
    # 12.4 exponential PT30S
    p124 = {"max_attempts": 5, "initial_interval": "PT30S", "backoff_coefficient": 2.0,
            "max_interval": "PT15M", "jitter": True, "non_retryable_errors": [], "on_exhaustion": "dead_letter"}
    for n in [1, 2, 3, 4, 5, 6]:
        raw = 30 * 2 ** (n - 1)
        dl("RET-04", p124, n, 0.5, formula="30s * 2^%d = %ds%s, * (0.5 + 0.5)" % (
            n - 1, raw, ", capped at PT15M" if raw > 900 else ""), section="12.4")
    # 12.5 constant via coefficient 1.0
    p125 = {"max_attempts": 60, "initial_interval": "PT10S", "backoff_coefficient": 1.0,
            "max_interval": "PT10S", "jitter": False, "non_retryable_errors": [], "on_exhaustion": "dead_letter"}
    for n in [1, 2, 30, 59]:
        dl("RET-04", p125, n, formula="10s * 1.0^%d = 10s (section 12.5 constant)" % (n - 1), section="12.5")
    # cap (RET-04)
    pc = {"initial_interval": "PT1S", "max_interval": "PT10S", "jitter": False}
    for n in [4, 5, 6]:
        raw = 2 ** (n - 1)
        dl("RET-04", pc, n, formula="min(1s * 2^%d, 10s)" % (n - 1))
    pl = {"initial_interval": "PT7S", "max_interval": "PT20S", "backoff_strategy": "linear", "jitter": False}
    for n in [2, 3]:
        dl("RET-04", pl, n, formula="min(7s * %d, 20s)" % n)
    pp = {"initial_interval": "PT1S", "backoff_coefficient": 2.0, "max_interval": "PT1M",
          "backoff_strategy": "polynomial", "jitter": False}
    for n in [7, 8, 9]:
        dl("RET-04", pp, n, formula="min(1s * %d^2, 60s)" % n)
    # pre-jitter cap (RK-05: lower bound is half of the capped delay)
    pj = {"initial_interval": "PT1S", "max_interval": "PT5M", "jitter": True}
    dl("RK-05", pj, 10, 0.0, formula="cap first: min(512s, 300s) * 0.5 = 150s (not min(256s, 300s))")
    dl("RK-05", pj, 10, 0.25, formula="min(512s, 300s) * 0.75")
    dl("RK-05", pj, 10, None, formula="D = min(512s, 300s) = 300s; bounds [150s, 300s]")
    # post-jitter cap (RET-06 / RK-05)
    pj10 = {"initial_interval": "PT1S", "max_interval": "PT10S", "jitter": True}
    pjc = ["class:post-jitter-cap"]
    dl("RET-06", pj10, 4, 0.75, pjc, formula="min(8s * 1.25, 10s)")
    dl("RET-06", pj10, 4, R_HI, pjc, formula="min(8s * (0.5 + %r), 10s)" % R_HI)
    dl("RET-06", pj10, 4, None, pjc, formula="D = 8s; bounds [4s, min(12s, 10s)]")
    dl("RET-06", pj10, 10, 0.25, pjc, formula="min(min(512s, 10s) * 0.75, 10s)")
    dl("RET-06", pj10, 10, 0.5, pjc, formula="min(10s * 1.0, 10s)")
    dl("RET-06", pj10, 10, 0.75, pjc, formula="min(10s * 1.25, 10s)")
    dl("RET-06", pj10, 10, None, pjc, formula="D = 10s; bounds [5s, min(15s, 10s)]")
    peq = {"initial_interval": "PT10S", "max_interval": "PT10S", "jitter": True}
    dl("RK-05", peq, 1, 0.75, pjc, formula="max == initial: min(10s * 1.25, 10s)")
    dl("RK-05", peq, 1, 0.0, pjc, formula="max == initial: 10s * 0.5")
    dl("RK-05", peq, 3, None, pjc, formula="D = 10s; bounds [5s, 10s]")
    pn6 = {"initial_interval": "PT5S", "max_interval": "PT6S", "backoff_strategy": "none", "jitter": True}
    for r in [0.25, 0.5, 0.75]:
        dl("RK-05", pn6, 2, r, pjc, formula="none: min(5s * (0.5 + %r), 6s)" % r)
    dl("RET-06", {"jitter": True}, 9, 0.75, pjc + ["class:default-merge"],
       formula="defaults: min(min(256s, 300s) * 1.25, 300s)")
    dl("RET-06", {}, 20, R_HI, pjc + ["class:default-merge"],
       formula="defaults: min(300s * (0.5 + %r), 300s)" % R_HI)
    # RET-05 jitter multiplier exactness
    pm = {"initial_interval": "PT4S", "max_interval": "PT1H", "backoff_strategy": "none", "jitter": True}
    for r in [0.0, 0.125, 0.25, 0.5, 0.75, R_HI]:
        dl("RET-05", pm, 1, r, formula="4s * (0.5 + %r)" % r)
    dl("RET-05", pm, 1, None, formula="D = 4s; bounds [2s, 6s]")
    dl("RET-05", {"initial_interval": "PT3S", "max_interval": "PT1H", "jitter": True}, 3, 0.25,
       formula="3s * 2^2 * 0.75")
    # jitter false ignores rand
    dl("RET-05", {"jitter": False}, 2, R_HI, ["class:default-merge"],
       formula="jitter false: rand ignored, 1s * 2^1")
    dl("RET-05", {"jitter": False, "initial_interval": "PT3S"}, 1, 0.0, formula="jitter false: rand ignored, 3s")
    # RK-06 truncation
    t3 = {"initial_interval": "PT0.000000003S", "backoff_coefficient": 1.5, "max_interval": "PT1S", "jitter": False}
    for n, f in [(2, "3ns * 1.5 = 4.5ns"), (3, "3ns * 1.5^2 = 6.75ns"), (4, "3ns * 1.5^3 = 10.125ns"),
                 (5, "3ns * 1.5^4 = 15.1875ns")]:
        dl("RK-06", t3, n, formula=f + ", truncated")
    tn = {"initial_interval": "PT0.000000003S", "max_interval": "PT1S", "backoff_strategy": "none", "jitter": True}
    for r, f in [(0.0, "3ns * 0.5 = 1.5ns"), (0.25, "3ns * 0.75 = 2.25ns"), (0.125, "3ns * 0.625 = 1.875ns"),
                 (R_HI, "3ns * 1.499755859375 = 4.499...ns")]:
        dl("RK-06", tn, 1, r, formula=f + ", truncated")
    dl("RK-06", {"initial_interval": "PT0.000000001S", "max_interval": "PT1S", "backoff_strategy": "none",
                 "jitter": True}, 1, 0.0, formula="1ns * 0.5 = 0.5ns, truncated to 0")
    dl("RK-06", {"initial_interval": "PT0.000000003S", "max_interval": "PT1S", "backoff_strategy": "none",
                 "jitter": True}, 1, None, formula="D = 3ns; bounds [trunc(1.5ns), trunc(4.5ns)]")
    dl("RK-06", {"initial_interval": "PT0.000000007S", "backoff_coefficient": 1.5, "max_interval": "PT1S",
                 "jitter": True}, 3, 0.25,
       formula="trunc(7ns * 1.5^2 = 15.75ns) = 15ns, then trunc(15ns * 0.75 = 11.25ns)")
    # non-integer coefficient exact in float64: PT8S * 1.5^(n-1)
    p8 = {"initial_interval": "PT8S", "backoff_coefficient": 1.5, "max_interval": "PT5M", "jitter": False}
    for n in range(1, 10):
        dl("RET-04", p8, n, formula="min(8s * 1.5^%d, 300s)" % (n - 1), section="3.3")
    # non-integer, not exact in binary
    ft = ["float-tolerance"]
    p11 = {"initial_interval": "PT1S", "backoff_coefficient": 1.1, "max_interval": "PT5M", "jitter": False}
    for n in [2, 3, 10]:
        dl("RET-04", p11, n, flags=ft, formula="1s * 1.1^%d (exact decimal 1.1)" % (n - 1), section="3.3")
    p25 = {"initial_interval": "PT1S", "backoff_coefficient": 2.5, "max_interval": "PT1H",
           "backoff_strategy": "polynomial", "jitter": False}
    for n in [2, 3, 4]:
        dl("RET-04", p25, n, flags=ft if n != 4 else [], formula="1s * %d^2.5" % n, section="3.4")
    # linear / none ignore the coefficient
    dl("RK-14", {"initial_interval": "PT5S", "backoff_coefficient": 3.0, "backoff_strategy": "linear",
                 "jitter": False}, 3, formula="linear ignores coefficient 3.0: 5s * 3", section="3.2")
    dl("RK-14", {"initial_interval": "PT5S", "backoff_coefficient": 10.0, "backoff_strategy": "none",
                 "jitter": False}, 5, formula="none ignores coefficient 10.0: 5s", section="3.1")
    # strategy-field class: coefficient never selects a strategy
    sf = ["class:strategy-field"]
    p4 = {"initial_interval": "PT1S", "backoff_coefficient": 4.0, "max_interval": "PT5M", "jitter": False}
    for n in [2, 3, 4, 5]:
        raw = 4 ** (n - 1)
        dl("RK-01", p4, n, flags=sf, formula="coefficient 4.0, no backoff_strategy: exponential min(1s * 4^%d, 300s) "
           "(polynomial would give %ds)" % (n - 1, min(n ** 4, 300)))
    dl("RK-01", {"initial_interval": "PT5S", "backoff_coefficient": 2.0, "backoff_strategy": "none",
                 "jitter": False}, 4, flags=sf, formula="backoff_strategy none with coefficient 2.0: 5s (not 40s)")
    dl("RK-01", {"initial_interval": "PT5S", "backoff_coefficient": 2.0, "backoff_strategy": "linear",
                 "jitter": False}, 4, flags=sf, formula="backoff_strategy linear with coefficient 2.0: 5s * 4 (not 40s)")
    dl("RK-01", {"initial_interval": "PT1S", "backoff_coefficient": 3.0, "backoff_strategy": "polynomial",
                 "jitter": False}, 4, flags=sf, formula="polynomial 1s * 4^3 (exponential would give 27s)")
    dl("RK-01", {"initial_interval": "PT1S", "backoff_coefficient": 3.0, "backoff_strategy": "exponential",
                 "jitter": False}, 4, flags=sf, formula="explicit exponential 1s * 3^3 (polynomial would give 64s)")
    dl("RK-01", {"initial_interval": "PT1S", "backoff_coefficient": 1.0, "jitter": False}, 6, flags=sf,
       formula="coefficient 1.0, no backoff_strategy: exponential 1s * 1^5")
    # coefficient 1.0 exponential = constant
    p1 = {"initial_interval": "PT7S", "backoff_coefficient": 1.0, "max_interval": "PT1M", "jitter": False}
    for n in [1, 5, 100, 2 ** 31 - 1]:
        dl("RET-04", p1, n, flags=["class:overflow"] if n > 100 else [],
           formula="7s * 1.0^(n-1) = 7s (coefficient 1.0 is constant backoff)", section="2.2")
    # RK-16: first delay is initial_interval for every strategy
    for st, c in [("none", 2.0), ("linear", 5.0), ("exponential", 3.0), ("polynomial", 4.0), ("polynomial", 2.5)]:
        dl("RK-16", {"initial_interval": "PT3S", "backoff_coefficient": c, "backoff_strategy": st,
                     "max_interval": "PT1H", "jitter": False}, 1,
           formula="first delay after attempt 1 is I = 3s for %s (C=%r)" % (st, c))
    dl("RK-16", {"initial_interval": "PT3S", "jitter": False}, 1, formula="exponential default: first delay I = 3s")
    dl("RK-16", {"initial_interval": "PT3S", "jitter": False}, 2,
       formula="attempt 2 failed -> retry #2 = 3s * 2^1 (not retry #1)")
    # RK-17 overflow, exponential defaults
    ov = ["class:overflow"]
    pe = {"jitter": False}
    for n in [64, 65, 1000, 1024, 1075, 2 ** 31 - 1, 2 ** 32, 2 ** 53, INT64_MAX]:
        dl("RK-17" if n > 64 else "RET-04", pe, n, flags=ov + ["class:default-merge"],
           formula="defaults: 1s * 2^(n-1) saturates, capped at PT5M")
    for n, r in [(INT64_MAX, 0.0), (INT64_MAX, R_HI), (2 ** 53, 0.5)]:
        dl("RK-17", {}, n, r, flags=ov + ["class:post-jitter-cap"],
           formula="defaults: min(300s * (0.5 + %r), 300s)" % r)
    dl("RK-17", {}, INT64_MAX, None, flags=ov, formula="defaults: D = 300s; bounds [150s, 300s]")
    dl("RK-17", {"initial_interval": "PT1H", "max_interval": "PT24H", "backoff_strategy": "linear",
                 "jitter": False}, INT64_MAX, flags=ov, formula="linear 1h * (2^63-1) exceeds 2^63-1 ns, capped at 24h")
    dl("RK-17", {"initial_interval": "PT1H", "max_interval": "PT24H", "backoff_strategy": "linear",
                 "jitter": False}, 2 ** 31 - 1, flags=ov, formula="linear 1h * (2^31-1), capped at 24h")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 4.0, "max_interval": "PT1H",
                 "backoff_strategy": "polynomial", "jitter": False}, 2 ** 31 - 1, flags=ov,
       formula="polynomial 1s * (2^31-1)^4 overflows, capped at 1h")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 4.0, "max_interval": "PT1H",
                 "backoff_strategy": "polynomial", "jitter": False}, INT64_MAX, flags=ov,
       formula="polynomial 1s * (2^63-1)^4 overflows, capped at 1h")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 100.0, "max_interval": "PT1H",
                 "backoff_strategy": "polynomial", "jitter": False}, 2, flags=ov,
       formula="polynomial 1s * 2^100 exceeds 2^63-1 ns, capped at 1h")
    dl("RK-17", {"initial_interval": "PT5S", "backoff_strategy": "none", "jitter": False}, INT64_MAX, flags=ov,
       formula="none at attempt 2^63-1: 5s")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 1.7976931348623157e308, "jitter": False},
       2, flags=ov, formula="1s * 1.797e308 overflows, capped at PT5M")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 1.7976931348623157e308, "jitter": False},
       3, flags=ov, formula="1s * 1.797e308^2 is +Inf in float64, capped at PT5M")
    dl("RK-17", {"initial_interval": "PT1S", "backoff_coefficient": 1e308, "jitter": True},
       INT64_MAX, 0.5, flags=ov, formula="1s * 1e308^(2^63-2) capped at 300s, * 1.0")
    # max_interval = the largest duration
    pmx = {"initial_interval": "PT1S", "max_interval": MAX_ISO, "jitter": False}
    for n in [34, 35, 64, 100, INT64_MAX]:
        dl("RK-17", pmx, n, flags=ov, formula="min(1s * 2^%s, 2^63-1 ns)" % ("(n-1)" if n > 100 else str(n - 1)))
    dl("RK-17", dict(pmx, jitter=True), 100, 0.5, flags=ov,
       formula="D = 2^63-1 ns (capped); min(D * 1.0, max) = 2^63-1 ns (never wrapped to negative)")
    dl("RK-17", dict(pmx, jitter=True), 100, R_HI, flags=ov + ["class:post-jitter-cap"],
       formula="D = 2^63-1 ns; min(D * 1.4997..., max) = 2^63-1 ns")
    dl("RK-17", dict(pmx, jitter=True), 100, 0.0, flags=ov + ["float-tolerance"],
       formula="D = 2^63-1 ns; trunc(D * 0.5) = 4611686018427387903 ns")
    dl("RK-17", {"initial_interval": MAX_ISO, "max_interval": MAX_ISO, "backoff_strategy": "none",
                 "jitter": False}, 1, flags=ov, formula="none with I = max = 2^63-1 ns")
    dl("RK-17", {"initial_interval": MAX_ISO, "max_interval": MAX_ISO, "backoff_strategy": "linear",
                 "jitter": False}, 2, flags=ov, formula="linear (2^63-1 ns) * 2 overflows, capped at 2^63-1 ns")
    dl("RK-17", {"initial_interval": MAX_ISO, "max_interval": MAX_ISO, "jitter": False}, 3, flags=ov,
       formula="exponential (2^63-1 ns) * 2^2 overflows, capped at 2^63-1 ns")
    # errors
    dl_err("RK-16", "attempt 0 is not a failed attempt (attempts are 1-based): invalid request", {}, 0, ERR_REQUEST)
    dl_err("RK-16", "attempt -1: invalid request", {}, -1, ERR_REQUEST)
    dl_err("RET-16", "an invalid policy is rejected by delay too (coefficient 0.5)",
           {"backoff_coefficient": 0.5}, 1, ERR_POLICY)
    dl_err("RET-16", "an invalid policy is rejected by delay too (initial_interval PT)",
           {"initial_interval": "PT"}, 1, ERR_POLICY, ["class:lenient-duration"])
    dl_err("RK-12", "initial_interval PT0S is rejected by delay too",
           {"initial_interval": "PT0S"}, 1, ERR_POLICY, ["class:lenient-duration"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)
    # Found by "retrykit fuzz": a coefficient just above 1 reaches the cap
    # only after millions of attempts, and a float64 power by repeated
    # squaring (Go's math.Pow) multiplies its rounding error with every
    # squaring: about 3e-11 relative at n = 5 000 001, several ns here. The
    # coefficient is written exactly as the float64 1 + 2^-20 (policy_raw,
    # since a Python float would be written with its shortest repr, whose
    # decimal value is another number), so a careful float64 computation is
    # within the float tolerance. Value: 60-digit decimal exp/ln.
    for n in [5000001, 5500001]:
        getcontext().prec = 60
        c = Decimal(1) + Decimal(2) ** -20
        v = int((Decimal(10 ** 9) * (c.ln() * (n - 1)).exp()).to_integral_value(rounding=ROUND_FLOOR))
        assert v < 300 * 10 ** 9
        k.add("RK-23", "n=%d: 1s * (1 + 2^-20)^%d = %s, below the PT5M default cap (coefficient 1.00000095367431640625, "
              "exact in binary; 60-digit decimal)" % (n, n - 1, fsec(v)),
              {"policy_raw": '{"backoff_coefficient":1.00000095367431640625,"jitter":false}', "attempt": n},
              {"delay_ns": v}, ["float-tolerance", "retrykit:decision", "class:default-merge"], "3.3")
    # Found by "retrykit fuzz" against the Python adapter: a fractional
    # exponent whose power is an integer must come out exact. math.Pow(64,
    # 1.5) is one ulp below 512, which truncation turned into 511 ns (638
    # instead of 640 after jitter). Exact: iroot(n^3, 2), no tolerance.
    p15 = {"initial_interval": "PT0.000000001S", "backoff_coefficient": 1.5, "backoff_strategy": "polynomial"}
    dl("RK-23", dict(p15, jitter=False), 64, flags=["retrykit:decision"], section="3.4",
       formula="1ns * 64^1.5 = 512ns exactly (64^1.5 is an integer)")
    dl("RK-23", p15, 64, 0.75, flags=["retrykit:decision"], section="3.4",
       formula="trunc(512ns * (0.5 + 0.75)) = 640ns")
    dl("RK-23", dict(p15, jitter=False), 65536, flags=["retrykit:decision"], section="3.4",
       formula="1ns * 65536^1.5 = 2^24 ns exactly")


# ---------------------------------------------------------------------------
# match

def gen_match(k: Kind):
    def mt(req, patterns, t, want, why, flags=(), section=None):
        if ".*" in patterns:
            # RK-15: an entry of just ".*" has an empty prefix; it is rejected
            # rather than read as "types starting with a dot".
            return mt_err(req, patterns, t, "'.*' alone has an empty prefix and is invalid", flags)
        assert is_match(patterns, t) == want, (patterns, t)
        fl = list(flags)
        if want and not any(p == t for p in patterns) and "should:prefix-match" not in fl:
            fl.append("should:prefix-match")
        shown = json.dumps(patterns) if len(patterns) <= 6 else "[%d entries: %s ... %s]" % (
            len(patterns), json.dumps(patterns[0]), json.dumps(patterns[-1]))
        k.add(req, "%s vs %s: %s (%s)" % (json.dumps(t), shown, "match" if want else "no match", why),
              {"patterns": patterns, "error_type": t}, {"match": want}, fl, section)

    def mt_err(req, patterns, t, why, flags=()):
        k.add(req, "%s: invalid pattern list (%s)" % (json.dumps(patterns), why),
              {"patterns": patterns, "error_type": t}, {"error": ERR_PATTERN}, flags)

    rx = ["class:regex-match"]
    # section 6.2 table
    t62 = ["validation.payload_invalid", "auth.*"]
    for t, want, why in [("validation.payload_invalid", True, "exact match"),
                         ("validation.schema_error", False, "no match"),
                         ("auth.token_expired", True, "prefix auth.*"),
                         ("auth.forbidden", True, "prefix auth.*"),
                         ("auth", False, "auth does not start with auth."),
                         ("external.auth.failure", False, "prefix is auth, not external.auth")]:
        mt("RET-18" if not t.startswith("auth.") else "RK-15", t62, t, want, why + ", section 6.2 table",
           rx if t in ("auth", "external.auth.failure") else [], section="6.2")
    # exact matching
    ex = ["resource.not_found", "payment.card_stolen"]
    for t, want, why, fl in [("resource.not_found", True, "exact", []), ("payment.card_stolen", True, "exact", []),
                             ("resource.not_found.extra", False, "exact entries are not prefixes", rx),
                             ("resource.not_foun", False, "a prefix of an entry is not a match", []),
                             ("Resource.Not_Found", False, "case-sensitive", []),
                             ("RESOURCE.NOT_FOUND", False, "case-sensitive", []),
                             (" resource.not_found", False, "no trimming", rx),
                             ("resource.not_found ", False, "no trimming", rx),
                             ("resource", False, "not the domain alone", []),
                             ("", False, "empty error type", [])]:
        mt("RET-18", ex, t, want, why, fl)
    mt("RET-18", [], "auth.x", False, "empty list matches nothing")
    mt("RET-18", [], "", False, "empty list, empty error type")
    mt("RET-18", ["a"], "a", True, "single-segment exact")
    mt("RET-18", ["payment.card_st\u00f6len"], "payment.card_st\u00f6len", True, "non-ASCII exact")
    mt("RET-18", ["payment.card_st\u00f6len"], "payment.card_sto\u0308len", False,
       "no Unicode normalisation: precomposed vs combining")
    # prefix rules (RK-15)
    pa = ["auth.*"]
    for t, want, why, fl in [
        ("auth.x", True, "one segment after the prefix", []),
        ("auth.x.y", True, "several segments after the prefix", []),
        ("auth.token_expired", True, "prefix", []),
        ("auth", False, "the prefix keeps its dot (section 6.2 table, as match-0005)", rx),
        ("authx", False, "'.' is not a wildcard character", rx),
        ("authentication.failed", False, "'auth' + more letters, then a dot", rx),
        ("auth_x", False, "'.' is literal", rx),
        ("external.auth.x", False, "anchored at the start", rx),
        ("xauth.x", False, "anchored at the start", rx),
        ("AUTH.x", False, "case-sensitive", []),
        ("Auth.token", False, "case-sensitive", []),
        ("", False, "empty error type", rx),
        ("auth.*", True, "the entry itself (literally)", []),
        ("auth.", True, "starts with 'auth.' (nothing after the dot)", []),
        ("auth.\u00fc", True, "non-ASCII after the prefix", []),
    ]:
        if t == "auth.":
            # Required a match where the implementation-defined vector
            # (appended below) accepts either answer.
            k.retire("'auth.' is implementation-defined: see the acceptable vector")
            continue
        # "auth" vs auth.* is in the section 6.2 table: a spec requirement.
        mt("RET-18" if t == "auth" else "RK-15", pa, t, want, why, fl)
    # literal special characters
    for pats, t, want, why in [
        (["*"], "auth.x", False, "'*' alone is an exact string, not match-all"),
        (["*"], "*", True, "'*' matches only itself"),
        (["*"], "", False, "'*' does not match the empty string"),
        ([".*"], "auth", False, "'.*' is a prefix entry with prefix '.', not match-all"),
        ([".*"], "auth.x", False, "'.*' only matches types starting with '.'"),
        (["auth*"], "authx", False, "only a trailing '.*' is special; 'auth*' is exact"),
        (["auth*"], "auth", False, "'auth*' is exact"),
        (["auth*"], "auth.x", False, "'auth*' is exact"),
        (["auth*"], "auth*", True, "'auth*' matches itself"),
        (["a.*.b"], "a.x.b", False, "'.*' in the middle is literal"),
        (["a.*.b"], "a.*.b", True, "matches itself"),
        (["a.*.b"], "a.b", False, "literal"),
        (["auth.+"], "auth.x", False, "'+' is literal"),
        (["auth.+"], "auth.+", True, "matches itself"),
        (["^auth"], "auth", False, "'^' is literal"),
        (["^auth"], "^auth", True, "matches itself"),
        (["auth.[a-z]+"], "auth.x", False, "character classes are literal"),
        (["auth.?"], "auth", False, "'?' is literal"),
        (["auth.?"], "auth.", False, "'?' is literal"),
        (["auth\\..*"], "auth.x", False, "backslash is literal: prefix is 'auth\\..'"),
        (["(auth|billing).*"], "auth.x", False, "parentheses and '|' are literal"),
        (["(auth|billing).*"], "billing", False, "parentheses and '|' are literal"),
        (["auth.*$"], "auth.x", False, "ends in '$', not '.*': exact"),
        (["auth.**"], "auth.x", False, "ends in '**', not '.*': exact"),
        (["auth.x|auth.y"], "auth.x", False, "'|' is literal"),
        (["auth.?.*"], "auth.x.y", False, "prefix 'auth.?.' is literal"),
        (["auth.%"], "auth.x", False, "SQL LIKE wildcard is literal"),
        (["auth._"], "auth.x", False, "SQL LIKE wildcard is literal"),
    ]:
        mt("RK-15" if any(p.endswith(".*") for p in pats) else "RET-18", pats, t, want, why, rx)
    for pats, t, want, why in [
        (["auth\\..*"], "auth\\..x", True, "prefix 'auth\\..' (everything before the final '*')"),
        (["(auth|billing).*"], "(auth|billing).x", True, "prefix '(auth|billing).'"),
        (["auth..*"], "auth..x", True, "'auth..*' has prefix 'auth..'"),
        (["auth..*"], "auth.x", False, "'auth..*' has prefix 'auth..'"),
        ([".*"], ".x", True, "prefix '.'"),
        (["a.b.*"], "a.b.c", True, "multi-segment prefix"),
        (["a.b.*"], "a.bc", False, "multi-segment prefix keeps its dot"),
        (["a.b.*"], "a.b", False, "multi-segment prefix keeps its dot"),
        (["a.b.*"], "a.x.c", False, "second segment must match"),
    ]:
        mt("RK-15", pats, t, want, why, rx)
    # several patterns
    pm = ["validation.*", "auth.invalid_credentials", "external.crm.api_deprecated", "resource.not_found"]
    for t, want, why in [("validation.amount", True, "first entry, prefix"),
                         ("resource.not_found", True, "last entry, exact"),
                         ("external.crm.api_deprecated", True, "middle entry, exact"),
                         ("external.crm.service_unavailable", False, "not listed"),
                         ("auth.account_suspended", False, "auth.* not listed")]:
        mt("RET-18", pm, t, want, why, section="12.4")
    # many patterns
    many = ["svc%03d.error" % i for i in range(150)] + ["pfx%03d.*" % i for i in range(100)]
    for t, want, why in [("svc149.error", True, "last exact entry of 250"),
                         ("svc000.error", True, "first exact entry of 250"),
                         ("pfx099.timeout", True, "last prefix entry of 250"),
                         ("pfx050.a.b", True, "prefix entry among 250"),
                         ("svc150.error", False, "not among 250 entries"),
                         ("pfx100.timeout", False, "not among 250 entries"),
                         ("pfx099", False, "prefix keeps its dot among 250 entries"),
                         ("svc149.errorx", False, "exact entries among 250 are not prefixes")]:
        mt("RET-18", many, t, want, why, rx if t in ("pfx099", "svc149.errorx") else [])
    overlapping = ["a.*", "a.b.*", "a.b.c", "a.b.c.*"]
    mt("RK-15", overlapping, "a.b.c.d", True, "several overlapping entries match")
    mt("RK-15", overlapping, "b.a.b.c", False, "none anchored at the start", rx)
    dup = ["auth.*", "auth.*", "auth.x"]
    mt("RK-15", dup, "auth.y", True, "duplicate entries are harmless")
    # empty error type
    mt("RET-18", ["validation.*", "auth.*"], "", False, "empty error type (e.g. a timeout) matches no prefix")
    # empty pattern
    mt_err("RK-15", [""], "auth.x", "the only entry is empty")
    mt_err("RK-15", ["auth.*", ""], "auth.x", "an empty entry among valid ones, even though auth.* would match")
    mt_err("RK-15", ["", "x.y"], "", "an empty entry does not match the empty error type: the list is invalid")
    mt_err("RET-20", ["a.b", "c.d", ""], "c.d", "schema items minLength 1")
    k.add("RK-15", "\"auth.\" vs [\"auth.*\"]: an error type ending in a dot breaks the section 6.1 naming "
          "convention, so an implementation may match it or not (retrykit: match, the RK-15 "
          "decision); either way \"auth.x\" matches and \"auth\" does not",
          {"patterns": ["auth.*"], "error_type": "auth."}, {"acceptable": [{"match": True}, {"match": False}]},
          ["implementation-defined", "should:prefix-match"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


# ---------------------------------------------------------------------------
# decide

def gen_decide(k: Kind):
    def outcome(policy, n, etype, code):
        m = merged(policy)
        if code in ("DISCARD", "FAIL"):
            return "discard"
        if code == "DEAD_LETTER":
            return "dead_letter"
        assert code in (None, "", "RETRY")
        if is_match(m["non_retryable_errors"], etype) or n >= max(m["max_attempts"], 1):
            return m["on_exhaustion"]
        return "retry"

    def dc(req, policy, n, etype, code, why, r=None, flags=(), section=None, etype_absent=False):
        fl = list(flags)
        for f in ext_flags(policy):
            if f not in fl:
                fl.append(f)
        err = {} if etype_absent else {"type": etype}
        if code is not None:
            err["code"] = code
        inp = {"policy": policy, "attempt": n, "error": err}
        if r is not None:
            inp["rand"] = r
        act = outcome(policy, n, "" if etype_absent else etype, code)
        exp = {"action": act}
        m = merged(policy)
        tail = act
        if act == "retry":
            for f in strategy_flags(policy, n, r):
                if f not in fl:
                    fl.append(f)
            if r is not None:
                exp["delay_ns"] = jittered(policy, n, r)
                tail += " after %s" % fsec(exp["delay_ns"])
            elif m["jitter"]:
                lo, hi = bounds(policy, n)
                exp["min_ns"], exp["max_ns"] = lo, hi
                tail += " after [%s, %s]" % (fsec(lo), fsec(hi))
            else:
                exp["delay_ns"] = capped(policy, n)
                tail += " after %s" % fsec(exp["delay_ns"])
        nr = m["non_retryable_errors"]
        if (act != "retry" and code in (None, "", "RETRY") and is_match(nr, etype)
                and not any(p == etype for p in nr) and "should:prefix-match" not in fl):
            fl.append("should:prefix-match")
        outcome_text = why if why.endswith("-> " + tail) else "%s -> %s" % (why, tail)
        desc = "attempt %d, %s, code %s: %s" % (
            n, "no type" if etype_absent else json.dumps(etype), "absent" if code is None else json.dumps(code),
            outcome_text)
        return k.add(req, desc, inp, exp, fl, section)

    def dc_err(req, policy, n, etype, code, why, err=ERR_REQUEST, flags=()):
        e = {"type": etype}
        if code is not None:
            e["code"] = code
        k.add(req, "attempt %d, code %s: %s -> error" % (n, "absent" if code is None else json.dumps(code), why),
              {"policy": policy, "attempt": n, "error": e}, {"error": err}, flags)

    # handler codes x on_exhaustion x attempt below / at max
    for oe in ["discard", "dead_letter"]:
        pol = {"max_attempts": 3, "jitter": False, "on_exhaustion": oe}
        for code in [None, "RETRY", "DISCARD", "DEAD_LETTER", "FAIL"]:
            for n in [1, 3]:
                if code in ("DISCARD", "FAIL"):
                    req, why = "RET-08", "%s discards regardless of attempts and on_exhaustion" % code
                elif code == "DEAD_LETTER":
                    req, why = "RET-08", "DEAD_LETTER dead-letters regardless of attempts and on_exhaustion"
                elif n == 1:
                    req, why = "RET-08", "retry code: attempts remain, 1s * 2^0"
                else:
                    req, why = "RET-17", "attempt 3 of max_attempts 3: exhausted -> on_exhaustion %s" % oe
                dc(req, pol, n, "external.timeout", code, why)
    # code "" means RETRY (protocol), lowercase / unknown codes are errors
    dc("RK-13", {"jitter": False}, 1, "external.timeout", "", "empty code means RETRY", flags=["class:default-merge"])
    for code in ["retry", "SNOOZE", "discard", "Retry", "DEAD-LETTER", " FAIL", "RETRY ", "dead_letter", "KILL"]:
        dc_err("RK-13", {}, 1, "external.timeout", code, "unknown handler code (codes are exact uppercase names)")
    # attempt < 1
    dc_err("RK-16", {}, 0, "external.timeout", None, "attempt 0 is not a failed attempt (attempts are 1-based)")
    dc_err("RK-16", {}, -1, "external.timeout", "RETRY", "attempt -1")
    dc_err("RK-16", {}, -INT64_MAX - 1, "external.timeout", "DISCARD", "attempt -2^63, even with DISCARD")
    dc_err("RET-16", {"max_attempts": -1}, 1, "external.timeout", None, "invalid policy", ERR_POLICY)
    # non-retryable exact and prefix, attempt 1
    nr = {"max_attempts": 5, "jitter": False, "non_retryable_errors": ["resource.not_found", "auth.*"]}
    for oe in ["discard", "dead_letter"]:
        p = dict(nr, on_exhaustion=oe)
        dc("RET-07", p, 1, "resource.not_found", None, "exact non-retryable match at attempt 1 -> %s" % oe)
        dc("RET-07", p, 1, "auth.token_expired", None, "prefix non-retryable match at attempt 1 -> %s" % oe)
        dc("RET-07", p, 1, "resource.not_found", "RETRY", "explicit RETRY does not override a non-retryable match")
        dc("RET-07", p, 2, "auth.x.y", "RETRY", "prefix non-retryable, several segments")
        dc("RK-15", p, 1, "auth", None, "'auth' does not match 'auth.*': retry 1s", flags=["class:regex-match"])
        dc("RK-15", p, 1, "authx", None, "'authx' does not match 'auth.*': retry 1s", flags=["class:regex-match"])
    p = dict(nr, on_exhaustion="dead_letter")
    dc("RK-13", p, 1, "resource.not_found", "DISCARD", "DISCARD wins over a non-retryable match and dead_letter")
    dc("RK-13", p, 1, "auth.x", "FAIL", "FAIL wins over a non-retryable match and dead_letter")
    dc("RK-13", dict(nr), 1, "resource.not_found", "DEAD_LETTER", "DEAD_LETTER wins over non-retryable + discard")
    dc("RET-07", dict(nr), 1, "external.auth.x", None, "not anchored: retry 1s", flags=["class:regex-match"])
    dc("RET-07", dict(nr), 1, "", None, "empty error type (timeout) never matches: retry 1s")
    dc("RET-07", dict(nr), 1, "", None, "error.type absent (timeout) never matches: retry 1s", etype_absent=True)
    # exhaustion / RET-01
    for mx, ns in [(3, [1, 2, 3, 4, 10]), (25, [24, 25]), (1, [1, 2]), (2, [1, 2])]:
        for n in ns:
            p = {"max_attempts": mx, "jitter": False}
            act = "retry" if n < mx else "exhausted"
            dc("RET-01", p, n, "external.timeout", None,
               "max_attempts %d (section 2.2 table): %s" % (mx, "attempts remain, 1s * 2^%d" % (n - 1) if n < mx else act),
               section="2.2")
    dc("RET-01", {"max_attempts": 3, "jitter": False}, 3, "external.timeout", "RETRY",
       "RETRY never extends a job past max_attempts")
    dc("RET-01", {"max_attempts": 3, "jitter": False, "on_exhaustion": "dead_letter"}, 4, "x.y", "RETRY",
       "attempt past max_attempts is still exhausted")
    # max_attempts up to 2^63-1 is accepted at all only by RK-10.
    dc("RK-10", {"max_attempts": INT64_MAX, "jitter": False}, INT64_MAX - 1, "x.y", None,
       "attempt 2^63-2 of max 2^63-1: retry, delay capped at 300s", flags=["class:overflow"])
    dc("RK-10", {"max_attempts": INT64_MAX, "jitter": False}, INT64_MAX, "x.y", None,
       "attempt 2^63-1 of max 2^63-1: exhausted", flags=["class:overflow"])
    # max_attempts 0 (RK-04)
    for oe in ["discard", "dead_letter"]:
        p = {"max_attempts": 0, "on_exhaustion": oe}
        dc("RK-04", p, 1, "external.timeout", None, "max_attempts 0 behaves as 1: no retry -> %s" % oe)
        dc("RK-04", p, 1, "external.timeout", "RETRY", "max_attempts 0: RETRY does not retry -> %s" % oe)
        dc("RK-04", p, 2, "external.timeout", None, "max_attempts 0, attempt 2 -> %s" % oe)
    dc("RK-04", {"max_attempts": 0}, 1, "x.y", "DEAD_LETTER", "max_attempts 0 with DEAD_LETTER")
    dc("RK-04", {"max_attempts": 1}, 1, "x.y", None, "max_attempts 1: run once, no retry")
    # exhaustion both ways (RET-17)
    for oe in ["discard", "dead_letter"]:
        dc("RET-17", {"max_attempts": 5, "jitter": False, "on_exhaustion": oe}, 5, "x.y", None,
           "exhausted at 5 of 5 -> %s" % oe)
        dc("RET-17", {"max_attempts": 5, "jitter": False, "on_exhaustion": oe}, 4, "x.y", None,
           "4 of 5: retry 1s * 2^3")
    # default merge
    dm = ["class:default-merge"]
    dc("RET-10", {"on_exhaustion": "dead_letter"}, 3, "x.y", None, "default max_attempts 3 merged: exhausted", flags=dm)
    dc("RET-10", {"on_exhaustion": "dead_letter"}, 2, "x.y", None, "default max_attempts 3 merged: retry", r=0.5, flags=dm)
    dc("RET-10", {"jitter": False}, 2, "x.y", None, "default 1s, 2.0 merged: 1s * 2^1", flags=dm)
    dc("RET-10", {"max_attempts": 5}, 4, "x.y", None, "default jitter merged: 1s * 2^3 * (0.5 + 0.5)", r=0.5, flags=dm)
    dc("RET-10", {"max_attempts": 5}, 4, "x.y", None, "default jitter merged, no rand: bounds", flags=dm)
    dc("RET-10", {"max_attempts": 20, "jitter": False}, 15, "x.y", None, "default max_interval PT5M merged", flags=dm)
    dc("RET-10", {"non_retryable_errors": ["x.y"]}, 1, "x.y", None, "default on_exhaustion discard merged", flags=dm)
    # 12.2 default policy
    for n, r in [(1, 0.5), (2, 0.5), (1, None), (2, None), (3, 0.5), (1, 0.0), (2, R_HI)]:
        dc("RET-09", {}, n, "email.smtp_unavailable", None, "default policy (section 12.2)", r=r, flags=dm,
           section="12.2")
    # 12.1
    p121 = {"max_attempts": 1}
    dc("RET-01", p121, 1, "analytics.write_failed", None, "section 12.1: runs once, then discarded", section="12.1")
    # 12.3
    p123 = {"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0,
            "max_interval": "PT1H", "jitter": True,
            "non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
            "on_exhaustion": "dead_letter", "backoff_strategy": "polynomial"}
    dc("RET-07", p123, 1, "payment.card_stolen", None, "section 12.3: card stolen is non-retryable", section="12.3")
    dc("RET-07", p123, 3, "payment.card_expired", None, "section 12.3: card expired is non-retryable", section="12.3")
    dc("RET-07", p123, 1, "validation.amount_negative", None, "section 12.3: validation.* prefix", section="12.3")
    dc("RK-01", p123, 4, "payment.gateway_timeout", None, "section 12.3: 15s * 4^4 = 3840s capped at 3600s, * 1.0",
       r=0.5, section="12.3")
    dc("RK-01", p123, 2, "payment.gateway_timeout", None, "section 12.3: 15s * 2^4 = 240s, * 1.0",
       r=0.5, section="12.3")
    dc("RET-17", p123, 25, "payment.gateway_timeout", None, "section 12.3: all 25 attempts failed", section="12.3")
    dc("RET-01", p123, 24, "payment.gateway_timeout", None, "section 12.3: attempt 24 of 25: min(3600s * 1.25, 3600s)",
       r=0.75, flags=["class:post-jitter-cap"], section="12.3")
    # 12.4
    p124 = {"max_attempts": 5, "initial_interval": "PT30S", "backoff_coefficient": 2.0,
            "max_interval": "PT15M", "jitter": True,
            "non_retryable_errors": ["auth.invalid_credentials", "auth.account_suspended",
                                     "resource.not_found", "validation.*", "external.crm.api_deprecated"],
            "on_exhaustion": "dead_letter"}
    for n, t, r, why in [
        (1, "auth.invalid_credentials", None, "section 12.4: 401 is non-retryable"),
        (1, "resource.not_found", None, "section 12.4: 404 is non-retryable"),
        (1, "external.crm.service_unavailable", 0.5, "section 12.4: 503 retries, 30s * 2^0 * 1.0"),
        (2, "external.crm.service_unavailable", 0.5, "section 12.4: 503 retries, 30s * 2^1 * 1.0"),
        (4, "external.crm.service_unavailable", 0.0, "section 12.4: 30s * 2^3 * 0.5"),
        (4, "external.crm.service_unavailable", None, "section 12.4: D = 240s, bounds"),
        (5, "external.crm.service_unavailable", 0.5, "section 12.4: 5 of 5 exhausted"),
        (1, "validation.field_missing", None, "section 12.4: validation.* prefix"),
        (2, "external.crm.api_deprecated", None, "section 12.4: exact entry"),
        (1, "auth.token_expired", 0.25, "section 12.4: auth.* is not listed, only two exact auth entries; 30s * 0.75"),
        (1, "external.crm", 0.5, "section 12.4: a prefix of an entry is not a match"),
    ]:
        dc("RET-07" if "non-retryable" in why or "prefix" in why or "exact" in why else "RET-08",
           p124, n, t, None, why, r=r, section="12.4")
    # 12.5
    p125 = {"max_attempts": 60, "initial_interval": "PT10S", "backoff_coefficient": 1.0,
            "max_interval": "PT10S", "jitter": False, "non_retryable_errors": [], "on_exhaustion": "dead_letter"}
    dc("RET-01", p125, 59, "export.not_ready", None, "section 12.5: 10s * 1.0^58 = 10s", section="12.5")
    dc("RET-01", p125, 60, "export.not_ready", None, "section 12.5: 60 of 60", section="12.5")
    # 12.6
    p126 = {"max_attempts": 1, "on_exhaustion": "dead_letter"}
    dc("RET-17", p126, 1, "compliance.upstream_error", None, "section 12.6: runs once, then dead letter", section="12.6")
    # 12.7
    for pol in [{}, {"on_exhaustion": "dead_letter", "max_attempts": 5}]:
        dc("RET-08", pol, 1, "payment.card_declined", "DISCARD", "section 12.7: declined card discarded", section="12.7")
        dc("RET-08", pol, 1, "payment.card_stolen", "DEAD_LETTER", "section 12.7: stolen card dead-lettered",
           section="12.7")
        dc("RET-08", pol, 1, "external.timeout", "RETRY", "section 12.7: timeout retries, 1s * 1.0", r=0.5,
           section="12.7")
        dc("RET-08", pol, 2, "external.server_error", None, "section 12.7: no code = RETRY, 1s * 2^1 * 1.0", r=0.5,
           section="12.7")
    # handler codes at attempt 1 with dead_letter policies etc.
    dc("RET-08", {"max_attempts": 10}, 1, "x.y", "DISCARD", "DISCARD with 9 attempts left")
    dc("RET-08", {"max_attempts": 10}, 9, "x.y", "FAIL", "FAIL with 1 attempt left")
    dc("RET-08", {"max_attempts": 10, "on_exhaustion": "discard"}, 2, "x.y", "DEAD_LETTER",
       "DEAD_LETTER with on_exhaustion discard")
    dc("RET-08", {"max_attempts": 0, "on_exhaustion": "dead_letter"}, 1, "x.y", "FAIL", "FAIL with max_attempts 0")
    # delays of retry decisions with jitter
    pj = {"max_attempts": 10, "initial_interval": "PT2S", "max_interval": "PT1M"}
    for n, r in [(1, 0.0), (3, 0.75), (6, 0.25), (6, R_HI), (9, None)]:
        dc("RET-05" if n < 6 else "RET-06", pj, n, "x.y", None, "retry delay min(min(2s * 2^%d, 60s) * (0.5 + %s), 60s)" % (n - 1, "r" if r is None else repr(r)),
           r=r, flags=["class:post-jitter-cap"] if n >= 6 and r != 0.25 else [])
    # strategy field in decide
    dc("RK-01", {"backoff_coefficient": 3.0, "max_attempts": 10, "jitter": False}, 3, "x.y", None,
       "no backoff_strategy: exponential 1s * 3^2 (not polynomial 3^3 = 27s)", flags=["class:strategy-field"])
    dc("RK-01", {"backoff_coefficient": 3.0, "max_attempts": 10, "jitter": False, "backoff_strategy": "linear"}, 3,
       "x.y", None, "backoff_strategy linear: 1s * 3", flags=["class:strategy-field"])
    # overflow in decide
    dc("RK-17", {"max_attempts": INT64_MAX}, 2 ** 62, "x.y", None, "huge attempt: min(300s * 1.25, 300s)",
       r=0.75, flags=["class:overflow", "class:post-jitter-cap"])
    dc("RK-17", {"max_attempts": INT64_MAX, "backoff_strategy": "linear", "initial_interval": "PT1H",
                 "max_interval": "PT2H", "jitter": False}, 2 ** 62, "x.y", None,
       "linear 1h * 2^62 overflows, capped at 2h", flags=["class:overflow"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


# ---------------------------------------------------------------------------
# timeouts and dead-letter extensions

def gen_timeout_decide(k: Kind):
    """Expected actions from ojs-timeouts 5.2, 8 and 9.1, with the retry policy's own
    decision computed as gen_decide does (jitter off, so delays are exact)."""
    def tdefaults(t):
        out = {"timeout": 1800, "grace_period": 30, "heartbeat_timeout": 60}
        out.update(t)
        return out

    def outcome(t, policy, n, etype, code, created_ms, now_ms):
        m = merged(policy)
        e = tdefaults(t)
        if code in ("DISCARD", "FAIL"):
            return "discard", None
        if code == "DEAD_LETTER":
            return "dead_letter", None
        total = e.get("total_timeout")
        if total is not None and (now_ms - created_ms) > total * 1000:
            return m["on_exhaustion"], None
        if is_match(m["non_retryable_errors"], etype) or n >= max(m["max_attempts"], 1):
            return m["on_exhaustion"], None
        d = capped(policy, n)
        if total is not None and created_ms * MS + total * S < now_ms * MS + d + e["timeout"] * S:
            return m["on_exhaustion"], None
        return "retry", d

    def td(req, why, t, policy, n, etype, now_ms, code=None, created_ms=0, section=None):
        assert policy.get("jitter") is False
        err = {"type": etype}
        if code is not None:
            err["code"] = code
        case = {"timeouts": t, "policy": policy, "created_at_ms": created_ms, "now_ms": now_ms,
                "attempt": n, "error": err}
        act, d = outcome(t, policy, n, etype, code, created_ms, now_ms)
        res = {"action": act}
        tail = act
        if d is not None:
            res["delay_ns"] = d
            tail += " after %s" % fsec(d)
        k.add(req, "%s -> %s" % (why, tail), {"case": case}, {"result": res}, section=section)

    def bad(req, why, t, fields):
        case = {"timeouts": t, "policy": {"jitter": False}, "created_at_ms": 0, "now_ms": 0,
                "attempt": 1, "error": {"type": "x.err"}}
        k.add(req, why, {"case": case}, {"error": ERR_REQUEST, "error_fields": fields})

    T = {"timeout": 60, "total_timeout": 600}
    P = {"max_attempts": 50, "initial_interval": "PT30S", "backoff_coefficient": 1.0, "jitter": False}
    td("TMO-03", "9.1: 0 + 30s + 60s <= 600s", T, P, 1, "x.err", 0)
    td("RK-215", "9.1: created 0 + 600s = now 510s + 30s + 60s: the retry ends exactly at the deadline", T, P, 3, "x.err", 510000)
    td("TMO-03", "9.1: 600s < 510.001s + 30s + 60s: a retry cannot finish", T, P, 3, "x.err", 510001)
    td("RK-215", "9.1 at the deadline itself (not yet exceeded): 600s < 600s + 30s + 60s", T, P, 3, "x.err", 600000)
    td("TMO-02", "5.2: 600.001s after created_at, attempt 1 of 50", T, P, 1, "x.err", 600001)
    td("TMO-02", "5.2: total timeout exceeded with retries left, error type timeout", T, P, 7, "timeout", 900000)
    td("RK-217", "5.2 with on_exhaustion dead_letter: the job is dead-lettered (state discarded)", T,
       dict(P, on_exhaustion="dead_letter"), 1, "x.err", 600001)
    td("RK-217", "handler DEAD_LETTER past the total timeout with on_exhaustion discard: the code decides", T, P, 1,
       "x.err", 700000, code="DEAD_LETTER")
    td("TMO-02", "5.2 precedence: attempt 3 of 3 past the total timeout", T, dict(P, max_attempts=3), 3, "x.err", 650000)
    D = {"jitter": False}
    td("TMO-01", "5.1/8: execution timeout, retries remaining: 1s * 2^0", {}, D, 1, "timeout", 0)
    td("TMO-01", "8: execution timeout, retries exhausted (3 of 3)", {}, D, 3, "timeout", 0)
    td("TMO-04", "5.5/8: stalled, retries remaining: 1s * 2^1", {}, D, 2, "stalled", 0)
    td("TMO-04", "5.5/8: stalled, retries exhausted (3 of 3)", {}, D, 3, "stalled", 0)
    td("TMO-08", "9.1: timeout listed in non_retryable_errors", {}, dict(D, non_retryable_errors=["timeout"]), 1, "timeout", 0)
    td("TMO-08", "9.1: timeout is retryable when only stalled is listed", {}, dict(D, non_retryable_errors=["stalled"]), 1,
       "timeout", 0)
    td("RK-215", "9.1 with the default timeout 1800s: 0 + 3600s = 1770s + 30s + 1800s", {"total_timeout": 3600}, P, 1,
       "x.err", 1770000)
    td("RK-215", "9.1 with the default timeout 1800s: 3600s < 1770.001s + 30s + 1800s", {"total_timeout": 3600}, P, 1,
       "x.err", 1770001)
    td("RK-215", "9.1 ignores grace_period: 600s = 510s + 30s + 60s with grace_period 100",
       {"timeout": 60, "total_timeout": 600, "grace_period": 100}, P, 2, "x.err", 510000)
    PE = {"max_attempts": 10, "initial_interval": "PT1M", "jitter": False}
    TE = {"timeout": 300, "total_timeout": 3600}
    td("TMO-03", "9.1 with exponential delays: 3600s = 3060s + 1m * 2^2 + 300s", TE, PE, 3, "x.err", 3060000)
    td("TMO-03", "9.1 with exponential delays: 3600s < 3060.001s + 1m * 2^2 + 300s", TE, PE, 3, "x.err", 3060001)
    td("TMO-03", "9.1 counts from created_at: created 100s, 100s + 600s = 610s + 30s + 60s", T, P, 2, "x.err", 610000,
       created_ms=100000)
    td("TMO-05", "6: total_timeout equal to timeout is valid", {"timeout": 300, "total_timeout": 300}, D, 1, "x.err", 0)
    bad("TMO-05", "6: total_timeout below timeout", {"timeout": 300, "total_timeout": 299}, ["total_timeout"])
    bad("TMO-05", "6: timeout must be a positive integer", {"timeout": 0}, ["timeout"])
    bad("TMO-05", "6: heartbeat_timeout must be a positive integer", {"heartbeat_timeout": 0}, ["heartbeat_timeout"])
    bad("TMO-05", "6: grace_period must be non-negative", {"grace_period": -1}, ["grace_period"])
    bad("TMO-05", "6: enqueue_ttl must be a positive integer", {"enqueue_ttl": 0}, ["enqueue_ttl"])
    bad("TMO-05", "6: timeout is an integer number of seconds", {"timeout": 1.5}, ["timeout"])
    bad("RK-215", "6 against the default timeout 1800: total_timeout 60 alone", {"total_timeout": 60}, ["total_timeout"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


def gen_timeout_expiry(k: Kind):
    """Expiries by the inequalities of ojs-timeouts 7.1 and 7.3 (and 5.2, 5.3), with the
    section 8 error object; elapsed seconds rounded up (RK-219)."""
    def defaults(t):
        out = {"timeout": 1800, "grace_period": 30, "heartbeat_timeout": 60}
        out.update(t)
        return out

    def te(req, why, t, kind, now_ms, since_ms=0, section=None):
        e = defaults(t)
        limit, slack, typ = {
            "execution": (e["timeout"], e["grace_period"], "timeout"),
            "stalled": (e["heartbeat_timeout"], 0, "stalled"),
            "total": (e.get("total_timeout"), 0, "total_timeout"),
            "enqueue_ttl": (e.get("enqueue_ttl"), 0, "enqueue_ttl_expired"),
        }[kind]
        el = now_ms - since_ms
        if limit is None or el <= (limit + slack) * 1000:
            res = {"expired": False}
            tail = "not expired"
        else:
            res = {"expired": True, "type": typ, "timeout_kind": kind, "limit_seconds": limit,
                   "elapsed_seconds": -(-el // 1000)}
            tail = "%s, limit %ds, elapsed %ds" % (typ, limit, res["elapsed_seconds"])
        case = {"timeouts": t, "kind": kind, "since_ms": since_ms, "now_ms": now_ms}
        k.add(req, "%s -> %s" % (why, tail), {"case": case}, {"result": res}, section=section)

    T = {"timeout": 300, "grace_period": 5, "heartbeat_timeout": 60, "total_timeout": 900, "enqueue_ttl": 120}
    te("TMO-06", "7.1: now - started_at = 305s = timeout + grace_period", T, "execution", 305000)
    te("TMO-06", "7.1: now - started_at = 306s > timeout + grace_period", T, "execution", 306000)
    te("RK-219", "8: elapsed 305.001s is reported as 306", T, "execution", 305001)
    te("TMO-07", "8 example object: timeout 300, no grace period, 305s elapsed", {"timeout": 300, "grace_period": 0},
       "execution", 305000)
    te("TMO-07", "10.2 example: timeout 3600, 3602s elapsed", {"timeout": 3600, "grace_period": 0}, "execution", 3602000)
    te("TMO-06", "5.1/5.4 defaults: 1830s = 1800 + 30", {}, "execution", 1830000)
    te("TMO-06", "5.1/5.4 defaults: 1831s > 1800 + 30", {}, "execution", 1831000)
    te("TMO-04", "7.3: 60s since the last heartbeat = heartbeat_timeout", T, "stalled", 160000, since_ms=100000)
    te("TMO-04", "7.3: 61s since the last heartbeat", T, "stalled", 161000, since_ms=100000)
    te("TMO-04", "5.5 default heartbeat_timeout 60s: 61s", {}, "stalled", 61000)
    te("TMO-02", "5.2/8: 900s after created_at = total_timeout", T, "total", 900000)
    te("TMO-02", "5.2/8: 901s after created_at", T, "total", 901000)
    te("TMO-02", "5.2 default: no total timeout, 10 years later", {}, "total", 10 * 365 * 24 * 3600 * 1000)
    te("TMO-07", "5.3/8: 121s in the queue, enqueue_ttl 120", T, "enqueue_ttl", 121000)
    te("TMO-07", "5.3 default: no enqueue TTL", {}, "enqueue_ttl", 24 * 3600 * 1000)
    te("RK-216", "5.3 at exactly enqueue_ttl", T, "enqueue_ttl", 120000)
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


def gen_replay(k: Kind):
    """Replays by ojs-dead-letter 7.1 and 7.2 and RK-221..RK-224: the first enabled rule in
    list order that matches and has replays left fires at discarded_at + delay."""
    HOUR_MS = 3600 * 1000

    def rule(name, flt, delay_ms, delay_iso, max_replays, enabled=True, with_enabled=True):
        r = {"name": name, "filter": flt, "delay": delay_iso, "max_replays": max_replays}
        if with_enabled:
            r["enabled"] = enabled
        return r, delay_ms

    def rp(req, why, rules, letter, section=None):
        count = letter.get("meta", {}).get("ojs.replay_count", 0)
        res = {"replay": False}
        tail = "stays a dead letter"
        for r, delay_ms in rules:
            f = r["filter"]
            ok = r.get("enabled", True) and all(letter.get(key) == f[key] for key in ("error_type", "queue", "type") if key in f)
            if ok and count < r["max_replays"]:
                res = {"replay": True, "rule": r["name"], "at_ms": letter["discarded_at_ms"] + delay_ms,
                       "replay_count": count + 1}
                tail = "replayed by %s at %d ms, count %d" % (r["name"], res["at_ms"], count + 1)
                break
        case = {"rules": {"replay_rules": [r for r, _ in rules]}, "letter": letter}
        k.add(req, "%s -> %s" % (why, tail), {"case": case}, {"result": res}, section=section)

    def bad(req, why, rules_doc, fields):
        case = {"rules": rules_doc, "letter": {"error_type": "E", "queue": "q", "type": "t", "discarded_at_ms": 0, "meta": {}}}
        k.add(req, why, {"case": case}, {"error": ERR_REQUEST, "error_fields": fields})

    EX = rule("retry-connection-errors", {"error_type": "ConnectionError"}, HOUR_MS, "PT1H", 3)
    L = {"error_type": "ConnectionError", "queue": "billing", "type": "invoice.generate", "discarded_at_ms": 0, "meta": {}}
    rp("DLQ-R003", "7.1 example rule, first dead-lettering", [EX], L)
    rp("DLQ-R003", "7.2: replayed twice before, max_replays 3", [EX], dict(L, meta={"ojs.replay_count": 2}))
    rp("DLQ-R003", "7.2: replayed 3 times, max_replays 3", [EX], dict(L, meta={"ojs.replay_count": 3}))
    rp("DLQ-R003", "7.1 filter: another error type", [EX], dict(L, error_type="ValidationError"))
    rp("DLQ-R003", "7.1 enabled false", [rule("off", {"error_type": "ConnectionError"}, HOUR_MS, "PT1H", 3, enabled=False)], L)
    rp("RK-224", "delay counts from the latest discarded_at (5h after the epoch)", [EX],
       dict(L, discarded_at_ms=5 * HOUR_MS, meta={"ojs.replay_count": 1}))
    rp("DLQ-R003", "6.2 filter by queue and type", [rule("billing", {"queue": "billing", "type": "invoice.generate"},
                                                          30 * 60 * 1000, "PT30M", 1)], L)
    rp("DLQ-R003", "6.2 filter by queue: another queue", [rule("email", {"queue": "email"}, 0, "PT0S", 1)], L)
    rp("RK-222", "error_type compares exactly, case included", [rule("lc", {"error_type": "connectionerror"}, 0, "PT0S", 1)], L)
    rp("RK-221", "enabled absent is true; filter {} matches every dead letter",
       [rule("all", {}, 90 * 1000, "PT1M30S", 2, with_enabled=False)], L)
    two = [rule("quick", {"queue": "billing"}, 60 * 1000, "PT1M", 1), rule("slow", {}, HOUR_MS, "PT1H", 3)]
    rp("RK-223", "first matching rule in list order", two, L)
    rp("RK-223", "the first rule's max_replays is spent: the next rule fires, counting on", two,
       dict(L, meta={"ojs.replay_count": 1, "ojs.replay_rule": "quick"}))
    rp("RK-223", "ojs.replay_count counts replays by every rule", two,
       dict(L, meta={"ojs.replay_count": 3, "ojs.replay_rule": "slow"}))
    rp("RK-221", "max_replays 1: one replay", [rule("once", {}, 0, "PT0S", 1)], dict(L, meta={"ojs.replay_count": 1}))
    bad("RK-221", "max_replays 0 is refused", {"replay_rules": [{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 0}]},
        ["max_replays"])
    bad("RK-221", "name is required", {"replay_rules": [{"filter": {}, "delay": "PT1H", "max_replays": 1}]}, ["name"])
    bad("RK-221", "delay is an ISO 8601 duration", {"replay_rules": [{"name": "a", "filter": {}, "delay": "1h", "max_replays": 1}]},
        ["delay"])
    bad("RK-221", "names are unique", {"replay_rules": [{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1},
                                                        {"name": "a", "filter": {}, "delay": "PT2H", "max_replays": 1}]},
        ["name"])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


# ---------------------------------------------------------------------------
# output

EXT_DEFAULTS = {"jitter_mode": "proportional", "max_retry_after": None, "max_snoozes": 0, "max_snooze": None}
RULE_FIELDS = ["max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "jitter", "jitter_mode",
               "backoff_strategy"]


def ext_merged(policy: dict) -> dict:
    """The policy with the OJS and extension defaults, and each rule merged over it (RK-303)."""
    m = dict(EXT_DEFAULTS)
    m.update(merged({k: v for k, v in policy.items() if k not in EXT_DEFAULTS and k != "error_rules"}))
    for k in EXT_DEFAULTS:
        if k in policy:
            m[k] = policy[k]
    rules = []
    for r in policy.get("error_rules", []):
        mr = {f: m[f] for f in RULE_FIELDS}
        mr["max_retry_after"] = None
        mr.update(r)
        if "jitter_mode" not in r and not mr["jitter"]:
            mr["jitter_mode"] = "proportional"
        rules.append(mr)
    m["error_rules"] = rules
    return m


def ext_delay(rule: dict, n: int, r, prev: int) -> int:
    """The backoff of docs/extensions.md 3.4, exact: b the capped delay (capped() above)."""
    b = capped({f: rule[f] for f in RULE_FIELDS if f != "jitter_mode"}, n)
    mx = parse_iso(rule["max_interval"])
    if not rule["jitter"]:
        return b
    mode = rule["jitter_mode"]
    fr = Fraction(r)
    if mode == "proportional":
        return min(int(Fraction(b) * (Fraction(1, 2) + fr)), mx)
    if mode == "full":
        return int(Fraction(b) * fr)
    if mode == "equal":
        return (b + int(Fraction(b) * fr)) // 2
    i = parse_iso(rule["initial_interval"])
    p = max(prev, i)
    return min(mx, i + int(fr * (3 * p - i)))


def ext_decide(policy: dict, n: int, etype: str, code, r, retry_after, snooze, snoozes: int, prev: int):
    """Section 3.1 of docs/extensions.md, without a time budget: (action, delay, snoozed)."""
    m = ext_merged(policy)
    if code in ("DISCARD", "FAIL"):
        return "discard", None, None
    if code == "DEAD_LETTER":
        return "dead_letter", None, None
    mi = parse_iso(m["max_interval"])
    if snooze is not None and snoozes < m["max_snoozes"]:
        bound = parse_iso(m["max_snooze"]) if m["max_snooze"] else mi
        return "retry", min(snooze, bound), True
    if snooze is not None:
        retry_after = snooze
    if is_match(m["non_retryable_errors"], etype):
        return m["on_exhaustion"], None, None
    rule = {f: m[f] for f in RULE_FIELDS}
    rule["max_retry_after"] = None
    for rr in m["error_rules"]:
        if is_match(rr["match"], etype):
            rule = rr
            break
    if n >= max(rule["max_attempts"], 1):
        return m["on_exhaustion"], None, None
    if retry_after is not None:
        bound = rule["max_retry_after"] or m["max_retry_after"] or rule["max_interval"]
        return "retry", min(retry_after, parse_iso(bound)), False
    return "retry", ext_delay(rule, n, r, prev), False


def gen_extension_decide(k: Kind):
    """Expected decisions of the retry extensions (docs/extensions.md section 3), computed by
    ext_decide above with exact integers and fractions."""
    def ed(req, why, policy, n, etype="x.err", code=None, r=None, retry_after=None, snooze=None, snoozes=0,
           prev=0, flags=()):
        err = {"type": etype}
        if code is not None:
            err["code"] = code
        case = {"policy": policy, "attempt": n, "error": err}
        if r is not None:
            case["rand"] = r
        if retry_after is not None:
            case["retry_after_ns"] = retry_after
        if snooze is not None:
            case["snooze_ns"] = snooze
        if snoozes:
            case["snoozes"] = snoozes
        if prev:
            case["prev_delay_ns"] = prev
        act, d, snoozed = ext_decide(policy, n, etype, code, r, retry_after, snooze, snoozes, prev)
        res = {"action": act}
        tail = act
        if d is not None:
            res["delay_ns"] = d
            res["snoozed"] = snoozed
            tail += " after %s%s" % (fsec(d), " (snoozed)" if snoozed else "")
        fl = list(flags)
        if "backoff_strategy" in json.dumps(policy):
            fl.append("extension:backoff_strategy")
        k.add(req, "%s -> %s" % (why, tail), {"case": case}, {"result": res}, flags=fl)

    def bad(req, why, policy, fields, flags):
        case = {"policy": policy, "attempt": 1, "error": {"type": "x.err"}}
        k.add(req, why, {"case": case}, {"error": ERR_POLICY, "error_fields": fields}, flags=flags)

    ER, RA, SN, JM = "extension:error_rules", "extension:retry_after", "extension:snooze", "extension:jitter_mode"
    # The policy of docs/extensions.md 2.1.
    P = {"max_attempts": 5, "jitter_mode": "decorrelated", "non_retryable_errors": ["validation.*"],
         "on_exhaustion": "dead_letter",
         "error_rules": [{"match": ["rate_limit.*", "http.429"], "max_attempts": 10, "initial_interval": "PT1M",
                          "backoff_strategy": "none", "jitter": False, "max_retry_after": "PT1H"},
                         {"match": ["network.*"], "max_attempts": 8, "initial_interval": "PT0.2S",
                          "max_interval": "PT10S"}],
         "max_retry_after": "PT10M", "max_snoozes": 20, "max_snooze": "PT15M"}
    ed("RK-302", "rate limit at attempt 6: the rule's fixed PT1M, its 10 attempts", P, 6, "rate_limit.exceeded",
       flags=[ER])
    ed("RK-302", "rate limit at attempt 10 of the rule's 10: exhausted", P, 10, "http.429", flags=[ER])
    ed("RK-302", "other type at attempt 5 of the policy's 5: exhausted", P, 5, "db.deadlock", flags=[ER])
    ed("RK-305", "network: decorrelated from prev 1s, r=0.5: 0.2s + 0.5 * (3s - 0.2s)", P, 2, "network.reset",
       r=0.5, prev=1 * S, flags=[ER, JM])
    ed("RK-305", "network: decorrelated from prev 9s, r=0.5: 0.2s + 0.5 * 26.8s, capped at the rule's PT10S", P, 7,
       "network.reset", r=0.5, prev=9 * S, flags=[ER, JM])
    ed("RK-305", "no rule: decorrelated from I = 1s (prev 0), r=0.25: 1s + 0.25 * 2s", P, 1, "db.deadlock", r=0.25,
       flags=[ER, JM])
    ed("RK-301", "non_retryable_errors come before the rules and a requested delay", P, 1, "validation.bad",
       retry_after=1 * S, flags=[ER, RA])
    ed("RK-304", "Retry-After 2h bounded by the rule's max_retry_after PT1H", P, 1, "rate_limit.x",
       retry_after=7200 * S, flags=[ER, RA])
    ed("RK-304", "Retry-After 1h bounded by the policy's max_retry_after PT10M", P, 1, "network.x",
       retry_after=3600 * S, flags=[ER, RA])
    ed("RK-304", "Retry-After 30s within the bound: not jittered", P, 1, "db.x", retry_after=30 * S, r=0.9,
       flags=[ER, RA])
    ed("RK-304", "Retry-After never extends max_attempts (5 of 5)", P, 5, "db.x", retry_after=1 * S, flags=[ER, RA])
    ed("RK-306", "snooze 1h bounded by max_snooze PT15M, attempt 5 not spent", P, 5, "db.x", snooze=3600 * S,
       snoozes=19, flags=[ER, SN])
    ed("RK-306", "a snooze of a non-retryable type still snoozes", P, 1, "validation.x", snooze=60 * S,
       flags=[ER, SN])
    ed("RK-306", "the 21st snooze (max_snoozes 20) is a requested delay bounded by PT10M", P, 1, "db.x",
       snooze=3600 * S, snoozes=20, flags=[ER, SN])
    ed("RK-306", "past max_snoozes at the last attempt: exhausted", P, 5, "db.x", snooze=60 * S, snoozes=20,
       flags=[ER, SN])
    ed("RK-301", "a handler code overrides a snooze", P, 1, "db.x", code="DISCARD", snooze=60 * S, flags=[ER, SN])
    ed("RK-301", "DEAD_LETTER overrides a requested delay", {"max_retry_after": "PT1M"}, 1, code="DEAD_LETTER",
       retry_after=1 * S, flags=[RA])
    D = {"jitter": False}
    ed("RK-306", "max_snoozes absent (0): a snooze spends the attempt, bounded by max_interval PT5M", D, 1,
       snooze=3600 * S, flags=[SN])
    ed("RK-306", "max_snoozes 1, max_snooze absent: bounded by max_interval PT5M", dict(D, max_snoozes=1), 2,
       snooze=3600 * S, flags=[SN])
    ed("RK-304", "Retry-After 0: at once", dict(D, max_retry_after="PT1M"), 1, retry_after=0, flags=[RA])
    ed("RK-304", "Retry-After with no max_retry_after: bounded by max_interval PT5M", {}, 2, retry_after=600 * S,
       flags=[RA])
    J = {"max_attempts": 10, "initial_interval": "PT1S", "max_interval": "PT10S"}
    ed("RK-305", "full: 4s * 0.25 (attempt 3)", dict(J, jitter_mode="full"), 3, r=0.25, flags=[JM])
    ed("RK-305", "full: 10s * 0.999755859375 (attempt 5, capped base)", dict(J, jitter_mode="full"), 5,
       r=0.999755859375, flags=[JM])
    ed("RK-305", "equal: (4s + 4s * 0.5) / 2 (attempt 3)", dict(J, jitter_mode="equal"), 3, r=0.5, flags=[JM])
    ed("RK-305", "equal: (1s + floor(1s * 0.125)) / 2 (attempt 1)", dict(J, jitter_mode="equal"), 1, r=0.125,
       flags=[JM])
    ed("RK-305", "equal with odd b = 3ns: (3 + floor(3 * 0.5)) / 2 = 2ns",
       {"initial_interval": "PT0.000000003S", "max_interval": "PT1S", "backoff_coefficient": 1.0,
        "jitter_mode": "equal"}, 1, r=0.5, flags=[JM])
    ed("RK-305", "decorrelated ignores the strategy: prev 2s, r=0.25: 1s + 0.25 * 5s",
       dict(J, jitter_mode="decorrelated", backoff_strategy="linear"), 4, r=0.25, prev=2 * S, flags=[JM])
    ed("RK-305", "decorrelated: prev below I counts as I: 1s + 0 * 2s", dict(J, jitter_mode="decorrelated"), 2,
       r=0.0, prev=500 * MS, flags=[JM])
    ed("RK-305", "proportional named explicitly is the OJS multiplier: 4s * 1.25",
       dict(J, jitter_mode="proportional"), 3, r=0.75, flags=[JM])
    ed("RK-303", "a rule inherits initial_interval given after error_rules", {
        "error_rules": [{"match": ["a.*"], "max_attempts": 9}], "initial_interval": "PT7S", "jitter": False},
       4, "a.b", flags=[ER])
    ed("RK-303", "a rule with jitter false inherits no jitter_mode: its delay is exact", {
        "jitter_mode": "full", "error_rules": [{"match": ["a"], "jitter": False}]}, 2, "a", r=0.5,
       flags=[ER, JM])
    ed("RK-303", "the first matching rule is in force", {"jitter": False, "error_rules": [
        {"match": ["a.*"], "initial_interval": "PT3S"}, {"match": ["a.b"], "initial_interval": "PT9S"}]},
       1, "a.b", flags=[ER])
    bad("RK-303", "a rule may not hold on_exhaustion", {"error_rules": [{"match": ["a"], "on_exhaustion": "discard"}]},
        ["error_rules[0].on_exhaustion"], [ER])
    bad("RK-303", "a rule needs match", {"error_rules": [{"max_attempts": 3}]}, ["error_rules[0].match"], [ER])
    bad("RK-303", "an empty match list", {"error_rules": [{"match": []}]}, ["error_rules[0].match"], [ER])
    bad("RK-303", "a rule's merged max_interval below its initial_interval",
        {"error_rules": [{"match": ["a"], "initial_interval": "PT10M"}]}, ["error_rules[0].max_interval"], [ER])
    bad("RK-305", "jitter_mode other than proportional needs jitter", {"jitter": False, "jitter_mode": "full"},
        ["jitter_mode"], [JM])
    bad("RK-305", "an unknown jitter_mode", {"jitter_mode": "random"}, ["jitter_mode"], [JM])
    bad("RK-306", "max_snoozes is a non-negative integer", {"max_snoozes": -1}, ["max_snoozes"], [SN])
    bad("RK-306", "max_snooze must be greater than zero", {"max_snooze": "PT0S"}, ["max_snooze"], [SN])
    bad("RK-304", "max_retry_after must be greater than zero", {"max_retry_after": "PT0S"}, ["max_retry_after"],
        [RA])
    # APPEND NEW VECTORS BELOW (never insert above; ids are immutable)


def schema() -> dict:
    """The JSON Schema (draft 2020-12) of a vector file, kept in step with the flags above."""
    nsint = {"type": "integer", "minimum": 0, "maximum": INT64_MAX}
    errtype = {"enum": [ERR_POLICY, ERR_PATTERN, ERR_REQUEST]}
    outcome_props = {
        "ns": nsint,
        "error": errtype,
        "error_fields": {"type": "array", "items": {"type": "string"}},
        "effective": {"$ref": "#/$defs/effective"},
        "delay_ns": nsint,
        "min_ns": nsint,
        "max_ns": nsint,
        "match": {"type": "boolean"},
        "action": {"enum": ["retry", "discard", "dead_letter"]},
        "result": {"type": "object"},
    }
    expected_props = dict(outcome_props)
    expected_props["acceptable"] = {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/outcome"}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:retrykit:conformance:vector-file:1",
        "title": "retrykit conformance vector file",
        "description": ("One file of OJS retry policy conformance vectors (testdata/vectors/*.json). "
                        "Generated by testdata/vectors/generate.py; see README.md. Uses only the keywords "
                        "type, const, enum, required, properties, additionalProperties, items, minItems, "
                        "uniqueItems, minProperties, minLength, pattern, minimum, maximum, "
                        "exclusiveMaximum and $ref to $defs."),
        "type": "object",
        "required": ["schema_version", "suite_version", "spec_version", "kind", "notes", "vectors"],
        "additionalProperties": False,
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "suite_version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
            "spec_version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.]+)?$"},
            "kind": {"enum": ["duration", "validate", "delay", "match", "decide", "timeout_decide", "timeout_expiry",
                              "replay", "extension_decide"]},
            "notes": {
                "type": "object",
                "required": ["kind"],
                "additionalProperties": {"type": "string", "minLength": 1},
            },
            "vectors": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/vector"}},
        },
        "$defs": {
            "vector": {
                "type": "object",
                "required": ["id", "requirement", "section", "description", "flags", "input", "expected"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": "^(dur|val|delay|match|decide|tdec|texp|replay|ext)-[0-9]{4}$"},
                    "requirement": {"type": "string",
                                    "pattern": "^(RET-(0[1-9]|1[0-9]|20)|RK-[0-9]{2,3}|TMO-0[1-9]|DLQ-R003)$"},
                    "section": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)*$"},
                    "description": {"type": "string", "minLength": 1, "pattern": "^[^\\n\\r]+$"},
                    "flags": {"type": "array", "uniqueItems": True, "items": {"enum": list(ALL_FLAGS)}},
                    "input": {"$ref": "#/$defs/input"},
                    "expected": {"$ref": "#/$defs/expected"},
                },
            },
            "input": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "value": {"type": "string"},
                    "policy": {},
                    "policy_raw": {"type": "string", "minLength": 1},
                    "attempt": {"type": "integer"},
                    "rand": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
                    "patterns": {"type": "array", "items": {"type": "string"}},
                    "error_type": {"type": "string"},
                    "error": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"type": {"type": "string"}, "code": {"type": "string"}},
                    },
                    "case": {"type": "object"},
                },
            },
            "expected": {"type": "object", "minProperties": 1, "additionalProperties": False,
                         "properties": expected_props},
            "outcome": {"type": "object", "minProperties": 1, "additionalProperties": False,
                        "properties": outcome_props},
            "effective": {
                "type": "object",
                "required": FIELD_ORDER,
                "additionalProperties": False,
                "properties": {
                    "max_attempts": {"type": "integer", "minimum": 0},
                    "initial_interval": {"type": "string", "minLength": 2},
                    "backoff_coefficient": {"type": "number", "minimum": 1},
                    "max_interval": {"type": "string", "minLength": 2},
                    "jitter": {"type": "boolean"},
                    "non_retryable_errors": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "on_exhaustion": {"enum": ["discard", "dead_letter"]},
                    "backoff_strategy": {"enum": ["none", "linear", "exponential", "polynomial"]},
                },
            },
        },
    }


def dump(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=True) + "\n"


def build():
    kinds = [
        (Kind("duration", "dur"), gen_duration, "duration.json"),
        (Kind("validate", "val"), gen_validate, "validate.json"),
        (Kind("delay", "delay"), gen_delay, "delay.json"),
        (Kind("match", "match"), gen_match, "match.json"),
        (Kind("decide", "decide"), gen_decide, "decide.json"),
        (Kind("timeout_decide", "tdec"), gen_timeout_decide, "timeout_decide.json"),
        (Kind("timeout_expiry", "texp"), gen_timeout_expiry, "timeout_expiry.json"),
        (Kind("replay", "replay"), gen_replay, "replay.json"),
        (Kind("extension_decide", "ext"), gen_extension_decide, "extension_decide.json"),
    ]
    files = {}
    all_vectors = []
    for k, gen, name in kinds:
        gen(k)
        used = sorted({f for v in k.vectors for f in v["flags"]}, key=ALL_FLAGS.index)
        notes = {"kind": KIND_NOTES[k.kind]}
        for f in used:
            notes[f] = FLAG_NOTES[f]
        doc = {
            "schema_version": SCHEMA_VERSION,
            "suite_version": SUITE_VERSION,
            "spec_version": SPEC_VERSION,
            "kind": k.kind,
            "notes": notes,
            "vectors": k.vectors,
        }
        files[name] = dump(doc)
        all_vectors.extend(k.vectors)
    files["vector.schema.json"] = dump(schema())
    ids = [v["id"] for v in all_vectors]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return files, all_vectors


def coverage_table(all_vectors) -> str:
    kinds = ["dur", "val", "delay", "match", "decide", "tdec", "texp", "replay", "ext"]
    counts = {}
    for v in all_vectors:
        kp = v["id"].rsplit("-", 1)[0]
        counts.setdefault(v["requirement"], {}).setdefault(kp, 0)
        counts[v["requirement"]][kp] += 1
    lines = ["| requirement | section | duration | validate | delay | match | decide | timeout_decide | "
             "timeout_expiry | replay | extension_decide | total |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = LIBRARY_RET + RK_IDS + EXT_REQS
    for req in order:
        c = counts.get(req, {})
        row = [c.get(kp, 0) for kp in kinds]
        lines.append("| %s | %s | %s | %d |" % (req, REQ_SECTION[req], " | ".join(str(x) if x else "" for x in row),
                                              sum(row)))
    tot = [sum(1 for v in all_vectors if v["id"].startswith(kp + "-")) for kp in kinds]
    lines.append("| **all** | | %s | **%d** |" % (" | ".join(str(x) for x in tot), sum(tot)))
    lines.append("")
    fl_counts = {}
    for v in all_vectors:
        for f in v["flags"]:
            fl_counts[f] = fl_counts.get(f, 0) + 1
    lines.append("| flag | vectors |")
    lines.append("|---|---|")
    for f in ALL_FLAGS:
        lines.append("| `%s` | %d |" % (f, fl_counts.get(f, 0)))
    for req in LIBRARY_RET:
        n = sum(counts.get(req, {}).values())
        assert n >= 3, "%s has only %d vectors" % (req, n)
    for req in RK_IDS + EXT_REQS:
        assert sum(counts.get(req, {}).values()) >= 1, req
    return "\n".join(lines) + "\n"


def compress_ids(ids):
    """dur-0001, dur-0002, dur-0003, dur-0007 -> 'dur-0001..dur-0003, dur-0007'."""
    out = []
    run = []

    def flush():
        if not run:
            return
        if len(run) >= 3:
            out.append("%s..%s" % (run[0][2], run[-1][2]))
        else:
            out.extend(r[2] for r in run)
        run.clear()

    for vid in ids:
        p, num = vid.rsplit("-", 1)
        num = int(num)
        if run and run[-1][0] == p and run[-1][1] + 1 == num:
            run.append((p, num, vid))
        else:
            flush()
            run.append((p, num, vid))
    flush()
    return ", ".join(out)


def update_decisions(text: str, all_vectors) -> str:
    by_req = {}
    for v in all_vectors:
        by_req.setdefault(v["requirement"], []).append(v["id"])
    out = []
    for line in text.split("\n"):
        m = re.match(r"^\| (RK-\d\d) \|", line)
        if m:
            # the last column is the text after the final ' | ' up to the closing '|'
            head, _, _ = line.rstrip().rstrip("|").rstrip().rpartition(" |")
            ids = by_req.get(m.group(1), [])
            line = "%s | %s |" % (head, compress_ids(ids))
        out.append(line)
    return "\n".join(out)


README_START = "<!-- coverage:start (generated by generate.py; do not edit by hand) -->"
README_END = "<!-- coverage:end -->"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if any generated file would change")
    ap.add_argument("--update-decisions", action="store_true", help="fill the 'pinned by' column of docs/decisions.md")
    ap.add_argument("--allow-id-change", action="store_true", help="permit changing the input of an existing id")
    args = ap.parse_args()

    files, all_vectors = build()
    # immutability check against the files on disk
    problems = []
    for name, content in files.items():
        path = os.path.join(HERE, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            try:
                old = json.load(fh)
            except ValueError:
                continue
        new = {v["id"]: v for v in json.loads(content).get("vectors", [])}
        for v in old.get("vectors", []):
            nv = new.get(v["id"])
            if nv is None:
                problems.append("%s: id vanished (use Kind.retire, never renumber)" % v["id"])
            elif nv["input"] != v["input"] or nv["requirement"] != v["requirement"]:
                problems.append("%s: input or requirement changed (ids are immutable; append a new vector)" % v["id"])
    if problems and not args.allow_id_change:
        for p in problems:
            print("generate.py: " + p, file=sys.stderr)
        sys.exit(2)

    readme_path = os.path.join(HERE, "README.md")
    outputs = dict((os.path.join(HERE, n), c) for n, c in files.items())
    if os.path.exists(readme_path):
        with open(readme_path, encoding="utf-8") as fh:
            readme = fh.read()
        if README_START in readme and README_END in readme:
            pre, rest = readme.split(README_START, 1)
            _, post = rest.split(README_END, 1)
            readme = pre + README_START + "\n\n" + coverage_table(all_vectors) + "\n" + README_END + post
            # keep the requirement range of the field table current
            rks = sorted({v["requirement"] for v in all_vectors if v["requirement"].startswith("RK-")})
            readme = re.sub(r"a retrykit decision `RK-[0-9]+`…`RK-[0-9]+`( \(those these files pin\))?",
                            "a retrykit decision `%s`…`%s` (those these files pin)" % (rks[0], rks[-1]), readme)
            outputs[readme_path] = readme
    else:
        coverage_table(all_vectors)  # still run the coverage assertions
    if args.update_decisions:
        dpath = os.path.join(REPO, "docs", "decisions.md")
        with open(dpath, encoding="utf-8") as fh:
            outputs[dpath] = update_decisions(fh.read(), all_vectors)

    changed = []
    for path, content in outputs.items():
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        if old != content:
            changed.append(path)
            if not args.check:
                with open(path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(content)
    if args.check:
        for p in changed:
            print("generate.py: out of date: " + os.path.relpath(p, REPO), file=sys.stderr)
        sys.exit(1 if changed else 0)
    counts = {}
    for v in all_vectors:
        kp = v["id"].rsplit("-", 1)[0]
        counts[kp] = counts.get(kp, 0) + 1
    print("generate.py: %d vectors (%s); %d file(s) written" % (
        len(all_vectors), ", ".join("%s %d" % kv for kv in counts.items()), len(changed)))


if __name__ == "__main__":
    main()
