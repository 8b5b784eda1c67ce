#!/usr/bin/env python3
"""A deliberately broken variant of the Python example adapter, for tests.

It merges a policy with the defaults but never validates it: a field that
the library would reject is silently replaced by its default, and a policy
that is not a JSON object becomes the default policy. Everything else (the
framing, durations, matching, the delay math) is the example adapter's.
The conformance report of this adapter must show one grouped root cause,
not a wall of unrelated failures (conformance/report_test.go).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "adapters", "python"))

import adapter  # noqa: E402
import ojs_retry as lib  # noqa: E402

_validating = lib.policy_from_value


def _items(value):
    if isinstance(value, lib.Pairs):
        return value.items
    if isinstance(value, dict):
        return list(value.items())
    return []


def lenient_policy_from_value(value):
    """Merge value with the defaults, dropping what does not validate."""
    try:
        return _validating(value)
    except lib.PolicyError:
        pass
    kept = {}
    for k, v in _items(value):
        if k in kept:
            continue
        try:
            _validating({k: v})
        except lib.PolicyError:
            continue
        kept[k] = v
    try:
        return _validating(kept)
    except lib.PolicyError:
        kept.pop("max_interval", None)
        return _validating(kept)


def lenient_parse_policy(text):
    try:
        return lib.parse_policy.__wrapped__(text)
    except lib.PolicyError:
        return lib.DEFAULT_POLICY


lenient_parse_policy.__wrapped__ = lib.parse_policy
lib.policy_from_value = lenient_policy_from_value
lib.parse_policy = lenient_parse_policy
adapter.IMPLEMENTATION = "ojs-retry-python-nonvalidating"

if __name__ == "__main__":
    sys.exit(adapter.main())
