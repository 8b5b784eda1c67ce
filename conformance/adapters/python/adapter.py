#!/usr/bin/env python3
"""Conformance adapter (protocol v1) for the ojs_retry Python library.

Reads one JSON request per line on stdin and writes one JSON answer per
line on stdout, flushing after each. See README.md and ../../PROTOCOL.md.

To adapt this to another Python library, replace the bodies of the op_*
functions with calls into your library and edit error_type, the one place
that maps your library's exceptions to the protocol's error types; the
framing (strict request parsing, id echo, error answers, never crashing)
can stay as it is. Importing this module defines things and reads nothing:
the stdin loop runs only from main(), when the file is run as a program.
"""

from __future__ import annotations

import json
import os
import re
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ojs_retry as lib  # noqa: E402
from ojs_retry import NonFinite, OJSError, Pairs  # noqa: E402

PROTOCOL = 1
IMPLEMENTATION = "ojs-retry-python"
VERSION = "0.1.0"

# The protocol's error types (PROTOCOL.md section 4): the adapter's own,
# whatever library it drives.
POLICY_INVALID = "validation.retry_policy_invalid"
PATTERN_INVALID = "validation.pattern_invalid"
INVALID_REQUEST = "validation.invalid_request"


class AdapterError(Exception):
    """A rejection the adapter answers with: ``type`` is one of the protocol's
    error types above. The framing raises it for a malformed request; your
    ops may raise it too."""

    def __init__(self, type_: str, message: str):
        super().__init__(message)
        self.type = type_


def BadRequest(message: str) -> AdapterError:
    """The request itself is malformed (missing or mistyped field)."""
    return AdapterError(INVALID_REQUEST, message)


def error_type(exc: Exception):
    """The protocol error type for an exception an op raised, or None for an
    internal error (a bug: answered as invalid_request with the exception's
    name). Edit this function when you put your own library behind the
    adapter: map its exception classes here, and leave the ops raising them.
    """
    if isinstance(exc, AdapterError):
        return exc.type
    if isinstance(exc, OJSError):  # ojs_retry's: each carries its type
        return exc.type
    return None


_MISSING = object()


def plain(v):
    """Turn a strictly decoded value back into ordinary JSON data (for echoing ids)."""
    if isinstance(v, Pairs):
        return {k: plain(x) for k, x in v.items}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, Decimal):
        f = float(v)
        return f if f == f and f not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, NonFinite):
        return None
    return v


def _int_field(req, name):
    v = req.get(name, _MISSING)
    if v is _MISSING:
        raise BadRequest(f"{name} is required")
    if type(v) is not int:
        raise BadRequest(f"{name} must be an integer, got {lib._show(v)}")
    return v


def _policy(req):
    """The request's policy: absent or null -> default; 'policy_raw' text accepted too."""
    v = req.get("policy", _MISSING)
    if v is _MISSING:
        raw = req.get("policy_raw", _MISSING)
        if raw is _MISSING:
            return lib.DEFAULT_POLICY
        if type(raw) is not str:
            raise BadRequest("policy_raw must be a string")
        return lib.parse_policy(raw)
    return lib.policy_from_value(v)


def _rand(req):
    v = req.get("rand", None)
    if v is None:
        return None
    if type(v) not in (int, Decimal):
        raise BadRequest(f"rand must be a number, got {lib._show(v)}")
    return v


# --------------------------------------------------------------------------
# Ops. Each takes the request as a dict and returns the answer fields.

# The ops advertised by hello (hello itself is not listed, PROTOCOL.md 3.1).
OPS = ("parse_duration", "validate", "delay", "match", "decide")


def op_hello(req):
    return {"protocol": PROTOCOL, "implementation": IMPLEMENTATION, "version": VERSION,
            "ops": list(OPS), "resolution_ns": 1, "jitter": "injectable"}


def op_parse_duration(req):
    v = req.get("value", _MISSING)
    if v is _MISSING:
        raise BadRequest("value is required")
    return {"ns": lib.parse_duration(v)}


def op_validate(req):
    return {"effective": _policy(req).effective()}


