"""Drive tenacity's, backoff's and RQ's real retry code for retrykit's verify module.

Reads one JSON request on stdin:
  {"system": "tenacity" | "backoff" | "rq", "config": {...},
   "cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "runs"}, ...]}
and writes one JSON answer on stdout:
  {"system": "...", "version": "...", "file": "...", "results": [...]}

config holds the library's own arguments (tenacity: the wait strategy's name
and keyword arguments, stop_after_attempt; backoff: wait_gen, its keyword
arguments, jitter, max_tries; rq: Retry's max and interval).

"delay" gives the wait after attempt N, as the library computes it, with its
random module replaced by one whose random() returns R (uniform(a, b) is then
a + (b - a) * R, as CPython computes it), so the draw is injected:
  tenacity: the wait strategy called with a RetryCallState whose
            attempt_number is N;
  backoff:  the wait every retry of a real decorated function reports to
            on_backoff (time.sleep replaced by a no-op), the N-th one;
  rq:       Job.get_retry_interval on a job whose retries_left is what
            Job.retry leaves after N - 1 retries.
"runs" runs an always-failing function through the library's own loop
(tenacity's Retrying, backoff's decorator) and reports how many times it ran;
for rq it drives the real Job.retry on a stub queue and reports the runs the
worker's rule (retry while retries_left > 0) allows.
"""
import json
import sys


class FakeRandom:
    """A stand-in for the random module: random() returns r."""

    def __init__(self, r):
        self.r = r
        self.calls = 0

    def random(self):
        self.calls += 1
        return self.r

    def uniform(self, a, b):
        self.calls += 1
        return a + (b - a) * self.r


def tenacity_wait(cfg):
    import tenacity
    name = cfg.get("wait", "wait_none")
    kwargs = cfg.get("kwargs", {})
    return getattr(tenacity, name)(**kwargs)


def tenacity_delay(cfg, attempt, r):
    import tenacity
    import tenacity.wait as tw
    wait = tenacity_wait(cfg)
    state = tenacity.RetryCallState(retry_object=None, fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    fake = FakeRandom(r)
    saved = tw.random
    tw.random = fake
    try:
        return {"delay_s": wait(state), "random_calls": fake.calls}
    finally:
        tw.random = saved


def tenacity_runs(cfg):
    import tenacity
    calls = [0]
    stop = tenacity.stop_never
    if cfg.get("stop_after_attempt"):
        stop = tenacity.stop_after_attempt(cfg["stop_after_attempt"])
    else:
        # stop_never would loop forever: count up to a bound instead.
        stop = tenacity.stop_after_attempt(10000)

    def fail():
        calls[0] += 1
        raise ValueError("retrykit verify")

    r = tenacity.Retrying(stop=stop, wait=tenacity.wait_none(), sleep=lambda s: None)
    try:
        r(fail)
    except tenacity.RetryError:
        pass
    return {"runs": calls[0]}


def backoff_waits(cfg, attempts, r):
    import backoff
    import backoff._jitter as bj
    import backoff._sync as bs
    gen = getattr(backoff, cfg.get("wait_gen", "expo"))
    jitter = cfg.get("jitter", "full_jitter")
    jitter = None if jitter == "None" else getattr(backoff, jitter)
    waits = []
    fake = FakeRandom(r)
    saved_random, saved_sleep = bj.random, bs.time.sleep
    bj.random = fake
    bs.time.sleep = lambda s: None
    calls = [0]
    max_tries = cfg.get("max_tries") or None
    try:
        @backoff.on_exception(gen, ValueError, max_tries=max_tries if max_tries else attempts + 1, jitter=jitter,
                              on_backoff=lambda d: waits.append(d["wait"]), logger=None, **cfg.get("kwargs", {}))
        def fail():
            calls[0] += 1
            raise ValueError("retrykit verify")
        try:
            fail()
        except ValueError:
            pass
    finally:
        bj.random, bs.time.sleep = saved_random, saved_sleep
    return waits, calls[0]


def rq_delay(cfg, attempt):
    from rq.job import Job, Retry
    retry = Retry(max=cfg["max"], interval=cfg.get("interval", 0))

    class Stub:
        pass

    job = Stub()
    job.retry_intervals = retry.intervals
    job.retries_left = retry.max

    class Queue:
        def schedule_job(self, j, when, pipeline=None):
            pass

        def enqueue_job(self, j, pipeline=None):
            pass

    job.set_status = lambda s: None
    job.get_retry_interval = lambda: Job.get_retry_interval(job)
    for _ in range(attempt - 1):
        Job.retry(job, Queue(), None)
    return {"delay_s": Job.get_retry_interval(job), "retries_left": job.retries_left}


def rq_runs(cfg):
    if not cfg.get("max"):
        return {"runs": 1}
    from rq.job import Job, Retry
    retry = Retry(max=cfg["max"], interval=cfg.get("interval", 0))

    class Stub:
        pass

    job = Stub()
    job.retry_intervals = retry.intervals
    job.retries_left = retry.max
    job.set_status = lambda s: None
    job.get_retry_interval = lambda: Job.get_retry_interval(job)

    class Queue:
        def schedule_job(self, j, when, pipeline=None):
            pass

        def enqueue_job(self, j, pipeline=None):
            pass

    runs = 1
    # worker.py handle_job_failure: retry = job.retries_left and job.retries_left > 0
    while job.retries_left and job.retries_left > 0:
        Job.retry(job, Queue(), None)
        runs += 1
    return {"runs": runs}


def main():
    req = json.load(sys.stdin)
    system, cfg = req["system"], req.get("config", {})
    results = []
    for c in req["cases"]:
        op = c["op"]
        if system == "tenacity":
            results.append(tenacity_delay(cfg, c["attempt"], c["rand"]) if op == "delay" else tenacity_runs(cfg))
        elif system == "backoff":
            if op == "delay":
                waits, _ = backoff_waits(cfg, c["attempt"], c["rand"])
                results.append({"delay_s": waits[c["attempt"] - 1]})
            else:
                # The attempt limit does not depend on the waits: count with
                # constant(interval=0) and no jitter, at most 1000 tries.
                counting = dict(cfg, wait_gen="constant", kwargs={"interval": 0}, jitter="None")
                _, runs = backoff_waits(counting, 999, 0.5)
                results.append({"runs": runs})
        elif system == "rq":
            results.append(rq_delay(cfg, c["attempt"]) if op == "delay" else rq_runs(cfg))
        else:
            raise SystemExit("pyretry_driver: unknown system %r" % system)
    mod = __import__({"tenacity": "tenacity", "backoff": "backoff", "rq": "rq"}[system])
    version = getattr(mod, "__version__", None) or getattr(mod, "VERSION", None)
    if version is None:
        from importlib.metadata import version as v
        version = v(system)
    json.dump({"system": system, "version": str(version), "file": mod.__file__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
