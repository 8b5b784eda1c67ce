"""Open Job Spec retry policy, in standard-library Python 3.11.

A small, independent implementation of the OJS retry policy (spec
ojs-retry.md, 1.0.0-rc.1) with retrykit's resolutions of the spec's open
questions (docs/decisions.md, RK-01..RK-17). It exists to be a second
implementation for the conformance suite and a template for third parties;
it does not depend on any package outside the standard library.

Entry points:

    parse_duration(text) -> int nanoseconds          (DurationError)
    format_duration(ns) -> canonical ISO string ("PT1S", "PT0.5S", "PT36H")
    loads_strict(text) -> JSON value whose objects are Pairs (duplicates kept)
    parse_policy(text) -> Policy                    (PolicyError)
    policy_from_value(value) -> Policy               (PolicyError)
    Policy.base(n) / Policy.delay(n, r) / Policy.decide(n, error_type, code, r)
    Matcher(patterns).match(error_type)              (PatternError)

Every rejection raises a subclass of OJSError whose ``type`` attribute is the
OJS error type string. Policy objects are immutable after construction and
safe to share between threads; Matcher likewise.

Units: durations and delays are integer nanoseconds. ``attempt`` (n) is the
1-based number of the attempt that just failed; the delay after attempt n is
the spec's "retry number n".
"""

from __future__ import annotations

import json as _json
import math
import random as _random
import re
from decimal import ROUND_DOWN, Decimal, localcontext
from typing import Any, Iterable

__all__ = [
    "OJSError", "PolicyError", "DurationError", "PatternError", "RequestError",
    "Pairs", "NonFinite", "loads_strict",
    "parse_duration", "format_duration",
    "Policy", "DEFAULT_POLICY", "parse_policy", "policy_from_value",
    "Matcher", "STRATEGIES", "CODES", "ACTIONS",
    "MAX_NS",
]

MAX_NS = (1 << 63) - 1  # largest duration: the largest signed 64-bit count of ns

_SECOND = 1_000_000_000
_MINUTE = 60 * _SECOND
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR
_MONTH = 730 * _HOUR   # RK-07: a twelfth of a 365-day year
_YEAR = 365 * _DAY

STRATEGIES = ("none", "linear", "exponential", "polynomial")
ACTIONS = ("retry", "discard", "dead_letter")
CODES = ("RETRY", "DISCARD", "DEAD_LETTER", "FAIL")
_ON_EXHAUSTION = ("discard", "dead_letter")

POLICY_INVALID = "validation.retry_policy_invalid"
PATTERN_INVALID = "validation.pattern_invalid"
REQUEST_INVALID = "validation.invalid_request"


# --------------------------------------------------------------------------
# Errors


class OJSError(ValueError):
    """Base of every rejection; ``type`` is the OJS error type string."""

    type = REQUEST_INVALID


class PolicyError(OJSError):
    """A retry policy is invalid. ``errors`` is a list of (field, reason)."""

    type = POLICY_INVALID

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = list(errors)
        super().__init__("retry policy invalid: " + "; ".join(
            f"{f}: {r}" if f else r for f, r in self.errors))

    @property
    def fields(self) -> list[str]:
        return [f for f, _ in self.errors]


class DurationError(OJSError):
    """A duration string does not follow the OJS grammar or is too large."""

    type = POLICY_INVALID

    def __init__(self, text: Any, reason: str):
        self.text = text
        self.reason = reason
        super().__init__(f"invalid duration {_show(text)}: {reason}")


class PatternError(OJSError):
    """A non_retryable_errors entry is invalid."""

    type = PATTERN_INVALID

    def __init__(self, index: int, pattern: Any, reason: str):
        self.index = index
        self.pattern = pattern
        self.reason = reason
        super().__init__(f"pattern {index} ({_show(pattern)}): {reason}")


class RequestError(OJSError):
    """A decision input is invalid (attempt < 1, unknown handler code...)."""

    type = REQUEST_INVALID


def _show(v: Any, limit: int = 60) -> str:
    """A short printable rendering of a value for error messages."""
    if isinstance(v, Pairs):
        s = "{object}"
    elif isinstance(v, NonFinite):
        s = v.name
    elif v is None:
        s = "null"
    elif v is True or v is False:
        s = "true" if v else "false"
    elif isinstance(v, str):
        s = repr(v) if len(v) <= limit else repr(v[:limit]) + "..."
    elif isinstance(v, Decimal):
        s = str(v)
    elif isinstance(v, (list, tuple)):
        s = "[array]"
    else:
        s = repr(v)
    if len(s) > limit + 10:
        s = s[:limit] + "..."
    return s