def op_delay(req):
    p = _policy(req)
    n = _int_field(req, "attempt")
    return {"delay_ns": p.delay(n, _rand(req))}


_matcher_cache: dict = {}


def op_match(req):
    pats = req.get("patterns", _MISSING)
    if type(pats) is not list:
        raise BadRequest("patterns must be an array")
    et = req.get("error_type", _MISSING)
    if type(et) is not str:
        raise BadRequest("error_type must be a string")
    key = tuple(p if type(p) is str else ("\0bad", repr(p)) for p in pats)
    m = _matcher_cache.get(key)
    if m is None:
        m = lib.Matcher(pats)  # raises PatternError (validation.pattern_invalid)
        if len(_matcher_cache) > 4096:
            _matcher_cache.clear()
        _matcher_cache[key] = m
    return {"match": m.match(et)}


def op_decide(req):
    p = _policy(req)
    n = _int_field(req, "attempt")
    err = req.get("error", None)
    etype, code = "", None
    if err is not None:
        if not isinstance(err, Pairs):
            raise BadRequest("error must be an object")
        e = err.to_dict()
        etype = e.get("type", "")
        code = e.get("code", None)
        if etype is None:
            etype = ""
        if type(etype) is not str:
            raise BadRequest("error.type must be a string")
        if code is not None and type(code) is not str:
            raise BadRequest(f"unknown handler code {lib._show(code)}")
    action, delay = p.decide(n, etype, code, _rand(req))
    if delay is None:
        return {"action": action}
    return {"action": action, "delay_ns": delay}


_DISPATCH = {name: globals()["op_" + name] for name in ("hello",) + OPS}


# --------------------------------------------------------------------------
# Framing


def _error(rid, etype, message):
    return {"id": rid, "error": {"type": etype, "message": message}}


_ID_RE = re.compile(r'\s*\{\s*"id"\s*:\s*(\d{1,16})\s*,\s*"op"\s*:\s*"([a-z_]{1,32})"')


def _unparsable(text: str, exc: Exception) -> dict:
    """Answer a line that is not JSON. The runner builds requests as JSON and
    splices the vector's policy in verbatim, so when the line still starts
    with an id and a policy-taking op, the policy is what broke it: answer
    that id with a policy rejection rather than an unmatchable id null."""
    m = _ID_RE.match(text)
    if m is None:
        return _error(None, INVALID_REQUEST, f"request is not JSON: {exc}")
    etype = POLICY_INVALID if m.group(2) in ("validate", "delay", "decide") \
        else INVALID_REQUEST
    return _error(int(m.group(1)), etype, f"request is not JSON: {exc}")


def handle_line(line: bytes) -> dict | None:
    """One request line -> one answer dict (None for a blank line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return _error(None, INVALID_REQUEST, f"request is not UTF-8: {e}")
    if not text.strip():
        return None
    try:
        req = lib.loads_strict(text)
    except (ValueError, RecursionError, ArithmeticError) as e:
        return _unparsable(text, e)
    if not isinstance(req, Pairs):
        return _error(None, INVALID_REQUEST, "request must be a JSON object")
    req = req.to_dict()
    rid = plain(req.get("id"))
    op = req.get("op")
    fn = _DISPATCH.get(op) if type(op) is str else None
    if fn is None:
        return {"id": rid, "unsupported": True}
    try:
        ans = fn(req)
    except Exception as e:  # never crash on any input
        etype = error_type(e)
        if etype is not None:
            return _error(rid, etype, str(e))
        return _error(rid, INVALID_REQUEST, f"internal error: {type(e).__name__}: {e}")
    ans = {"id": rid, **ans}
    return ans


def main() -> int:
    stdin = sys.stdin.buffer
    out = sys.stdout
    dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"),
                             allow_nan=False, check_circular=False).encode
    for line in stdin:
        try:
            ans = handle_line(line)
            if ans is None:
                continue
            s = dumps(ans)
        except Exception as e:  # last resort: still one answer per line
            s = dumps(_error(None, INVALID_REQUEST, f"internal error: {type(e).__name__}"))
        try:
            out.write(s + "\n")
            out.flush()
        except BrokenPipeError:
            # The reader went away; silence the final flush at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
