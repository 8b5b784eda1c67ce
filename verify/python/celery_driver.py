"""Drive Celery's real retry code for retrykit's verify module.

Reads one JSON request on stdin:
  {"cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "runs"}, ...]}
and writes one JSON answer on stdout:
  {"system": "celery", "version": "...", "file": "...", "results": [...]}

"delay" calls celery.utils.time.get_exponential_backoff_interval with the
keyword arguments celery.app.autoretry passes for a task declared with
autoretry_for and retry_backoff=True (recorded from a real eager run), and
with retries = attempt - 1. random.randrange is replaced by a function that
returns floor(R * n) for randrange(n) and records n, so the draw is injected.

A request may carry "opts": the task options of a configured profile
(retry_backoff, retry_backoff_max, retry_jitter, max_retries), passed to
@app.task in place of the default retry_backoff=True.

"countdowns" runs the same task and records the countdown of each retry as
Celery's Task.retry computed it (with "opts": {} the task has Celery's
defaults: retry_backoff False, so default_retry_delay).

"runs" runs a task that always raises through Celery's own eager apply loop
(autoretry + Task.retry + max_retries) and reports how many times the task
body ran before Celery gave up, and the final state.
"""
import json
import math
import sys

import celery
import celery.utils.time as celery_time
from celery import Celery


def delay(attempt, r):
    kwargs = _autoretry_kwargs()
    calls = []

    def fake_randrange(n, *rest):
        if rest:
            raise AssertionError("unexpected randrange arguments: %r" % (rest,))
        calls.append(n)
        return math.floor(r * n)

    saved = celery_time.random.randrange
    celery_time.random.randrange = fake_randrange
    try:
        seconds = celery_time.get_exponential_backoff_interval(
            retries=attempt - 1, **kwargs)
    finally:
        celery_time.random.randrange = saved
    return {"delay_s": seconds, "randrange": calls}


_app = None
_runs = [0]
_seen = []
_opts = {"retry_backoff": True}


def _task():
    global _app
    if _app is None:
        _app = Celery("retrykit_verify", broker="memory://", backend="cache+memory://")
        _app.conf.task_always_eager = True

        @_app.task(bind=True, autoretry_for=(ValueError,), **_opts)
        def always_fails(self):
            _runs[0] += 1
            raise ValueError("retrykit verify: always fails")

        _app.always_fails = always_fails
    return _app.always_fails


def _eager_run():
    """Run the always-failing task through Celery's eager apply loop.

    celery.app.autoretry's reference to get_exponential_backoff_interval is
    wrapped so that every call autoretry makes is recorded (its keyword
    arguments carry the defaults: factor, maximum, full_jitter) and then
    passed on to the real function.
    """
    import celery.app.autoretry as autoretry

    real = autoretry.get_exponential_backoff_interval
    del _seen[:]

    def recording(**kwargs):
        _seen.append(dict(kwargs))
        return real(**kwargs)

    autoretry.get_exponential_backoff_interval = recording
    task = _task()
    _runs[0] = 0
    try:
        result = task.apply()
    finally:
        autoretry.get_exponential_backoff_interval = real
    return result


def _autoretry_kwargs():
    if not _seen:
        _eager_run()
    kwargs = dict(_seen[0])
    kwargs.pop("retries")
    return kwargs


def runs():
    result = _eager_run()
    return {
        "runs": _runs[0],
        "state": result.state,
        "max_retries": _task().max_retries,
        "backoff_calls": _seen[:],
    }


def countdowns():
    """Run the always-failing task eagerly and record the countdown Celery's
    own Task.retry computes for each retry (it passes it to
    signature_from_request), with the task options as given: without
    retry_backoff, Task.retry falls back to default_retry_delay."""
    from celery.app.task import Task

    seen = []
    real = Task.signature_from_request

    def recording(self, *args, **kwargs):
        seen.append(kwargs.get("countdown"))
        return real(self, *args, **kwargs)

    Task.signature_from_request = recording
    try:
        result = _eager_run()
    finally:
        Task.signature_from_request = real
    return {"runs": _runs[0], "state": result.state, "countdowns": seen}


def main():
    global _opts
    request = json.load(sys.stdin)
    if request.get("opts") is not None:
        _opts = dict(request["opts"])
    results = []
    for case in request["cases"]:
        op = case["op"]
        if op == "delay":
            results.append(delay(int(case["attempt"]), float(case["rand"])))
        elif op == "runs":
            results.append(runs())
        elif op == "countdowns":
            results.append(countdowns())
        else:
            raise SystemExit("celery_driver: unknown op %r" % op)
    json.dump({
        "system": "celery",
        "version": celery.__version__,
        "file": celery_time.__file__,
        "results": results,
    }, sys.stdout)


if __name__ == "__main__":
    main()