# --------------------------------------------------------------------------
# Strict JSON


class Pairs:
    """A JSON object as its ordered (key, value) pairs, duplicates kept.

    Used as ``object_pairs_hook`` so that a validator can see duplicate keys
    that ``dict`` would silently collapse (RK-08).
    """

    __slots__ = ("items",)

    def __init__(self, items: Iterable[tuple[str, Any]]):
        self.items = list(items)

    def to_dict(self) -> dict:
        """Last value wins; nested values are left as they are."""
        return dict(self.items)

    def __repr__(self) -> str:
        return f"Pairs({self.items!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pairs) and self.items == other.items


class NonFinite:
    """Stands for the non-JSON constants NaN, Infinity and -Infinity."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"NonFinite({self.name!r})"


def _parse_int(s: str) -> Any:
    # int() refuses more than 4300 digits; such a number is kept exact.
    return int(s) if len(s) < 4000 else Decimal(s)


def _parse_float(s: str) -> Any:
    try:
        return Decimal(s)
    except ArithmeticError:
        # An exponent beyond what decimal can hold (|exp| > ~10**18): no
        # field accepts such a number, so keep it as a non-finite marker.
        return NonFinite(s)


_DECODER = _json.JSONDecoder(
    object_pairs_hook=Pairs,
    parse_float=_parse_float,  # 3.0 stays distinguishable from 3; 1e400 stays exact
    parse_int=_parse_int,
    parse_constant=NonFinite,  # NaN/Infinity are not JSON numbers
)


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON text: objects become Pairs, non-integers Decimal.

    Raises ValueError (json.JSONDecodeError or UnicodeDecodeError) on text
    that is not JSON.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    return _DECODER.decode(text)


# --------------------------------------------------------------------------
# Durations

# The OJS schema grammar P[nY][nM][nD][T[nH][nM][n[.f]S]], ASCII digits only.
_DURATION_RE = re.compile(
    r"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?"
    r"(T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?)?",
    re.ASCII,
)
_UNIT_NS = (_YEAR, _MONTH, _DAY, None, _HOUR, _MINUTE, _SECOND)
# A component with more than this many significant digits is at least
# 10**21 seconds, far beyond MAX_NS; checked before int() to bound the work.
_MAX_COMPONENT_DIGITS = 21


def parse_duration(text: Any) -> int:
    """Parse an OJS duration into integer nanoseconds (RK-03, RK-07, RK-11, RK-12)."""
    if type(text) is not str:
        raise DurationError(text, "must be a string")
    m = _DURATION_RE.fullmatch(text)
    if m is None:
        raise DurationError(text, "does not match P[nY][nM][nD][T[nH][nM][n[.f]S]]")
    g = m.groups()
    if g[3] is not None and g[4] is None and g[5] is None and g[6] is None:
        raise DurationError(text, "'T' must be followed by a time component")
    total = 0
    seen = False
    for i in (0, 1, 2, 4, 5, 6):
        digits = g[i]
        if digits is None:
            continue
        seen = True
        sig = digits.lstrip("0")
        if len(sig) > _MAX_COMPONENT_DIGITS:
            raise DurationError(text, "exceeds the largest duration (about 292 years)")
        if sig:
            total += int(sig) * _UNIT_NS[i]
    if not seen:
        raise DurationError(text, "has no component")
    frac = g[7]
    if frac is not None:
        ns = int((frac[:9] + "00000000")[:9])
        if len(frac) > 9 and frac[9] >= "5":  # half up on the first dropped digit
            ns += 1
        total += ns
    if total > MAX_NS:
        raise DurationError(text, "exceeds the largest duration (about 292 years)")
    return total


def format_duration(ns: int) -> str:
    """Canonical ISO form: hours, minutes, seconds with a minimal fraction.

    0 -> "PT0S", 500ms -> "PT0.5S", 36h -> "PT36H", 90m -> "PT1H30M".
    """
    if ns < 0:
        raise ValueError("negative duration")
    if ns == 0:
        return "PT0S"
    h, rest = divmod(ns, _HOUR)
    mi, rest = divmod(rest, _MINUTE)
    s, frac = divmod(rest, _SECOND)
    out = ["PT"]
    if h:
        out.append(f"{h}H")
    if mi:
        out.append(f"{mi}M")
    if s or frac:
        if frac:
            out.append(f"{s}.{frac:09d}".rstrip("0") + "S")
        else:
            out.append(f"{s}S")
    return "".join(out)


# --------------------------------------------------------------------------
# Matching


class Matcher:
    """Compiled non_retryable_errors entries (spec 6.2, RK-15).

    An entry matches an error type exactly, or, when it ends in ".*", matches
    every error type that starts with the entry minus the "*" (the dot is
    kept). Case-sensitive; nothing else is special. Empty entries and a bare
    ".*" are invalid. Immutable; safe to share.
    """

    __slots__ = ("_patterns", "_exact", "_prefixes")

    def __init__(self, patterns: Iterable[Any] = ()):
        pats = list(patterns)
        exact = set()
        prefixes = []
        for i, p in enumerate(pats):
            if type(p) is not str:
                raise PatternError(i, p, "must be a string")
            if p == "":
                raise PatternError(i, p, "must not be empty")
            if p.endswith(".*"):
                if len(p) == 2:
                    raise PatternError(i, p, "'.*' needs a non-empty prefix")
                prefixes.append(p[:-1])
            else:
                exact.add(p)
        self._patterns = tuple(pats)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)

    @property
    def patterns(self) -> tuple[str, ...]:
        return self._patterns

    def match(self, error_type: str) -> bool:
        """True when error_type is non-retryable under these patterns."""
        return error_type in self._exact or (
            bool(self._prefixes) and error_type.startswith(self._prefixes))


# --------------------------------------------------------------------------
# Policy


_BELOW_ONE = (1 << 53) - 1, 1 << 53  # the largest float64 below 1, as a ratio


class Policy:
    """A validated, effective (merged with defaults) OJS retry policy.

    Attributes: max_attempts (int >= 0), initial_interval (ns > 0),
    backoff_coefficient (finite float >= 1), max_interval (ns >=
    initial_interval), jitter (bool), non_retryable_errors (tuple of str),
    on_exhaustion ("discard" | "dead_letter"), backoff_strategy (one of
    STRATEGIES). Construct with Policy(...) (keyword arguments, validated)
    or parse_policy / policy_from_value. Immutable once built.
    """

    __slots__ = ("max_attempts", "initial_interval", "backoff_coefficient",
                 "max_interval", "jitter", "non_retryable_errors",
                 "on_exhaustion", "backoff_strategy", "matcher", "_cint")

    def __init__(self, max_attempts: int = 3, initial_interval: int = _SECOND,
                 backoff_coefficient: float = 2.0, max_interval: int = 5 * _MINUTE,
                 jitter: bool = True, non_retryable_errors: Iterable[str] = (),
                 on_exhaustion: str = "discard", backoff_strategy: str = "exponential"):
        errs: list[tuple[str, str]] = []
        if type(max_attempts) is not int or max_attempts < 0 or max_attempts > MAX_NS:
            errs.append(("max_attempts", "must be a non-negative integer"))
        ii_ok = type(initial_interval) is int and 0 < initial_interval <= MAX_NS
        if not ii_ok:
            errs.append(("initial_interval", "must be greater than zero"))
        c = backoff_coefficient
        if type(c) not in (int, float) or not math.isfinite(c) or c < 1:
            errs.append(("backoff_coefficient", "must be a finite number >= 1.0"))
        if type(max_interval) is not int or not 0 <= max_interval <= MAX_NS:
            errs.append(("max_interval", "must be a duration"))
        elif ii_ok and max_interval < initial_interval:
            errs.append(("max_interval", "must be >= initial_interval"))
        if type(jitter) is not bool:
            errs.append(("jitter", "must be a boolean"))
        nre = tuple(non_retryable_errors)
        try:
            matcher = Matcher(nre)
        except PatternError as e:
            errs.append((f"non_retryable_errors[{e.index}]", e.reason))
            matcher = None
        if on_exhaustion not in _ON_EXHAUSTION:
            errs.append(("on_exhaustion", 'must be "discard" or "dead_letter"'))
        if backoff_strategy not in STRATEGIES:
            errs.append(("backoff_strategy", "must be one of " + ", ".join(STRATEGIES)))
        if errs:
            raise PolicyError(errs)
        c = float(c)
        s = object.__setattr__
        s(self, "max_attempts", max_attempts)
        s(self, "initial_interval", initial_interval)
        s(self, "backoff_coefficient", c)
        s(self, "max_interval", max_interval)
        s(self, "jitter", jitter)
        s(self, "non_retryable_errors", nre)
        s(self, "on_exhaustion", on_exhaustion)
        s(self, "backoff_strategy", backoff_strategy)
        s(self, "matcher", matcher)
        s(self, "_cint", int(c) if c.is_integer() else None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Policy is immutable")

    def __repr__(self) -> str:
        return f"Policy({self.effective()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and self.effective() == other.effective()

    def __hash__(self) -> int:
        return hash((self.max_attempts, self.initial_interval, self.backoff_coefficient,
                     self.max_interval, self.jitter, self.non_retryable_errors,
                     self.on_exhaustion, self.backoff_strategy))

    def effective(self) -> dict:
        """The effective policy as JSON-ready data, all eight fields."""
        return {
            "max_attempts": self.max_attempts,
            "initial_interval": format_duration(self.initial_interval),
            "backoff_coefficient": self.backoff_coefficient,
            "max_interval": format_duration(self.max_interval),
            "jitter": self.jitter,
            "non_retryable_errors": list(self.non_retryable_errors),
            "on_exhaustion": self.on_exhaustion,
            "backoff_strategy": self.backoff_strategy,
        }

    # -- delays ------------------------------------------------------------

    def base(self, n: int) -> int:
        """Delay in ns after attempt n, capped at max_interval, before jitter.

        none I; linear I*n; exponential I*C^(n-1); polynomial I*n^C; then
        min(raw, max_interval) truncated toward zero (RK-05, RK-06). Exact
        integer arithmetic when C is integral; otherwise the power is a float
        and the product with I is exact. Never overflows (RK-17).
        """
        if type(n) is not int or n < 1:
            raise RequestError(f"attempt must be an integer >= 1, got {_show(n)}")
        i = self.initial_interval
        m = self.max_interval
        st = self.backoff_strategy
        if st == "exponential":
            ci = self._cint
            if ci is not None:
                if ci == 1:
                    return i
                d = i
                for _ in range(n - 1):  # at most 63 rounds: ci >= 2 and m < 2**63
                    d *= ci
                    if d >= m:
                        return m
                return d
            return self._float_power(i, m, self.backoff_coefficient, n - 1)
        if st == "linear":
            d = i * n
            return m if d >= m else d
        if st == "polynomial":
            ci = self._cint
            if ci is not None:
                if n == 1:
                    return i
                d = i
                for _ in range(ci):  # at most 63 rounds: n >= 2
                    d *= n
                    if d >= m:
                        return m
                return d
            return self._float_power(i, m, float(n) if n < 1 << 1000 else math.inf,
                                     self.backoff_coefficient, base_int=n)
        return i  # none

    @staticmethod
    def _float_power(i: int, m: int, b: float, e: Any, base_int: int | None = None) -> int:
        """min(trunc(i * b**e), m) with b**e evaluated in float64; b >= 1, e >= 0.

        Called as (i, m, C, n-1) for exponential (C non-integral, so C > 1)
        and as (i, m, float(n), C, base_int=n) for polynomial.
        """
        if base_int is None:
            # exponential: b = C > 1, e = n - 1 (an int, possibly huge)
            if e == 0:
                return i
            if e >= 1 << 1000:
                return m
            lg = math.log2(i) + e * math.log2(b)
        else:
            # polynomial: b = float(n), e = C (a float); log2 is exact-ish on ints
            if base_int == 1:
                return i
            lg = math.log2(i) + e * math.log2(base_int)
        if lg > 63.5:  # the raw delay is beyond any representable max_interval
            return m
        try:
            p = b ** e
        except OverflowError:
            return m
        if not math.isfinite(p):
            return m
        num, den = p.as_integer_ratio()
        d = (i * num) // den
        return m if d >= m else d

    def delay(self, n: int, r: Any = None, rng: Any = None) -> int:
        """Final delay in ns after attempt n.

        Without jitter: base(n). With jitter: min(trunc(base(n) * (0.5 + r)),
        max_interval), computed exactly from r (an int, float, Decimal or
        Fraction; clamped into [0, 1)). When r is None it is drawn from rng
        (anything with .random(); default: the module's Random instance).
        """
        d = self.base(n)
        if not self.jitter:
            return d
        if r is None:
            r = (rng or _RNG).random()
        a, b = _clamped_ratio(r)
        j = (d * (b + 2 * a)) // (2 * b)
        m = self.max_interval
        return m if j > m else j

    def bounds(self, n: int) -> tuple[int, int]:
        """Inclusive (lo, hi) of delay(n, r) over r in [0, 1)."""
        d = self.base(n)
        if not self.jitter:
            return d, d
        return self.delay(n, 0), self.delay(n, _BELOW_ONE_F)

    # -- decisions ---------------------------------------------------------

    def decide(self, attempt: int, error_type: str | None = "", code: str | None = None,
               r: Any = None, rng: Any = None) -> tuple[str, int | None]:
        """(action, delay_ns or None) after attempt failed (spec 7.2, RK-13).

        DISCARD/FAIL -> discard; DEAD_LETTER -> dead_letter; RETRY or no code
        -> on_exhaustion when the error type is non-retryable or attempt >=
        max(max_attempts, 1), else ("retry", delay(attempt, r)).
        Raises RequestError for attempt < 1 or an unknown code.
        """
        if type(attempt) is not int or attempt < 1:
            raise RequestError(f"attempt must be an integer >= 1, got {_show(attempt)}")
        if code is None or code == "" or code == "RETRY":
            pass
        elif code == "DISCARD" or code == "FAIL":
            return "discard", None
        elif code == "DEAD_LETTER":
            return "dead_letter", None
        else:
            raise RequestError(f"unknown handler code {_show(code)}")
        if error_type is None:
            error_type = ""
        if type(error_type) is not str:
            raise RequestError(f"error type must be a string, got {_show(error_type)}")
        if self.matcher.match(error_type) or attempt >= max(self.max_attempts, 1):
            return self.on_exhaustion, None
        return "retry", self.delay(attempt, r, rng)


_BELOW_ONE_F = 1.0 - 2.0 ** -53
_RNG = _random.Random()


def _clamped_ratio(r: Any) -> tuple[int, int]:
    """r as an exact ratio clamped into [0, 1); raises RequestError if not a number."""
    if type(r) not in (int, float, Decimal) and not hasattr(r, "as_integer_ratio"):
        raise RequestError(f"rand must be a number, got {_show(r)}")
    if isinstance(r, bool):
        raise RequestError(f"rand must be a number, got {_show(r)}")
    if isinstance(r, float) and math.isnan(r):
        return 0, 1
    if isinstance(r, Decimal) and not r.is_finite():
        return (0, 1) if r.is_nan() or r < 0 else _BELOW_ONE
    if r <= 0:
        return 0, 1
    if r >= 1:
        return _BELOW_ONE
    if isinstance(r, Decimal):
        if r.adjusted() < -30:
            # d * r < 2**63 * 1e-30 < 0.5, so trunc(d * (0.5 + r)) is the
            # same as for r = 0; this avoids a 10**huge denominator.
            return 0, 1
        if len(r.as_tuple().digits) > 1000:
            with localcontext() as ctx:  # keep 1000 significant digits
                ctx.prec = 1000
                ctx.rounding = ROUND_DOWN
                r = +r
    return r.as_integer_ratio()


DEFAULT_POLICY = Policy()

_FIELDS = ("max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
           "jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy")
_FIELD_SET = frozenset(_FIELDS)


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if v is True or v is False:
        return "boolean"
    if isinstance(v, Pairs) or isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, str):
        return "string"
    if isinstance(v, NonFinite):
        return v.name
    return "number"


def _is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is Decimal


def policy_from_value(value: Any) -> Policy:
    """Validate a decoded policy and merge it with the defaults (spec 8, 11).

    ``value`` is what loads_strict returns (a Pairs object), a plain dict, or
    None for an absent policy (RK-09). All problems are collected into one
    PolicyError naming each field.
    """
    if value is None:
        return DEFAULT_POLICY
    if isinstance(value, Pairs):
        items = value.items
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        raise PolicyError([("", f"policy must be a JSON object, got {_type_name(value)}")])
    if not items:
        return DEFAULT_POLICY

    errs: list[tuple[str, str]] = []
    fields: dict[str, Any] = {}
    dups: list[str] = []
    for k, v in items:
        if k in fields:
            if k not in dups:
                dups.append(k)
            continue
        fields[k] = v
    for k in dups:
        errs.append((k, "duplicate key"))
    for k in fields:
        if k not in _FIELD_SET:
            errs.append((k, "unknown field"))

    kw: dict[str, Any] = {}
    # max_attempts: a JSON integer (3.0 and 3e0 count, RK-10), 0 <= v <= 2**63-1.
    if "max_attempts" in fields:
        v = fields["max_attempts"]
        iv = None
        if type(v) is int:
            iv = v
        elif type(v) is Decimal:
            # adjusted() bounds the size before int(): 1e999999999 must not
            # become a billion-digit integer.
            if v.is_finite():
                if v.adjusted() >= 19:
                    if v > 0 and v == v.to_integral_value():
                        iv = MAX_NS + 1  # an integer, just too large
                elif v == v.to_integral_value():
                    iv = int(v)
        elif type(v) is float:
            if math.isfinite(v) and v.is_integer():
                iv = int(v)
        if iv is None:
            errs.append(("max_attempts", f"must be a non-negative integer, got {_show(v)}"))
        elif iv < 0:
            errs.append(("max_attempts", f"must be a non-negative integer, got {iv}"))
        elif iv > MAX_NS:
            errs.append(("max_attempts", f"must be at most {MAX_NS}, got {_show(v)}"))
        else:
            kw["max_attempts"] = iv
    ii = mi = None
    for name in ("initial_interval", "max_interval"):
        if name in fields:
            v = fields[name]
            try:
                d = parse_duration(v)
            except DurationError as e:
                errs.append((name, e.reason if type(v) is not str
                             else f"{_show(v)} {e.reason}"))
                continue
            if name == "initial_interval":
                if d <= 0:
                    errs.append((name, "must be greater than zero"))
                    continue
                ii = d
            else:
                mi = d
            kw[name] = d
    if "max_interval" in kw or "initial_interval" in kw:
        eff_i = ii if ii is not None else DEFAULT_POLICY.initial_interval
        eff_m = mi if mi is not None else DEFAULT_POLICY.max_interval
        i_bad = "initial_interval" in fields and ii is None
        m_bad = "max_interval" in fields and mi is None
        if not i_bad and not m_bad and eff_m < eff_i:
            errs.append(("max_interval", f"must be >= initial_interval "
                         f"({format_duration(eff_m)} < {format_duration(eff_i)})"))
            kw.pop("max_interval", None)
            kw.pop("initial_interval", None)
    if "backoff_coefficient" in fields:
        v = fields["backoff_coefficient"]
        if not _is_number(v):
            errs.append(("backoff_coefficient", f"must be a number, got {_type_name(v)}"))
        else:
            try:
                c = float(v)  # the value the delay math uses (float64)
            except OverflowError:
                c = math.inf
            if not math.isfinite(c):
                errs.append(("backoff_coefficient", f"must be a finite number, got {_show(v)}"))
            elif c < 1.0:
                errs.append(("backoff_coefficient", f"must be >= 1.0, got {_show(v)}"))
            else:
                kw["backoff_coefficient"] = c
    if "jitter" in fields:
        v = fields["jitter"]
        if type(v) is not bool:
            errs.append(("jitter", f"must be a boolean, got {_type_name(v)}"))
        else:
            kw["jitter"] = v
    if "non_retryable_errors" in fields:
        v = fields["non_retryable_errors"]
        if type(v) is not list:
            errs.append(("non_retryable_errors", f"must be an array of strings, got {_type_name(v)}"))
        else:
            ok = True
            for i, p in enumerate(v):
                if type(p) is not str:
                    errs.append((f"non_retryable_errors[{i}]", f"must be a string, got {_type_name(p)}"))
                    ok = False
                elif p == "":
                    errs.append((f"non_retryable_errors[{i}]", "must not be empty"))
                    ok = False
                elif p == ".*":
                    errs.append((f"non_retryable_errors[{i}]", "'.*' needs a non-empty prefix"))
                    ok = False
            if ok:
                kw["non_retryable_errors"] = v
    for name, allowed in (("on_exhaustion", _ON_EXHAUSTION), ("backoff_strategy", STRATEGIES)):
        if name in fields:
            v = fields[name]
            if type(v) is not str or v not in allowed:
                errs.append((name, "must be one of " + ", ".join(f'"{a}"' for a in allowed)
                             + f", got {_show(v)}"))
            else:
                kw[name] = v
    if errs:
        raise PolicyError(errs)
    return Policy(**kw)


def parse_policy(text: str | bytes | None) -> Policy:
    """Parse strict OJS policy JSON. Empty text or ``null`` -> default policy."""
    if text is None:
        return DEFAULT_POLICY
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise PolicyError([("", f"not UTF-8: {e}")]) from None
    if text.strip(" \t\r\n") == "":
        return DEFAULT_POLICY
    try:
        value = loads_strict(text)
    except (ValueError, RecursionError, ArithmeticError) as e:
        raise PolicyError([("", f"not valid JSON: {e}")]) from None
    return policy_from_value(value)
