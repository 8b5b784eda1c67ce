#!/usr/bin/env python3
"""Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
module of the official OJS Python SDK (github.com/openjobspec/ojs-python-sdk,
src/ojs/retry.py), for the scoreboard.

    python3 ojs_python_sdk.py SDK_DIR

SDK_DIR is a checkout of the SDK; only src/ojs/retry.py is loaded (it needs
nothing beyond Python's standard library). The adapter answers the ops the
module implements and adds no logic of its own beyond unit conversion
(seconds to nanoseconds, rounded to the nearest):

  parse_duration  _parse_iso8601_duration(value)
  validate        RetryPolicy.from_dict(policy).to_dict(): the module does no
                  validation, and knows six of the seven spec fields
  delay           RetryPolicy.from_dict(policy).delay_for_attempt(attempt),
                  with the module's random.uniform(0.5, 1.5) drawn as
                  0.5 + rand (jitter injectable)
"""

import importlib.util
import json
import os
import sys

if len(sys.argv) != 2:
    sys.exit("usage: ojs_python_sdk.py SDK_DIR")
path = os.path.join(sys.argv[1], "src", "ojs", "retry.py")
spec = importlib.util.spec_from_file_location("ojs_sdk_retry", path)
sdk = importlib.util.module_from_spec(spec)
sys.modules["ojs_sdk_retry"] = sdk  # dataclasses look the module up
spec.loader.exec_module(sdk)


class Draw:
    """Stands in for the module's `random`: uniform(a, b) is a + r·(b − a)."""

    r = None

    def uniform(self, a, b):
        return a + self.r * (b - a)


draw = Draw()
sdk.random = draw


def invalid(msg):
    return {"error": {"type": "validation.retry_policy_invalid", "message": msg}}


def policy_of(req):
    p = req.get("policy")
    if p is None:
        p = {}
    if not isinstance(p, dict):
        raise TypeError("policy is not an object")
    return sdk.RetryPolicy.from_dict(p)


def answer(req):
    op = req.get("op")
    if op == "hello":
        return {"protocol": 1, "implementation": "ojs-python-sdk", "version": "0.4.0",
                "ops": ["parse_duration", "validate", "delay"], "resolution_ns": 1, "jitter": "injectable",
                # retrykit's backoff_strategy extension is not the SDK's
                "unclaimed_flags": ["extension:backoff_strategy"]}
    try:
        if op == "parse_duration":
            v = req.get("value")
            if not isinstance(v, str):
                return invalid("value is not a string")
            return {"ns": round(sdk._parse_iso8601_duration(v) * 1e9)}
        if op == "validate":
            p = policy_of(req)
            # to_dict leaves non_retryable_errors out when empty
            return {"effective": {**p.to_dict(), "non_retryable_errors": p.non_retryable_errors}}
        if op == "delay":
            if "profile" in req:
                return {"error": {"type": "validation.invalid_request", "message": "no profiles"}}
            a = req.get("attempt")
            if type(a) is not int or a < 1:
                return {"error": {"type": "validation.invalid_request", "message": "attempt must be an integer >= 1"}}
            draw.r = req.get("rand", 0.5)
            return {"delay_ns": round(policy_of(req).delay_for_attempt(a) * 1e9)}
    except (ValueError, TypeError, AttributeError, OverflowError) as e:
        return invalid(str(e))
    return {"unsupported": True}


for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        print(json.dumps({"id": None, "error": {"type": "validation.invalid_request", "message": "not JSON"}}), flush=True)
        continue
    out = answer(req if isinstance(req, dict) else {})
    out = {"id": req.get("id") if isinstance(req, dict) else None, **out}
    try:
        line = json.dumps(out, allow_nan=False)
    except ValueError:  # the SDK kept an infinite or NaN number, which JSON cannot hold
        line = json.dumps({"id": out["id"], "error": {"type": "adapter.unencodable",
                                                      "message": "the SDK's answer holds a non-finite number"}})
    print(line, flush=True)
