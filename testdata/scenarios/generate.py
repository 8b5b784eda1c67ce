#!/usr/bin/env python3
"""Authoring helper for retrykit's scenario vectors.

This script only lays out JSON: every expected value below is written by
hand (from ojs-core / ojs-retry / ojs-dead-letter and the formula in each
description), never computed by running retrykit. Run it from this
directory to rewrite the *.json files:  python3 generate.py
Ids are stable: never renumber or reuse one; retire a scenario by deleting it.
"""
import json, collections

SCHEMA_VERSION = 1
SUITE_VERSION = "0.1.0"
SPEC_VERSION = "1.0.0-rc.1"

NOTES = {
    "extension:backoff_strategy": "Uses the backoff_strategy extension field (RK-01). Skip if unsupported.",
    "should:prefix-match": "Uses a trailing '.*' non_retryable_errors pattern (ojs-retry 6.2, SHOULD).",
    "implementation-defined:error-history-size": "Sets config.error_history and expects exactly that many entries. An implementation that keeps more (RET-15 allows it) may be configured to keep exactly that many or skip the vector; it must never keep fewer than 10.",
    "implementation-defined:timeout-transition": "ojs-core 6.3 lists active -> available on visibility timeout; ojs-retry 9.2 (RET-12) makes the timeout a failed attempt that follows the retry policy. These vectors expect RET-12: retryable until deadline + backoff, or discarded when exhausted (RK-30).",
    "implementation-defined:boundary": "Exact boundary instants: a timer is due when its time <= now and a reservation is valid while now < deadline (RK-31).",
    "implementation-defined:cancel-terminal": "Cancelling a job in a terminal state succeeds and changes nothing (ojs-core 7.6, RK-32).",
    "implementation-defined:manual-retry-errors": "Manual retry keeps the error history (ojs-dead-letter 6.1) although ojs-core 6.3 says 'clear errors' (RK-33).",
    "implementation-defined:retention": "Retention applies to dead-lettered jobs only; a job is pruned when it has been dead-lettered strictly longer than max_age; pruned jobs no longer exist (RK-34).",
    "implementation-defined:paused-queue": "Queue pause/resume is an operator extension: a paused queue's jobs still become available and its reservations still expire, they are just not fetched (RK-36).",
    "implementation-defined:error-classes": "Expects a specific error class (invalid_request, duplicate_id, not_found) for a rejected operation.",
}

ABS = object()  # marker: field not checked


def J(state, attempt=ABS, nra=ABS, dl=ABS, errs=ABS, ru=ABS):
    d = {"state": state}
    if attempt is not ABS: d["attempt"] = attempt
    if nra is not ABS: d["next_retry_at_ms"] = nra
    if ru is not ABS: d["reserved_until_ms"] = ru
    if dl is not ABS: d["dead_letter"] = dl
    if errs is not ABS: d["errors"] = list(errs)
    return d


def E(attempt, typ, msg, at, code="RETRY", details=None):
    d = {"attempt": attempt, "type": typ, "message": msg, "code": code, "at_ms": at}
    if details is not None: d["details"] = details
    return d


def T(attempt, at):
    """A visibility-timeout entry (type and message implementation-defined)."""
    return {"attempt": attempt, "code": "RETRY", "at_ms": at, "timeout": True}


def X(jobs=None, fetched=ABS, error=None, absent=None, counts=None):
    d = {}
    if error: d["error"] = error
    if fetched is not ABS: d["fetched"] = fetched
    if jobs: d["jobs"] = jobs
    if absent: d["absent"] = absent
    if counts: d["counts"] = counts
    return d


def enq(at, jid, expect, typ="email.send", queue=None, retry=ABS, sched=None, pending=False, vis=None):
    job = {"id": jid, "type": typ}
    if queue: job["queue"] = queue
    job["args"] = [jid]
    if retry is not ABS: job["retry"] = retry
    if sched is not None: job["scheduled_at_ms"] = sched
    if pending: job["pending"] = True
    if vis is not None: job["visibility_timeout_ms"] = vis
    return {"at_ms": at, "op": "enqueue", "job": job, "expect": expect}


def op(at, name, expect, **kw):
    s = {"at_ms": at, "op": name}
    s.update(kw)
    s["expect"] = expect
    return s


def fetch(at, expect, *queues):
    return op(at, "fetch", expect, queues=list(queues or ["default"]))


def fail(at, jid, expect, typ="smtp.unavailable", msg="SMTP server unavailable", code=None, details=None):
    err = {"type": typ, "message": msg}
    if code: err["code"] = code
    if details is not None: err["details"] = details
    return op(at, "fail", expect, id=jid, error=err)


FILES = collections.OrderedDict()


def S(file, sid, req, section, desc, steps, covers=(), flags=(), config=None):
    sc = {"id": sid, "requirement": req}
    if covers: sc["covers"] = list(covers)
    sc["section"] = section
    sc["description"] = desc
    if flags: sc["flags"] = list(flags)
    sc["config"] = config or {}
    sc["steps"] = steps
    FILES.setdefault(file, []).append(sc)


# Policies used below (jitter off unless a scenario injects rand).
P3 = {"max_attempts": 3, "initial_interval": "PT1S", "backoff_coefficient": 2.0, "jitter": False}   # delays 1s, 2s
P1 = {"max_attempts": 1, "jitter": False}
P5 = {"max_attempts": 5, "initial_interval": "PT1S", "backoff_coefficient": 2.0, "jitter": False}   # 1s 2s 4s 8s
P2DL = {"max_attempts": 2, "initial_interval": "PT1S", "jitter": False, "on_exhaustion": "dead_letter"}
P1DL = {"max_attempts": 1, "jitter": False, "on_exhaustion": "dead_letter"}
F1 = E(1, "smtp.unavailable", "SMTP server unavailable", 0)

# ---------------------------------------------------------------- definitions
# (appended below, one section per file)

def main():
    seen = set()
    for name, scs in FILES.items():
        for sc in scs:
            assert sc["id"] not in seen, sc["id"]
            seen.add(sc["id"])
        doc = collections.OrderedDict(
            schema_version=SCHEMA_VERSION, suite_version=SUITE_VERSION, spec_version=SPEC_VERSION,
            kind="scenario", notes={k: v for k, v in NOTES.items() if any(k in sc.get("flags", []) for sc in scs)},
            scenarios=scs)
        with open(name + ".json", "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    print(len(seen), "scenarios in", len(FILES), "files")


# SECTIONS

if __name__ == "__main__":
    main()
