"""Drive botocore's standard retry mode for retrykit's verify module.

Reads one JSON request on stdin:
  {"cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "decision", "attempt": N}, ...]}
and writes one JSON answer on stdout:
  {"system": "botocore", "version": "...", "file": "...", "results": [...]}

"delay" asks botocore.retries.standard.ExponentialBackoff -- built with its
defaults except for its `random` parameter, which returns R -- for the delay
after the request attempt N (RetryContext.attempt_number is 1-based: 1 after
the first failure). "decision" asks MaxAttemptsChecker with the module's
DEFAULT_MAX_ATTEMPTS whether attempt N may be retried.
"""
import json
import sys

import botocore
from botocore.retries import standard


def delay(attempt, r):
    calls = []

    def draw():
        calls.append(r)
        return r

    backoff = standard.ExponentialBackoff(random=draw)
    seconds = backoff.delay_amount(standard.RetryContext(attempt_number=attempt, request_context={}))
    return {"delay_s": seconds, "random_calls": len(calls)}


def decision(attempt):
    checker = standard.MaxAttemptsChecker(max_attempts=standard.DEFAULT_MAX_ATTEMPTS)
    context = standard.RetryContext(attempt_number=attempt, request_context={})
    return {"retry": bool(checker.is_retryable(context)), "max_attempts": standard.DEFAULT_MAX_ATTEMPTS}


def main():
    request = json.load(sys.stdin)
    results = []
    for case in request["cases"]:
        op = case["op"]
        if op == "delay":
            results.append(delay(int(case["attempt"]), float(case["rand"])))
        elif op == "decision":
            results.append(decision(int(case["attempt"])))
        else:
            raise SystemExit("botocore_driver: unknown op %r" % op)
    json.dump({
        "system": "botocore",
        "version": botocore.__version__,
        "file": standard.__file__,
        "results": results,
    }, sys.stdout)


if __name__ == "__main__":
    main()
