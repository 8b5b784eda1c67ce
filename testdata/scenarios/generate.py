#!/usr/bin/env python3
"""Authoring helper for retrykit's scenario vectors.

This script only lays out JSON: every expected value below is written by
hand (from ojs-core / ojs-retry / ojs-dead-letter and the formula in each
description), never computed by running retrykit. It writes the *.json
files next to itself, from any working directory:

    python3 testdata/scenarios/generate.py          # rewrite the files
    python3 testdata/scenarios/generate.py --check  # exit 1 if any would change

Ids are stable: never renumber or reuse one. An existing id's requirement,
config and operations (every step without its "expect") may not change: append
a new scenario instead (--allow-id-change overrides, for a deliberate fix).
Retire a scenario by deleting it and adding its id to RETIRED.
"""
import argparse, json, collections, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Ids of deleted scenarios; they may never be used again.
RETIRED = frozenset()

SCHEMA_VERSION = 1
SUITE_VERSION = "0.2.0"
SPEC_VERSION = "1.0.0-rc.1"

NOTES = {
    "extension:backoff_strategy": "Uses the backoff_strategy extension field (RK-01). Skip if unsupported.",
    "should:prefix-match": "Uses a trailing '.*' non_retryable_errors pattern (ojs-retry 6.2, SHOULD).",
    "implementation-defined:error-history-size": "Sets config.error_history and expects exactly that many entries. An implementation that keeps more (RET-15 allows it) may be configured to keep exactly that many or skip the vector; it must never keep fewer than 10.",
    "implementation-defined:timeout-transition": "ojs-core 6.3 lists active -> available on visibility timeout; ojs-retry 9.2 (RET-12) makes the timeout a failed attempt that follows the retry policy. These vectors expect RET-12: retryable until deadline + backoff, or discarded when exhausted (RK-30).",
    "implementation-defined:boundary": "Exact boundary instants: a timer is due when its time <= now and a reservation is valid while now < deadline (RK-31).",
    "implementation-defined:cancel-terminal": "Cancelling a job in a terminal state succeeds and changes nothing (ojs-core 7.6, RK-32).",
    "implementation-defined:manual-retry-errors": "Manual retry keeps the error history (ojs-dead-letter 6.1) although ojs-core 6.3 says 'clear errors' (RK-33).",
    "implementation-defined:retention": "config.retention applies to dead-lettered jobs only, over all queues (RK-34); config.finished_retention to completed, cancelled and plainly discarded jobs, counted per queue and state (RK-41). A job is pruned when it has been finished strictly longer than max_age; pruned jobs no longer exist.",
    "implementation-defined:delivery": "ack, fail and heartbeat name the fetch they answer (step field delivery: the job's n-th fetch; absent: its latest). One naming an earlier fetch of a job that was fetched again since is rejected as stale_delivery and changes nothing (RK-38 to RK-40). Skip if deliveries are not tracked.",
    "implementation-defined:delete": "Uses the delete op: a finished job is removed at once, an unfinished one is refused (RK-42). Skip if unsupported.",
    "implementation-defined:paused-queue": "Queue pause/resume is an operator extension: a paused queue's jobs still become available and its reservations still expire, they are just not fetched (RK-36).",
    "implementation-defined:error-classes": "Expects a specific error class (invalid_request, duplicate_id, not_found) for a rejected operation.",
    "extension:priority": "Uses the job field priority (ojs-core 5): within a queue a higher number is fetched first, equal numbers in the order the jobs became available; absent is 0. Skip if unsupported.",
    "extension:expiry": "Uses the job's start deadlines: expires_at_ms (ojs-core 5.2 expires_at) and enqueue_ttl_ms (ojs-timeouts 5.3 enqueue_ttl, in milliseconds). A job still waiting (scheduled, available, pending, retryable) once the clock is past its deadline is discarded without running and without an error entry; at the deadline itself it may still be fetched. expires_at bounds every start, the enqueue TTL (counted from the enqueue) only the first. A job active past its deadline finishes its attempt; if it fails with retries left it is discarded at once. A manual retry clears both deadlines. Skip if unsupported.",
    "extension:rate-limiting": "Uses the job field rate_limit (ojs-rate-limiting 6.1, each period as period_ms): key, concurrency, rate {limit, period_ms}, throttle {limit, period_ms}, on_limit wait (default), reschedule or drop. A fetch skips a job its limits hold back and claims the next eligible one in FETCH order (8.1, 8.2); the held-back job is not claimed, so its attempt does not change. Counts belong to the key, limits to each job. The window is a sliding log: fewer than limit starts of the key in (now - period_ms, now] (RK-285). The throttle spaces starts by ceil(period / limit) nanoseconds after the key's last start, the first free (RK-286). reschedule makes the job scheduled at the first instant its rate and throttle allow; held back by concurrency alone it waits; drop discards it without running, not dead-lettered, with no error entry (RK-287). A job leaving active (ack, fail, visibility timeout) frees its key's concurrency. Skip if unsupported.",
    "implementation-defined:limits": "Size limits on caller data (RK-46): job id, type and queue at most 255 bytes, args at most 1 MiB of valid JSON, error type at most 1024 bytes, error details at most 64 KiB; over a limit is invalid_request and changes nothing. An error message over 4096 bytes is recorded cut to its first 4093 bytes (at a character boundary) followed by U+2026. Skip if your limits differ.",
    "extension:timeouts": "Uses the job field timeouts, the ojs-timeouts object in whole seconds (timeout, total_timeout, heartbeat_timeout, grace_period, enqueue_ttl; defaults 1800, none, 60, 30, none). A limit has passed only when strictly more time has elapsed (ojs-timeouts 7.1, 7.3, 5.2; RK-216): in the whole milliseconds of a scenario at the first millisecond after it, so an attempt started at s is still running at s + (timeout + grace_period) * 1000 and has failed at the millisecond after; the reservation ends there (reserved_until_ms is that millisecond) and the failed attempt's error entry is at it. The entry has type timeout (execution timeout), stalled (no heartbeat for heartbeat_timeout) or total_timeout (created_at + total_timeout passed), code RETRY, and details holding the ojs-timeouts 8 object, whose timeout_kind (execution, stalled, total) the expectation checks (RK-219, RK-226). These failed attempts follow the retry policy; a passed total_timeout ends the job with its on_exhaustion action whatever attempts remain (ojs-timeouts 5.2, RK-217); a failure whose retry could not finish in time (created_at + total_timeout < now + backoff_delay + timeout, strict, RK-215) ends the job at once with no further entry (RK-220). A job still waiting when its total_timeout passes is ended at the latest when a fetch reaches it (RK-226). Skip if unsupported.",
    "extension:dead-letter-replay": "Uses config.replay_rules, the replay_rules array of ojs-dead-letter 7.1 (name, filter, delay, max_replays, enabled; RK-221, RK-222), for every queue. A dead letter is replayed at discarded_at + delay (inclusive; RK-224) by the first rule that matches it while its replay count is below that rule's max_replays (RK-223): as a manual retry (attempt 0, error history kept) that writes replay_count, last_replayed_at_ms and replay_rule (the meta keys ojs.replay_count, ojs.last_replayed_at, ojs.replay_rule of 7.2). replay_at_ms is the planned replay of a dead letter, null when none is planned; a manual retry cancels it (RK-227). Skip if unsupported.",
    "extension:error_rules": "Uses the retry policy's error_rules (docs/extensions.md 3.2; RK-302, RK-303): the first rule whose match lists the failure's type sets the attempt limit (counted over the job's attempts) and the backoff; other types follow the policy. Skip if unsupported.",
    "extension:retry_after": "A fail step carries retry_after_ms, a delay the handler asks for (docs/extensions.md 3.3; RK-304): the retry waits min(retry_after, max_retry_after, else the max_interval in force), unjittered, and never beyond max_attempts. Skip if unsupported.",
    "extension:snooze": "A fail step carries snooze_ms (docs/extensions.md 3.5; RK-306): while the job has taken fewer than max_snoozes snoozes it becomes retryable for min(snooze, max_snooze, else max_interval) with its attempt given back (the next fetch runs the same attempt number), no error entry, and snoozes one higher; past max_snoozes the snooze is a requested delay that spends the attempt. Skip if unsupported.",
    "extension:retry_budget": "Sets config.retry_budget, the retry_budget object of docs/extensions.md 2.3 for every queue (RK-307, RK-320 .. RK-323): a token bucket starts full, a retry of a failed attempt that every other rule allows takes one token or, with none left, is refused and the job takes its on_exhaustion action (the failure recorded as usual); a snooze takes nothing; an ack puts credit_per_success back. Skip if unsupported.",
    "extension:jitter_mode": "Uses the retry policy's jitter_mode (docs/extensions.md 3.4; RK-305) with config.rand as every draw: full b*r, equal (b + floor(b*r))/2, decorrelated min(max_interval, I + r*(3p - I)) with p the delay the job last waited (I before its first retry). Skip if unsupported.",
}

KIND_NOTE = ("Timed sequences of job operations against an executor, each step at at_ms milliseconds after "
             "2026-01-01T00:00:00Z, with the expected state, attempt, next_retry_at, reservation, dead-letter flag "
             "and error history after it. Absent expectation fields are not checked. See README.md.")

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


def enq(at, jid, expect, typ="email.send", queue=None, retry=ABS, sched=None, pending=False, vis=None, expires=None, ttl=None, prio=None, rl=None):
    job = {"id": jid, "type": typ}
    if queue: job["queue"] = queue
    job["args"] = [jid]
    if prio is not None: job["priority"] = prio
    if retry is not ABS: job["retry"] = retry
    if sched is not None: job["scheduled_at_ms"] = sched
    if pending: job["pending"] = True
    if vis is not None: job["visibility_timeout_ms"] = vis
    if expires is not None: job["expires_at_ms"] = expires
    if ttl is not None: job["enqueue_ttl_ms"] = ttl
    if rl is not None: job["rate_limit"] = rl
    return {"at_ms": at, "op": "enqueue", "job": job, "expect": expect}


def op(at, name, expect, **kw):
    s = {"at_ms": at, "op": name}
    s.update(kw)
    s["expect"] = expect
    return s


def fetch(at, expect, *queues):
    return op(at, "fetch", expect, queues=list(queues or ["default"]))


def fail(at, jid, expect, typ="smtp.unavailable", msg="SMTP server unavailable", code=None, details=None, delivery=None):
    err = {"type": typ, "message": msg}
    if code: err["code"] = code
    if details is not None: err["details"] = details
    if delivery is None:
        return op(at, "fail", expect, id=jid, error=err)
    return op(at, "fail", expect, id=jid, error=err, delivery=delivery)


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

def identity(sc):
    """What an id stands for: everything but the expectations and the prose."""
    return {
        "requirement": sc["requirement"],
        "config": sc.get("config", {}),
        "steps": [{k: v for k, v in st.items() if k != "expect"} for st in sc["steps"]],
    }


def render():
    """Returns {file name: content} and the number of scenarios."""
    seen = set()
    out = collections.OrderedDict()
    for name, scs in FILES.items():
        for sc in scs:
            assert sc["id"] not in seen, "duplicate id " + sc["id"]
            assert sc["id"] not in RETIRED, "retired id reused: " + sc["id"]
            seen.add(sc["id"])
        doc = collections.OrderedDict(
            schema_version=SCHEMA_VERSION, suite_version=SUITE_VERSION, spec_version=SPEC_VERSION,
            kind="scenario", notes=dict([("kind", KIND_NOTE)] + [(k, v) for k, v in NOTES.items() if any(k in sc.get("flags", []) for sc in scs)]),
            scenarios=scs)
        out[name + ".json"] = json.dumps(doc, indent=1) + "\n"
    return out, len(seen)


def id_problems(files):
    """Compares the scenarios on disk with the new ones: ids are immutable."""
    old = {}
    for fn in sorted(os.listdir(HERE)):
        if not fn.endswith(".json") or fn.endswith(".schema.json"):
            continue
        with open(os.path.join(HERE, fn), encoding="utf-8") as fh:
            try:
                doc = json.load(fh)
            except ValueError:
                continue
        for sc in doc.get("scenarios", []) if isinstance(doc, dict) else []:
            if isinstance(sc, dict) and "id" in sc:
                old[sc["id"]] = sc
    new = {}
    for content in files.values():
        for sc in json.loads(content)["scenarios"]:
            new[sc["id"]] = sc
    problems = []
    for sid, sc in sorted(old.items()):
        nsc = new.get(sid)
        if nsc is None:
            if sid not in RETIRED:
                problems.append("%s: id vanished (add it to RETIRED to retire it; never renumber)" % sid)
            continue
        try:
            same = identity(sc) == identity(nsc)
        except (KeyError, TypeError, AttributeError):
            same = False
        if not same:
            problems.append("%s: requirement, config or operations changed (ids are immutable; "
                            "append a new scenario)" % sid)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    ap.add_argument("--allow-id-change", action="store_true",
                    help="permit changing the operations of an existing id")
    args = ap.parse_args()

    files, n = render()
    problems = id_problems(files)
    if problems and not args.allow_id_change:
        for p in problems:
            print("generate.py: " + p, file=sys.stderr)
        sys.exit(2)

    changed = []
    for name, content in files.items():
        path = os.path.join(HERE, name)
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
    print("generate.py: %d scenarios in %d files; %d file(s) written" % (n, len(files), len(changed)))


# ---- lifecycle.json: every transition of ojs-core 6.3, invalid transitions, fetch rules
L = "lifecycle"
A0 = lambda st, **kw: J(st, attempt=0, nra=None, dl=False, errs=[], **kw)
S(L, "scn-core-0001", "CORE-T02", "ojs-core 6.3", "PUSH without scheduled_at: the job is available with attempt 0, no next_retry_at, no errors",
  [enq(0, "a", X({"a": A0("available")}, counts={"available": 1}))])
S(L, "scn-core-0002", "CORE-T01", "ojs-core 6.3", "PUSH with scheduled_at 5000 ms in the future: scheduled until 5000, available from 5000 (scheduled_at <= now), not fetchable at 4999",
  [enq(0, "a", X({"a": A0("scheduled")}), sched=5000),
   op(4999, "tick", X({"a": A0("scheduled")})),
   fetch(4999, X({"a": A0("scheduled")}, fetched=None)),
   op(5000, "tick", X({"a": A0("available")})),
   fetch(5000, X({"a": J("active", attempt=1)}, fetched="a"))],
  covers=["CORE-T04", "RK-31"], flags=["implementation-defined:boundary"])
S(L, "scn-core-0003", "CORE-T02", "ojs-core 7.1", "PUSH at 1000 with scheduled_at 500 (in the past): available at once",
  [enq(1000, "a", X({"a": A0("available")}), sched=500)])
S(L, "scn-core-0004", "RK-31", "ojs-core 6.3", "PUSH at 2000 with scheduled_at exactly 2000: not in the future, so available",
  [enq(2000, "a", X({"a": A0("available")}), sched=2000)],
  covers=["CORE-T02"], flags=["implementation-defined:boundary"])
S(L, "scn-core-0005", "CORE-T03", "ojs-core 6.3", "PUSH with the pending flag: pending (not fetchable, time does not activate it) until ACTIVATE makes it available",
  [enq(0, "a", X({"a": A0("pending")}, counts={"pending": 1}), pending=True),
   op(60000, "tick", X({"a": A0("pending")})),
   fetch(60000, X({"a": A0("pending")}, fetched=None)),
   op(60001, "activate", X({"a": A0("available")}), id="a"),
   fetch(60001, X({"a": J("active", attempt=1)}, fetched="a"))],
  covers=["CORE-T05"])
S(L, "scn-core-0006", "CORE-T06", "ojs-core 6.3", "FETCH claims: attempt 0 -> 1 and a reservation until 1000 + 10000; ACK completes with no errors and no reservation",
  [enq(0, "a", X({"a": A0("available")}), vis=10000),
   fetch(1000, X({"a": J("active", attempt=1, nra=None, ru=11000, dl=False, errs=[])}, fetched="a")),
   op(2000, "ack", X({"a": J("completed", attempt=1, nra=None, ru=None, dl=False, errs=[])}, counts={"completed": 1, "active": 0}), id="a")],
  covers=["CORE-T07", "RET-14"])
S(L, "scn-core-0007", "CORE-T08", "ojs-core 6.3", "FAIL with retries left (attempt 1 < max_attempts 3): retryable, next_retry_at = 500 + 1s * 2^0 = 1500, the error recorded",
  [enq(0, "a", X({"a": A0("available")}), retry=P3),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(500, "a", X({"a": J("retryable", attempt=1, nra=1500, ru=None, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 500)])}))],
  covers=["RET-11", "RET-14"])
S(L, "scn-core-0008", "CORE-T09", "ojs-core 6.3", "FAIL with no retries left (attempt 1 >= max_attempts 1): discarded, not dead-lettered (on_exhaustion discard)",
  [enq(0, "a", X({"a": A0("available")}), retry=P1),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(100, "a", X({"a": J("discarded", attempt=1, nra=None, ru=None, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 100)])}, counts={"discarded": 1, "dead_letter": 0}))],
  covers=["RET-01", "RET-17"])
S(L, "scn-core-0009", "CORE-T10", "ojs-core 6.3", "CANCEL of an active job: cancelled, reservation cleared; the worker's later ACK is an invalid transition cancelled -> completed",
  [enq(0, "a", X({"a": A0("available")}), vis=10000),
   fetch(0, X({"a": J("active", attempt=1, ru=10000)}, fetched="a")),
   op(100, "cancel", X({"a": J("cancelled", attempt=1, nra=None, ru=None, errs=[])}), id="a"),
   op(200, "ack", X({"a": J("cancelled", attempt=1)}, error="invalid_transition"), id="a")],
  covers=["CORE-T00"])
S(L, "scn-core-0010", "CORE-T13", "ojs-core 6.3", "CANCEL of a scheduled job: cancelled; its scheduled time passing changes nothing",
  [enq(0, "a", X({"a": A0("scheduled")}), sched=5000),
   op(1000, "cancel", X({"a": A0("cancelled")}), id="a"),
   op(5000, "tick", X({"a": A0("cancelled")})),
   fetch(5000, X({"a": A0("cancelled")}, fetched=None))])
S(L, "scn-core-0011", "CORE-T14", "ojs-core 6.3", "CANCEL of an available job: cancelled and no longer fetchable",
  [enq(0, "a", X({"a": A0("available")})),
   op(100, "cancel", X({"a": A0("cancelled")}, counts={"cancelled": 1, "available": 0}), id="a"),
   fetch(200, X({"a": A0("cancelled")}, fetched=None))])
S(L, "scn-core-0012", "CORE-T15", "ojs-core 6.3", "CANCEL of a pending job: cancelled; ACTIVATE afterwards is an invalid transition cancelled -> available",
  [enq(0, "a", X({"a": A0("pending")}), pending=True),
   op(100, "cancel", X({"a": A0("cancelled")}), id="a"),
   op(200, "activate", X({"a": A0("cancelled")}, error="invalid_transition"), id="a")],
  covers=["CORE-T00"])
S(L, "scn-core-0013", "CORE-T16", "ojs-core 6.3", "CANCEL during the retry wait (next_retry_at 1000): cancelled, next_retry_at cleared, errors kept; the backoff elapsing does not make it available",
  [enq(0, "a", X({"a": A0("available")}), retry=P3),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000, errs=[F1])})),
   op(500, "cancel", X({"a": J("cancelled", attempt=1, nra=None, dl=False, errs=[F1])}), id="a"),
   op(1000, "tick", X({"a": J("cancelled", attempt=1, nra=None, errs=[F1])})),
   fetch(1000, X({"a": J("cancelled")}, fetched=None))],
  covers=["RET-11"])
S(L, "scn-core-0014", "CORE-T17", "ojs-core 6.3", "Manual RETRY of a discarded (dead-lettered) job: available, attempt reset to 0, out of the dead letter set; the next fetch is attempt 1",
  [enq(0, "a", X({"a": A0("available")}), retry=P1DL),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[F1])})),
   op(100, "retry", X({"a": J("available", attempt=0, nra=None, dl=False, errs=[F1])}, counts={"dead_letter": 0}), id="a"),
   fetch(200, X({"a": J("active", attempt=1, dl=False, errs=[F1])}, fetched="a"))],
  covers=["DLQ-003", "RK-33"], flags=["implementation-defined:manual-retry-errors"])
S(L, "scn-core-0015", "CORE-T00", "ojs-core 6.4", "ACK of an available job (available -> completed) is rejected; nothing changes",
  [enq(0, "a", X({"a": A0("available")})),
   op(0, "ack", X({"a": A0("available")}, error="invalid_transition"), id="a")])
S(L, "scn-core-0016", "CORE-T00", "ojs-core 6.4", "FAIL of a completed job (terminal) is rejected and records no error",
  [enq(0, "a", X({"a": A0("available")})),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   op(10, "ack", X({"a": J("completed", attempt=1, errs=[])}), id="a"),
   fail(20, "a", X({"a": J("completed", attempt=1, errs=[])}, error="invalid_transition"))])
S(L, "scn-core-0017", "CORE-T00", "ojs-core 6.4", "ACTIVATE of an available (not pending) job is rejected",
  [enq(0, "a", X({"a": A0("available")})),
   op(0, "activate", X({"a": A0("available")}, error="invalid_transition"), id="a")])
S(L, "scn-core-0018", "CORE-T00", "ojs-core 6.4", "Manual RETRY is only from discarded: completed -> available and cancelled -> available are rejected",
  [enq(0, "a", X({"a": A0("available")})),
   enq(0, "b", X({"b": A0("available")})),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   op(0, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   op(0, "cancel", X({"b": A0("cancelled")}), id="b"),
   op(10, "retry", X({"a": J("completed", attempt=1)}, error="invalid_transition"), id="a"),
   op(10, "retry", X({"b": A0("cancelled")}, error="invalid_transition"), id="b")])
S(L, "scn-core-0019", "CORE-T00", "ojs-core 6.4", "A retryable job is not active: HEARTBEAT and ACK are rejected and it keeps next_retry_at 1000",
  [enq(0, "a", X({"a": A0("available")}), retry=P3),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000, errs=[F1])})),
   op(100, "heartbeat", X({"a": J("retryable", attempt=1, nra=1000)}, error="invalid_transition"), id="a"),
   op(100, "ack", X({"a": J("retryable", attempt=1, nra=1000, errs=[F1])}, error="invalid_transition"), id="a")])
S(L, "scn-core-0020", "RK-32", "ojs-core 7.6", "CANCEL of a job already in a terminal state (completed, cancelled, discarded) succeeds and changes nothing",
  [enq(0, "a", X({"a": A0("available")})),
   enq(0, "b", X({"b": A0("available")})),
   enq(0, "c", X({"c": A0("available")}), retry=P1),
   fetch(0, X(fetched="a")),
   op(0, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   op(0, "cancel", X({"b": A0("cancelled")}), id="b"),
   fetch(0, X(fetched="c")),
   fail(0, "c", X({"c": J("discarded", attempt=1, dl=False)})),
   op(10, "cancel", X({"a": J("completed", attempt=1)}), id="a"),
   op(10, "cancel", X({"b": A0("cancelled")}), id="b"),
   op(10, "cancel", X({"c": J("discarded", attempt=1, dl=False)}), id="c")],
  covers=["CORE-C01"], flags=["implementation-defined:cancel-terminal"])
S(L, "scn-core-0021", "CORE-I01", "ojs-core 7.7", "Operations on an unknown id report not found",
  [op(0, "ack", X(error="not_found", absent=["nope"]), id="nope"),
   op(0, "heartbeat", X(error="not_found"), id="nope"),
   op(0, "cancel", X(error="not_found"), id="nope"),
   op(0, "retry", X(error="not_found"), id="nope")],
  flags=["implementation-defined:error-classes"])
S(L, "scn-core-0022", "CORE-P01", "ojs-core 7.1", "PUSH with an id already in use is rejected; the first job is untouched",
  [enq(0, "a", X({"a": A0("available")})),
   enq(10, "a", X({"a": A0("available")}, error="duplicate_id", counts={"available": 1}))],
  flags=["implementation-defined:error-classes"])
S(L, "scn-core-0023", "CORE-F01", "ojs-core 7.2", "FETCH checks the listed queues left to right: both 'high' jobs (oldest first) before the older 'low' job",
  [enq(0, "a", X({"a": A0("available")}), queue="low"),
   enq(1, "b", X({"b": A0("available")}), queue="high"),
   enq(2, "c", X({"c": A0("available")}), queue="high"),
   fetch(3, X({"b": J("active", attempt=1)}, fetched="b"), "high", "low"),
   fetch(3, X({"c": J("active", attempt=1)}, fetched="c"), "high", "low"),
   fetch(3, X({"a": J("active", attempt=1)}, fetched="a"), "high", "low"),
   fetch(3, X(fetched=None), "high", "low")])
S(L, "scn-core-0024", "CORE-F02", "ojs-core 6.5", "Exclusive claim: once fetched, the job cannot be fetched again while active",
  [enq(0, "a", X({"a": A0("available")})),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fetch(0, X({"a": J("active", attempt=1)}, fetched=None))],
  covers=["CORE-T06"])
S(L, "scn-core-0025", "CORE-F03", "ojs-core 7.2", "Within one queue jobs are fetched in the order they became available",
  [enq(0, "a", X()), enq(1, "b", X()), enq(2, "c", X()),
   fetch(3, X(fetched="a")), fetch(3, X(fetched="b")), fetch(3, X(fetched="c")), fetch(3, X(fetched=None))])
S(L, "scn-core-0026", "CORE-F01", "ojs-core 7.2", "FETCH only claims from the queues it lists",
  [enq(0, "a", X({"a": A0("available")}), queue="q1"),
   fetch(0, X({"a": A0("available")}, fetched=None), "q2"),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a"), "q2", "q1")])

# ---- retry.json: backoff timing, exhaustion, non-retryable errors, validation at enqueue
R = "retry"
def Er(a, at, typ="smtp.unavailable", msg="SMTP server unavailable", code="RETRY"):
    return E(a, typ, msg, at, code)
e1, e2, e3 = Er(1, 0), Er(2, 1500), Er(3, 3500)
S(R, "scn-ret-0001", "RET-11", "ojs-retry 9.1", "Default policy (no retry field; r = 0.5 so the jitter multiplier is 1.0): next_retry_at = 0 + 1s*2^0 = 1000, not fetchable at 999; attempt 2 fails at 1500 -> 1500 + 1s*2^1 = 3500; attempt 3 = max_attempts 3 -> discarded",
  [enq(0, "a", X({"a": J("available", attempt=0, nra=None, errs=[])})),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000, dl=False, errs=[e1])})),
   fetch(999, X({"a": J("retryable", attempt=1, nra=1000)}, fetched=None)),
   fetch(1000, X({"a": J("active", attempt=2, nra=None, errs=[e1])}, fetched="a")),
   fail(1500, "a", X({"a": J("retryable", attempt=2, nra=3500, errs=[e1, e2])})),
   op(3499, "tick", X({"a": J("retryable", attempt=2, nra=3500)})),
   fetch(3500, X({"a": J("active", attempt=3)}, fetched="a")),
   fail(3500, "a", X({"a": J("discarded", attempt=3, nra=None, dl=False, errs=[e1, e2, e3])}))],
  covers=["RET-09", "RET-01", "RET-14", "CORE-T12"])
LIN = {"max_attempts": 4, "initial_interval": "PT2S", "backoff_strategy": "linear", "jitter": False}
S(R, "scn-ret-0002", "RET-11", "ojs-retry 3.2", "Linear 2s*n: next_retry_at 0+2000, 2000+4000 = 6000, 6000+6000 = 12000; never fetchable 1 ms early; attempt 4 exhausts",
  [enq(0, "a", X(), retry=LIN),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=2000)})),
   fetch(1999, X(fetched=None)), fetch(2000, X({"a": J("active", attempt=2)}, fetched="a")),
   fail(2000, "a", X({"a": J("retryable", attempt=2, nra=6000)})),
   fetch(5999, X(fetched=None)), fetch(6000, X({"a": J("active", attempt=3)}, fetched="a")),
   fail(6000, "a", X({"a": J("retryable", attempt=3, nra=12000)})),
   fetch(11999, X(fetched=None)), fetch(12000, X({"a": J("active", attempt=4)}, fetched="a")),
   fail(12000, "a", X({"a": J("discarded", attempt=4, nra=None, dl=False, errs=[Er(1, 0), Er(2, 2000), Er(3, 6000), Er(4, 12000)])}))],
  covers=["RET-01", "CORE-T12"], flags=["extension:backoff_strategy"])
P2 = {"max_attempts": 2, "initial_interval": "PT1S", "jitter": False}
S(R, "scn-ret-0003", "RET-17", "ojs-retry 2.2", "on_exhaustion discard: attempt 2 of max_attempts 2 fails -> discarded, not in the dead letter set, both errors kept",
  [enq(0, "a", X(), retry=P2), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("discarded", attempt=2, dl=False, errs=[Er(1, 0), Er(2, 1000)])}, counts={"discarded": 1, "dead_letter": 0}))],
  covers=["RET-01"])
S(R, "scn-ret-0004", "RET-17", "ojs-retry 2.2", "on_exhaustion dead_letter: attempt 2 of 2 fails -> discarded and dead-lettered, full error history preserved",
  [enq(0, "a", X(), retry=P2DL), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000, dl=False)})),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("discarded", attempt=2, nra=None, dl=True, errs=[Er(1, 0), Er(2, 1000)])}, counts={"discarded": 1, "dead_letter": 1}))],
  covers=["DLQ-001", "DLQ-002", "RET-01"])
S(R, "scn-ret-0005", "RET-01", "ojs-retry 2.2", "max_attempts 0 behaves as 1 (RK-04): the first failure is terminal",
  [enq(0, "a", X(), retry={"max_attempts": 0}), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=False, errs=[Er(1, 0)])}))],
  covers=["RK-04"])
S(R, "scn-ret-0006", "RET-01", "ojs-retry 2.2", "max_attempts 1 with dead_letter: the first failure dead-letters",
  [enq(0, "a", X(), retry=P1DL), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[Er(1, 0)])}))],
  covers=["RET-17"])
S(R, "scn-ret-0007", "RET-05", "ojs-retry 5.1", "Default policy with injected r = 0.25: delay 1s*0.75 = 750 ms, then 2s*0.75 = 1500 ms after the failure at 1000 -> 2500",
  [enq(0, "a", X()), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=750)})),
   fetch(749, X(fetched=None)), fetch(750, X(fetched="a")),
   fail(1000, "a", X({"a": J("retryable", attempt=2, nra=2500, errs=[Er(1, 0), Er(2, 1000)])}))],
  covers=["RET-11"], config={"rand": 0.25})
S(R, "scn-ret-0008", "RET-06", "ojs-retry 5.3", "Cap after jitter, r = 0.9: 4s*1.4 = 5.6s capped to max_interval 5s; then min(8s,5s)*1.4 = 7s capped to 5s",
  [enq(0, "a", X(), retry={"initial_interval": "PT4S", "max_interval": "PT5S"}), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=5000)})),
   fetch(5000, X(fetched="a")),
   fail(5000, "a", X({"a": J("retryable", attempt=2, nra=10000)}))],
  covers=["RET-04", "RET-05"], config={"rand": 0.9})
S(R, "scn-ret-0009", "RET-04", "ojs-retry 3.5", "Cap: 1s*10^(n-1) with max_interval 5s gives 1s, 5s, 5s: next_retry_at 1000, 6000, 11000; attempt 4 exhausts",
  [enq(0, "a", X(), retry={"max_attempts": 4, "initial_interval": "PT1S", "backoff_coefficient": 10, "max_interval": "PT5S", "jitter": False}),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   fetch(1000, X(fetched="a")), fail(1000, "a", X({"a": J("retryable", attempt=2, nra=6000)})),
   fetch(6000, X(fetched="a")), fail(6000, "a", X({"a": J("retryable", attempt=3, nra=11000)})),
   fetch(11000, X(fetched="a")), fail(11000, "a", X({"a": J("discarded", attempt=4, dl=False)}))])
S(R, "scn-ret-0010", "RK-01", "ojs-retry 3.4", "Polynomial 1s*n^2: delays 1s, 4s, 9s -> next_retry_at 1000, 1000+4000 = 5000, 5000+9000 = 14000",
  [enq(0, "a", X(), retry={"max_attempts": 4, "initial_interval": "PT1S", "backoff_coefficient": 2.0, "backoff_strategy": "polynomial", "jitter": False}),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   fetch(1000, X(fetched="a")), fail(1000, "a", X({"a": J("retryable", attempt=2, nra=5000)})),
   fetch(5000, X(fetched="a")), fail(5000, "a", X({"a": J("retryable", attempt=3, nra=14000)}))],
  covers=["RET-11"], flags=["extension:backoff_strategy"])
S(R, "scn-ret-0011", "RK-01", "ojs-retry 3.1", "Constant 3s (backoff_strategy none): next_retry_at 3000, then 3000+3000 = 6000",
  [enq(0, "a", X(), retry={"max_attempts": 3, "initial_interval": "PT3S", "backoff_strategy": "none", "jitter": False}),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=3000)})),
   fetch(3000, X(fetched="a")), fail(3000, "a", X({"a": J("retryable", attempt=2, nra=6000)}))],
  covers=["RET-11"], flags=["extension:backoff_strategy"])
S(R, "scn-ret-0012", "RET-07", "ojs-retry 6.3", "Exact non-retryable match at attempt 1 of 5: discarded at once (on_exhaustion discard)",
  [enq(0, "a", X(), retry={"max_attempts": 5, "non_retryable_errors": ["validation.bad_input"], "jitter": False}),
   fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, nra=None, dl=False, errs=[E(1, "validation.bad_input", "field x missing", 0)])}), typ="validation.bad_input", msg="field x missing")],
  covers=["RET-18"])
S(R, "scn-ret-0013", "RET-07", "ojs-retry 6.2", "Prefix pattern auth.* matches auth.token.expired: not retried, on_exhaustion dead_letter applies at attempt 1 of 5",
  [enq(0, "a", X(), retry={"max_attempts": 5, "non_retryable_errors": ["auth.*"], "on_exhaustion": "dead_letter", "jitter": False}),
   fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[E(1, "auth.token.expired", "token expired", 0)])}), typ="auth.token.expired", msg="token expired")],
  covers=["DLQ-001"], flags=["should:prefix-match"])
S(R, "scn-ret-0014", "RK-15", "ojs-retry 6.2", "auth.* matches neither 'auth' nor 'authx': both retried (next_retry_at 1000, then 1000 + 2s = 3000)",
  [enq(0, "a", X(), retry={"max_attempts": 5, "non_retryable_errors": ["auth.*"], "jitter": False}),
   fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)}), typ="auth", msg="m"),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("retryable", attempt=2, nra=3000, errs=[E(1, "auth", "m", 0), E(2, "authx", "m", 1000)])}), typ="authx", msg="m")],
  covers=["RET-18"], flags=["should:prefix-match"])
S(R, "scn-ret-0015", "RET-18", "ojs-retry 6.2", "Exact matching is exact and case-sensitive: validation.bad_input.extra and Validation.bad_input are retried",
  [enq(0, "a", X(), retry={"max_attempts": 5, "non_retryable_errors": ["validation.bad_input"], "jitter": False}),
   fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)}), typ="validation.bad_input.extra", msg="m"),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("retryable", attempt=2, nra=3000)}), typ="Validation.bad_input", msg="m")],
  covers=["RET-07"])
e5 = [Er(1, 0), Er(2, 1000), Er(3, 3000), Er(4, 7000), Er(5, 15000)]
S(R, "scn-ret-0016", "RET-14", "ojs-retry 10", "Tracking over 5 attempts, 1s*2^(n-1): next_retry_at 1000, 3000, 7000, 15000; errors carry attempts 1..5 and failure times; attempt 5 = max exhausts",
  [enq(0, "a", X(), retry=P5),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000, errs=e5[:1])})),
   fetch(1000, X(fetched="a")), fail(1000, "a", X({"a": J("retryable", attempt=2, nra=3000, errs=e5[:2])})),
   fetch(3000, X(fetched="a")), fail(3000, "a", X({"a": J("retryable", attempt=3, nra=7000, errs=e5[:3])})),
   fetch(7000, X(fetched="a")), fail(7000, "a", X({"a": J("retryable", attempt=4, nra=15000, errs=e5[:4])})),
   fetch(15000, X({"a": J("active", attempt=5, nra=None)}, fetched="a")),
   fail(15000, "a", X({"a": J("discarded", attempt=5, nra=None, dl=False, errs=e5)}))],
  covers=["RET-01", "RET-11"])
S(R, "scn-ret-0017", "RET-10", "ojs-retry 8.1", "Partial policy {max_attempts: 5} keeps the other defaults (1s, x2, jitter with r = 0.5 -> x1.0): attempt 3 is still retried, next_retry_at 3000 + 4s = 7000",
  [enq(0, "a", X(), retry={"max_attempts": 5}),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   fetch(1000, X(fetched="a")), fail(1000, "a", X({"a": J("retryable", attempt=2, nra=3000)})),
   fetch(3000, X(fetched="a")), fail(3000, "a", X({"a": J("retryable", attempt=3, nra=7000)}))],
  covers=["RET-09"])
for sid, bad, why, cov in [
    ("scn-ret-0018", {"max_attempts": -1}, "max_attempts -1", ["RET-20"]),
    ("scn-ret-0019", {"initial_interval": "P"}, "initial_interval 'P' (no component)", ["RET-19"]),
    ("scn-ret-0020", {"backoff_coefficient": 0.5}, "backoff_coefficient 0.5 < 1", ["RET-03"]),
    ("scn-ret-0021", {"max_retries": 3}, "unknown field max_retries (RK-02)", ["RK-02"]),
    ("scn-ret-0023", {"initial_interval": "PT10S", "max_interval": "PT5S"}, "max_interval below initial_interval (RK-12)", ["RK-12"]),
]:
    S(R, sid, "RET-16", "ojs-retry 11", "An invalid policy (%s) is rejected at enqueue time: no job is created" % why,
      [enq(0, "a", X(error="validation.retry_policy_invalid", absent=["a"], counts={"available": 0}), retry=bad),
       fetch(0, X(fetched=None, absent=["a"]))],
      covers=cov)
S(R, "scn-ret-0022", "RET-11", "ojs-retry 9.1", "Two retrying jobs come back in next_retry_at order: b (failed at 0, due 1000) before a (failed at 500, due 1500)",
  [enq(0, "a", X(), retry=P3), enq(0, "b", X(), retry=P3),
   fetch(0, X(fetched="a")), fetch(0, X(fetched="b")),
   fail(0, "b", X({"b": J("retryable", attempt=1, nra=1000)})),
   fail(500, "a", X({"a": J("retryable", attempt=1, nra=1500)})),
   op(2000, "tick", X({"a": J("available", attempt=1, nra=None), "b": J("available", attempt=1, nra=None)})),
   fetch(2000, X({"b": J("active", attempt=2)}, fetched="b")),
   fetch(2000, X({"a": J("active", attempt=2)}, fetched="a"))],
  covers=["CORE-T12", "CORE-F03"])

# ---- codes.json: handler response codes (ojs-retry 7)
C = "codes"
P5DL = {"max_attempts": 5, "on_exhaustion": "dead_letter", "jitter": False}
P5D = {"max_attempts": 5, "jitter": False}
def cscn(sid, req, desc, pol, code, want, covers=(), typ="payment.declined", flags=()):
    S(C, sid, req, "ojs-retry 7.2", desc,
      [enq(0, "a", X(), retry=pol), fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
       fail(100, "a", X({"a": want}), typ=typ, msg="card declined", code=code)],
      covers=covers, flags=flags)
cscn("scn-code-0001", "RET-08", "RETRY: the policy applies (attempt 1 < 3): retryable at 100 + 1s = 1100, code RETRY recorded", P3, "RETRY",
     J("retryable", attempt=1, nra=1100, dl=False, errs=[E(1, "payment.declined", "card declined", 100, "RETRY")]))
cscn("scn-code-0002", "RK-35", "No code: treated and recorded as RETRY (ojs-retry 7.3 default)", P3, None,
     J("retryable", attempt=1, nra=1100, dl=False, errs=[E(1, "payment.declined", "card declined", 100, "RETRY")]), covers=["RET-08", "RET-14"])
cscn("scn-code-0003", "RET-08", "DISCARD at attempt 1 of 5 with on_exhaustion dead_letter: discarded, NOT dead-lettered", P5DL, "DISCARD",
     J("discarded", attempt=1, nra=None, dl=False, errs=[E(1, "payment.declined", "card declined", 100, "DISCARD")]))
cscn("scn-code-0004", "RET-08", "FAIL behaves as DISCARD: discarded at attempt 1 of 5 despite dead_letter exhaustion; code FAIL recorded", P5DL, "FAIL",
     J("discarded", attempt=1, nra=None, dl=False, errs=[E(1, "payment.declined", "card declined", 100, "FAIL")]))
cscn("scn-code-0005", "RET-08", "DEAD_LETTER at attempt 1 of 5 with on_exhaustion discard: dead-lettered at once", P5D, "DEAD_LETTER",
     J("discarded", attempt=1, nra=None, dl=True, errs=[E(1, "payment.declined", "card declined", 100, "DEAD_LETTER")]), covers=["DLQ-001"])
cscn("scn-code-0007", "RK-13", "DEAD_LETTER wins over a non_retryable_errors match whose on_exhaustion is discard",
     {"max_attempts": 5, "non_retryable_errors": ["payment.declined"], "jitter": False}, "DEAD_LETTER",
     J("discarded", attempt=1, dl=True), covers=["RET-08"])
cscn("scn-code-0008", "RK-13", "DISCARD wins over on_exhaustion dead_letter at the last attempt (max_attempts 1)", P1DL, "DISCARD",
     J("discarded", attempt=1, dl=False), covers=["RET-08"])
for sid, code, why in [("scn-code-0009", "MAYBE", "an unknown code"), ("scn-code-0011", "discard", "a lower-case code (codes are exact upper-case names)")]:
    S(C, sid, "RK-13", "ojs-retry 7.3", "FAIL with %s is rejected; the job stays active with no error recorded" % why,
      [enq(0, "a", X(), retry=P3), fetch(0, X(fetched="a")),
       fail(100, "a", X({"a": J("active", attempt=1, errs=[])}, error="invalid_request"), code=code)],
      covers=["RET-08"], flags=["implementation-defined:error-classes"])
S(C, "scn-code-0006", "RK-13", "ojs-retry 7.2", "RETRY never extends past max_attempts: attempt 2 of 2 with RETRY is exhausted -> discarded",
  [enq(0, "a", X(), retry=P2),
   fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)}), code="RETRY"),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("discarded", attempt=2, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 0), E(2, "smtp.unavailable", "SMTP server unavailable", 1000)])}), code="RETRY")],
  covers=["RET-01", "RET-08"])
DET = {"endpoint": "https://api.example.com/v1/charges", "timeout_ms": 30000}
S(C, "scn-code-0010", "RET-14", "ojs-retry 10.1", "Error details are kept in the history entry as given",
  [enq(0, "a", X(), retry=P3), fetch(0, X(fetched="a")),
   fail(2000, "a", X({"a": J("retryable", attempt=1, nra=3000, errs=[E(1, "external.api_timeout", "timed out after 30s", 2000, "RETRY", DET)])}),
        typ="external.api_timeout", msg="timed out after 30s", code="RETRY", details=DET)])
S(C, "scn-code-0012", "RET-08", "ojs-retry 7.2", "A code applies to one failure only: DISCARD is not remembered; RETRY at attempt 1, then DEAD_LETTER at attempt 2 dead-letters",
  [enq(0, "a", X(), retry=P5D), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)}), code="RETRY"),
   fetch(1000, X(fetched="a")),
   fail(1000, "a", X({"a": J("discarded", attempt=2, dl=True, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 0, "RETRY"), E(2, "smtp.unavailable", "SMTP server unavailable", 1000, "DEAD_LETTER")])}), code="DEAD_LETTER")])

# ---- timeouts.json: visibility timeout and heartbeats (ojs-retry 9)
TM = "timeouts"
TF = ["implementation-defined:timeout-transition", "implementation-defined:boundary"]
S(TM, "scn-tmo-0001", "RET-12", "ojs-retry 9.2", "Reservation 10 s from fetch at 0: still active at 9999; at 10000 the attempt has failed -> retryable at 10000 + 1s = 11000 with a timeout entry; the refetch is attempt 2",
  [enq(0, "a", X(), retry=P3, vis=10000),
   fetch(0, X({"a": J("active", attempt=1, ru=10000)}, fetched="a")),
   op(9999, "tick", X({"a": J("active", attempt=1, ru=10000, errs=[])})),
   op(10000, "tick", X({"a": J("retryable", attempt=1, nra=11000, ru=None, dl=False, errs=[T(1, 10000)])})),
   fetch(11000, X({"a": J("active", attempt=2, ru=21000, errs=[T(1, 10000)])}, fetched="a"))],
  covers=["RK-30", "RK-31", "RET-11"], flags=TF)
S(TM, "scn-tmo-0002", "RET-12", "ojs-retry 9.2", "A timeout on the last attempt (max_attempts 1) exhausts the policy: discarded",
  [enq(0, "a", X(), retry=P1, vis=10000), fetch(0, X(fetched="a")),
   op(10000, "tick", X({"a": J("discarded", attempt=1, nra=None, ru=None, dl=False, errs=[T(1, 10000)])}))],
  covers=["RET-01", "RK-30"], flags=TF)
S(TM, "scn-tmo-0003", "RET-12", "ojs-retry 9.2", "Two timeouts with max_attempts 2 and dead_letter: retryable at 5000 + 1s = 6000, refetched, timed out at 11000 -> dead-lettered",
  [enq(0, "a", X(), retry=P2DL, vis=5000), fetch(0, X(fetched="a")),
   op(5000, "tick", X({"a": J("retryable", attempt=1, nra=6000, errs=[T(1, 5000)])})),
   fetch(6000, X({"a": J("active", attempt=2, ru=11000)}, fetched="a")),
   op(11000, "tick", X({"a": J("discarded", attempt=2, dl=True, errs=[T(1, 5000), T(2, 11000)])}))],
  covers=["RET-17", "DLQ-001"], flags=TF)
S(TM, "scn-tmo-0004", "RET-12", "ojs-retry 9.2", "A timeout is never matched against non_retryable_errors, whatever the patterns: retried at 10000 + 1s",
  [enq(0, "a", X(), retry={"max_attempts": 3, "non_retryable_errors": ["executor.*", "executor.visibility_timeout", "timeout", "timeout.*"], "jitter": False}, vis=10000),
   fetch(0, X(fetched="a")),
   op(10000, "tick", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}))],
  covers=["RET-07"], flags=TF)
S(TM, "scn-tmo-0005", "RK-31", "ojs-retry 9.2", "ACK exactly at the deadline is too late: the attempt already timed out",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(10000, "ack", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}, error="invalid_transition"), id="a")],
  covers=["RET-12"], flags=TF)
S(TM, "scn-tmo-0006", "RK-31", "ojs-retry 9.2", "FAIL after the deadline is rejected and not recorded; only the timeout entry exists",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   fail(10500, "a", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}, error="invalid_transition"))],
  covers=["RET-12"], flags=TF)
S(TM, "scn-tmo-0007", "RET-13", "ojs-retry 9.3", "A heartbeat at 8000 extends the reservation to 8000 + 10000 = 18000: no timeout at 10000; ACK at 17999 completes",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X({"a": J("active", ru=10000)}, fetched="a")),
   op(8000, "heartbeat", X({"a": J("active", attempt=1, ru=18000)}), id="a"),
   op(10000, "tick", X({"a": J("active", attempt=1, ru=18000, errs=[])})),
   op(17999, "ack", X({"a": J("completed", attempt=1, ru=None, errs=[])}), id="a")],
  flags=TF)
S(TM, "scn-tmo-0008", "RET-13", "ojs-retry 9.3", "Heartbeats at 5000, 12000, 20000 keep extending (15000, 22000, 30000) without touching attempt; silence then times out at 30000",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(5000, "heartbeat", X({"a": J("active", attempt=1, ru=15000)}), id="a"),
   op(12000, "heartbeat", X({"a": J("active", attempt=1, ru=22000)}), id="a"),
   op(20000, "heartbeat", X({"a": J("active", attempt=1, ru=30000)}), id="a"),
   op(29999, "tick", X({"a": J("active", attempt=1, ru=30000)})),
   op(30000, "tick", X({"a": J("retryable", attempt=1, nra=31000, errs=[T(1, 30000)])}))],
  covers=["RET-12"], flags=TF)
S(TM, "scn-tmo-0009", "RET-13", "ojs-retry 9.3", "A heartbeat at the deadline is too late: rejected, the job already timed out",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(10000, "heartbeat", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}, error="invalid_transition"), id="a")],
  covers=["RET-12"], flags=TF)
S(TM, "scn-tmo-0010", "RK-30", "ojs-retry 9.2", "Nothing happens between 0 and 60000: at 60000 the job has timed out at 10000, waited until 11000 and is available; the fetch is attempt 2",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(60000, "tick", X({"a": J("available", attempt=1, nra=None, ru=None, errs=[T(1, 10000)])})),
   fetch(60000, X({"a": J("active", attempt=2, ru=70000)}, fetched="a"))],
  covers=["RET-12", "CORE-T12"], flags=TF)
S(TM, "scn-tmo-0011", "RET-14", "ojs-retry 10", "Timeouts and handler failures share one history: timeout at 10000 (retry 11000), failure at 12000 (retry 12000 + 2s = 14000), timeout at 24000 exhausts",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(10000, "tick", X({"a": J("retryable", attempt=1, nra=11000)})),
   fetch(11000, X({"a": J("active", attempt=2, ru=21000)}, fetched="a")),
   fail(12000, "a", X({"a": J("retryable", attempt=2, nra=14000, errs=[T(1, 10000), E(2, "smtp.unavailable", "SMTP server unavailable", 12000)])})),
   fetch(14000, X({"a": J("active", attempt=3, ru=24000)}, fetched="a")),
   op(24000, "tick", X({"a": J("discarded", attempt=3, dl=False, errs=[T(1, 10000), E(2, "smtp.unavailable", "SMTP server unavailable", 12000), T(3, 24000)])}))],
  covers=["RET-12"], flags=TF)
S(TM, "scn-tmo-0012", "RET-12", "ojs-core 6.5", "Without a per-job visibility timeout the executor's default (config 5000 ms) applies",
  [enq(0, "a", X(), retry=P3), fetch(0, X({"a": J("active", ru=5000)}, fetched="a")),
   op(5000, "tick", X({"a": J("retryable", attempt=1, nra=6000, errs=[T(1, 5000)])}))],
  flags=TF, config={"visibility_timeout_ms": 5000})
S(TM, "scn-tmo-0013", "CORE-T10", "ojs-core 7.6", "A cancelled active job never times out",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(1000, "cancel", X({"a": J("cancelled", attempt=1, ru=None)}), id="a"),
   op(20000, "tick", X({"a": J("cancelled", attempt=1, errs=[])}))])
S(TM, "scn-tmo-0014", "RET-12", "ojs-retry 9.2", "An acknowledged job never times out: ACK at 9999, nothing at 20000",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(9999, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   op(20000, "tick", X({"a": J("completed", attempt=1, errs=[])}))],
  flags=TF)
S(TM, "scn-tmo-0015", "RET-13", "ojs-retry 9.3", "Each fetch starts a fresh reservation: refetched at 11000 after a timeout, a heartbeat at 20000 extends to 30000",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   fetch(11000, X({"a": J("active", attempt=2, ru=21000)}, fetched="a")),
   op(20000, "heartbeat", X({"a": J("active", attempt=2, ru=30000, errs=[T(1, 10000)])}), id="a")],
  covers=["RET-12"], flags=TF)

# ---- deadletter.json: dead letter set, manual retry, retention (ojs-dead-letter)
D = "deadletter"
def dead(at, jid, pol=P1DL, queue=None):
    """enqueue, fetch and fail jid at time at so that it is dead-lettered (P1DL)"""
    return [enq(at, jid, X(), retry=pol, queue=queue),
            fetch(at, X(fetched=jid), queue or "default"),
            fail(at, jid, X({jid: J("discarded", attempt=1, dl=True)}))]
e12 = [E(1, "smtp.unavailable", "SMTP server unavailable", 0), E(2, "smtp.unavailable", "SMTP server unavailable", 1000)]
S(D, "scn-dlq-0001", "DLQ-003", "ojs-dead-letter 6.1", "Manual retry of a dead-lettered job: available, attempt 0, errors kept, fresh retry budget (attempt 1 of 2 fails -> retryable at 5000 + 1s)",
  [enq(0, "a", X(), retry=P2DL), fetch(0, X(fetched="a")), fail(0, "a", X()),
   fetch(1000, X(fetched="a")), fail(1000, "a", X({"a": J("discarded", attempt=2, dl=True, errs=e12)})),
   op(5000, "retry", X({"a": J("available", attempt=0, nra=None, dl=False, errs=e12)}, counts={"dead_letter": 0, "available": 1}), id="a"),
   fetch(5000, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(5000, "a", X({"a": J("retryable", attempt=1, nra=6000, dl=False, errs=e12 + [E(1, "smtp.unavailable", "SMTP server unavailable", 5000)])}))],
  covers=["CORE-T17", "RK-33", "DLQ-002"], flags=["implementation-defined:manual-retry-errors"])
S(D, "scn-dlq-0002", "DLQ-R002", "ojs-dead-letter 6.3", "Manual retry with a policy override {max_attempts: 1}: the next failure is final and discards (the override's on_exhaustion is the default discard)",
  dead(0, "a") + [
   op(100, "retry", X({"a": J("available", attempt=0, dl=False)}), id="a", retry={"max_attempts": 1, "jitter": False}),
   fetch(100, X(fetched="a")),
   fail(200, "a", X({"a": J("discarded", attempt=1, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 0), E(1, "smtp.unavailable", "SMTP server unavailable", 200)])}))],
  covers=["DLQ-003", "CORE-T17"], flags=["implementation-defined:manual-retry-errors"])
S(D, "scn-dlq-0003", "RK-33", "ojs-dead-letter 6.1", "A plainly discarded job (not dead-lettered) can be retried manually too",
  [enq(0, "a", X(), retry=P1), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=False)})),
   op(100, "retry", X({"a": J("available", attempt=0, dl=False, errs=[F1])}), id="a")],
  covers=["CORE-T17"], flags=["implementation-defined:manual-retry-errors"])
S(D, "scn-dlq-0004", "CORE-T00", "ojs-core 6.4", "Manual retry of a retryable job (retryable -> available by hand) is rejected",
  [enq(0, "a", X(), retry=P3), fetch(0, X(fetched="a")), fail(0, "a", X()),
   op(100, "retry", X({"a": J("retryable", attempt=1, nra=1000)}, error="invalid_transition"), id="a")])
S(D, "scn-dlq-0005", "RET-16", "ojs-dead-letter 6.3", "Manual retry with an invalid override policy is rejected; the job stays dead-lettered",
  dead(0, "a") + [
   op(100, "retry", X({"a": J("discarded", attempt=1, dl=True)}, error="validation.retry_policy_invalid"), id="a", retry={"max_attempts": "3"})],
  covers=["DLQ-R002"])
S(D, "scn-dlq-0006", "DLQ-004", "ojs-dead-letter 5.1", "max_count 2: the third dead letter (at 2000) prunes the oldest (a, from 0)",
  dead(0, "a") + dead(1000, "b") + [
   op(1500, "tick", X({"a": J("discarded", dl=True), "b": J("discarded", dl=True)}, counts={"dead_letter": 2}))] + dead(2000, "c") + [
   op(2000, "tick", X({"b": J("discarded", dl=True), "c": J("discarded", dl=True)}, absent=["a"], counts={"dead_letter": 2, "discarded": 2}))],
  covers=["DLQ-005", "RK-34"], flags=["implementation-defined:retention"], config={"retention": {"max_count": 2}})
S(D, "scn-dlq-0007", "DLQ-005", "ojs-dead-letter 8.1", "max_age 10 s: dead-lettered at 0, still kept at exactly 10000, pruned at 10001 (strictly older)",
  dead(0, "a") + [
   op(10000, "tick", X({"a": J("discarded", dl=True)})),
   op(10001, "tick", X(absent=["a"], counts={"discarded": 0, "dead_letter": 0})),
   op(10002, "retry", X(error="not_found"), id="a")],
  covers=["DLQ-004", "RK-34"], flags=["implementation-defined:retention", "implementation-defined:error-classes"], config={"retention": {"max_age_ms": 10000}})
S(D, "scn-dlq-0008", "DLQ-004", "ojs-dead-letter 5.2", "Default retention max_age P180D = 180*86400000 = 15552000000 ms: kept at exactly that age, pruned 1 ms later",
  dead(0, "a") + [
   op(15552000000, "tick", X({"a": J("discarded", dl=True)})),
   op(15552000001, "tick", X(absent=["a"]))],
  covers=["DLQ-005", "RK-34"], flags=["implementation-defined:retention"])
S(D, "scn-dlq-0009", "RK-34", "ojs-dead-letter 4.2", "Retention applies to dead letters only: plain discarded jobs stay beyond max_count 1 and max_age 1 s",
  [enq(0, "a", X(), retry=P1), fetch(0, X(fetched="a")), fail(0, "a", X()),
   enq(0, "b", X(), retry=P1), fetch(0, X(fetched="b")), fail(0, "b", X()),
   op(100000, "tick", X({"a": J("discarded", dl=False), "b": J("discarded", dl=False)}, counts={"discarded": 2}))],
  covers=["RET-17"], flags=["implementation-defined:retention"], config={"retention": {"max_age_ms": 1000, "max_count": 1}})
S(D, "scn-dlq-0010", "DLQ-004", "ojs-dead-letter 6.1", "A manually retried job leaves the dead letter set: with max_count 2, after a is retried, dead-lettering c keeps b and c and a is untouched",
  dead(0, "a") + dead(1000, "b") + [
   op(2000, "retry", X({"a": J("available", attempt=0, dl=False)}), id="a")] + dead(3000, "c", queue="other") + [
   op(3000, "tick", X({"a": J("available", attempt=0, dl=False), "b": J("discarded", dl=True), "c": J("discarded", dl=True)}, counts={"dead_letter": 2}))],
  covers=["RK-34", "DLQ-003"], flags=["implementation-defined:retention"], config={"retention": {"max_count": 2}})
S(D, "scn-dlq-0011", "DLQ-004", "ojs-dead-letter 8.1", "Both limits: max_count 2 prunes a (from 0) when c arrives at 8000; max_age 10 s prunes b (from 5000) after 15000; c stays",
  dead(0, "a") + dead(5000, "b") + dead(8000, "c") + [
   op(8000, "tick", X({"b": J("discarded", dl=True), "c": J("discarded", dl=True)}, absent=["a"])),
   op(15000, "tick", X({"b": J("discarded", dl=True)})),
   op(15001, "tick", X({"c": J("discarded", dl=True)}, absent=["a", "b"], counts={"dead_letter": 1}))],
  covers=["DLQ-005", "RK-34"], flags=["implementation-defined:retention"], config={"retention": {"max_age_ms": 10000, "max_count": 2}})
P3DL = {"max_attempts": 3, "jitter": False, "on_exhaustion": "dead_letter"}
h3 = [E(1, "db.timeout", "query timed out", 0), E(2, "db.deadlock", "deadlock detected", 1000), E(3, "db.timeout", "query timed out", 3000)]
S(D, "scn-dlq-0012", "DLQ-002", "ojs-dead-letter 4.1", "A dead-lettered job keeps every error of every attempt (types differ per attempt)",
  [enq(0, "a", X(), retry=P3DL), fetch(0, X(fetched="a")),
   fail(0, "a", X(), typ="db.timeout", msg="query timed out"),
   fetch(1000, X(fetched="a")), fail(1000, "a", X(), typ="db.deadlock", msg="deadlock detected"),
   fetch(3000, X(fetched="a")),
   fail(3000, "a", X({"a": J("discarded", attempt=3, dl=True, errs=h3)}), typ="db.timeout", msg="query timed out")],
  covers=["RET-14", "RET-17", "RK-37"])
# RET-15: error history of 10 over 12 attempts, constant 1 s backoff: attempt k fails at (k-1)*1000.
POLH = {"max_attempts": 12, "initial_interval": "PT1S", "backoff_strategy": "none", "jitter": False}
steps = [enq(0, "a", X(), retry=POLH)]
hist = []
for k in range(1, 13):
    t = (k - 1) * 1000
    hist.append(E(k, "smtp.unavailable", "failure %d" % k, t))
    keep = hist[-10:]
    steps.append(fetch(t, X({"a": J("active", attempt=k)}, fetched="a")))
    if k < 12:
        steps.append(fail(t, "a", X({"a": J("retryable", attempt=k, nra=t + 1000, errs=keep)}), msg="failure %d" % k))
    else:
        steps.append(fail(t, "a", X({"a": J("discarded", attempt=12, dl=False, errs=keep)}), msg="failure %d" % k))
S(D, "scn-dlq-0013", "RET-15", "ojs-retry 10.1", "error_history 10 over 12 failed attempts (constant 1 s: attempt k fails at (k-1)*1000): the history keeps attempts 3..12, oldest first",
  steps, covers=["RET-14", "RK-37"], flags=["implementation-defined:error-history-size", "extension:backoff_strategy"], config={"error_history": 10})

# ---- queues.json: paused queues (operator extension)
Q = "queues"
QF = ["implementation-defined:paused-queue"]
S(Q, "scn-que-0001", "RK-36", "ojs-core 7.2", "A paused queue is not fetched from; after resume its job is fetched",
  [op(0, "pause", X(), queue="q"),
   enq(0, "a", X({"a": J("available", attempt=0)}), queue="q"),
   fetch(10, X({"a": J("available", attempt=0)}, fetched=None), "q"),
   op(100, "resume", X(), queue="q"),
   fetch(100, X({"a": J("active", attempt=1)}, fetched="a"), "q")],
  flags=QF)
S(Q, "scn-que-0002", "RK-36", "ojs-retry 9.1", "A retryable job of a paused queue becomes available at next_retry_at (1000) but is only fetched after resume",
  [enq(0, "a", X(), retry=P3, queue="q"), fetch(0, X(fetched="a"), "q"), fail(0, "a", X()),
   op(500, "pause", X({"a": J("retryable", attempt=1, nra=1000)}), queue="q"),
   op(1000, "tick", X({"a": J("available", attempt=1, nra=None)})),
   fetch(1000, X(fetched=None), "q"),
   op(2000, "resume", X(), queue="q"),
   fetch(2000, X({"a": J("active", attempt=2)}, fetched="a"), "q")],
  covers=["CORE-T12"], flags=QF)
S(Q, "scn-que-0003", "RK-36", "ojs-retry 9.2", "Pausing does not stop reservations: the active job of a paused queue times out at 10000",
  [enq(0, "a", X(), retry=P3, queue="q", vis=10000), fetch(0, X(fetched="a"), "q"),
   op(1, "pause", X(), queue="q"),
   op(10000, "tick", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}))],
  covers=["RET-12"], flags=QF + ["implementation-defined:timeout-transition"])
S(Q, "scn-que-0004", "RK-36", "ojs-core 7.2", "FETCH over [p, q] with p paused skips p and serves q",
  [op(0, "pause", X(), queue="p"),
   enq(0, "a", X(), queue="p"), enq(0, "b", X(), queue="q"),
   fetch(0, X({"a": J("available"), "b": J("active", attempt=1)}, fetched="b"), "p", "q"),
   fetch(0, X(fetched=None), "p", "q")],
  covers=["CORE-F01"], flags=QF)
S(Q, "scn-que-0005", "RK-36", "ojs-core 6.3", "A scheduled job of a paused queue becomes available at 5000 and waits for resume",
  [op(0, "pause", X(), queue="q"),
   enq(0, "a", X({"a": J("scheduled")}), queue="q", sched=5000),
   op(5000, "tick", X({"a": J("available", attempt=0)})),
   fetch(5000, X(fetched=None), "q"),
   op(6000, "resume", X(), queue="q"),
   fetch(6000, X(fetched="a"), "q")],
  covers=["CORE-T04"], flags=QF)
S(Q, "scn-que-0006", "RK-36", "ojs-core 7.3", "ACK and FAIL of jobs already active in a paused queue still work",
  [enq(0, "a", X(), retry=P3, queue="q"), enq(0, "b", X(), retry=P3, queue="q"),
   fetch(0, X(fetched="a"), "q"), fetch(0, X(fetched="b"), "q"),
   op(10, "pause", X(), queue="q"),
   op(20, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   fail(20, "b", X({"b": J("retryable", attempt=1, nra=1020)}))],
  flags=QF)
S(Q, "scn-que-0007", "RK-36", "ojs-core 7.6", "Cancel works in a paused queue; resume then finds nothing to fetch",
  [op(0, "pause", X(), queue="q"), enq(0, "a", X(), queue="q"),
   op(10, "cancel", X({"a": J("cancelled", attempt=0)}), id="a"),
   op(20, "resume", X(), queue="q"), fetch(20, X(fetched=None), "q")],
  covers=["CORE-T14"], flags=QF)

# ---- deliveries.json: delivery-scoped ack, fail and heartbeat (RK-38 .. RK-40, RK-43, RK-45)
DV = "deliveries"
DF = ["implementation-defined:delivery", "implementation-defined:timeout-transition"]
# A: fetched at 0 (delivery 1), reservation 10 s, timed out at 10000 (retry at 11000);
# B: fetched at 11000 (delivery 2, attempt 2), reservation until 21000.
REDELIVERED = [enq(0, "a", X(), retry=P3, vis=10000),
               fetch(0, X({"a": J("active", attempt=1, ru=10000)}, fetched="a")),
               fetch(11000, X({"a": J("active", attempt=2, ru=21000, errs=[T(1, 10000)])}, fetched="a"))]
S(DV, "scn-dlv-0001", "RK-38", "ojs-retry 9.2", "Stale ACK after redelivery: A's ACK (delivery 1) at 12000, after B fetched the job at 11000, is rejected and changes nothing; B's ACK (delivery 2) completes attempt 2",
  REDELIVERED + [
   op(12000, "ack", X({"a": J("active", attempt=2, ru=21000, errs=[T(1, 10000)])}, error="stale_delivery"), id="a", delivery=1),
   op(12000, "ack", X({"a": J("completed", attempt=2, ru=None, errs=[T(1, 10000)])}), id="a", delivery=2)],
  covers=["RET-12"], flags=DF)
S(DV, "scn-dlv-0002", "RK-38", "ojs-retry 9.2", "Stale FAIL after redelivery does not use up B's attempt: rejected at 12000; B's own FAIL at 13000 is attempt 2, retryable at 13000 + 2s = 15000",
  REDELIVERED + [
   fail(12000, "a", X({"a": J("active", attempt=2, ru=21000, errs=[T(1, 10000)])}, error="stale_delivery"), delivery=1),
   fail(13000, "a", X({"a": J("retryable", attempt=2, nra=15000, ru=None, errs=[T(1, 10000), E(2, "smtp.unavailable", "SMTP server unavailable", 13000)])}))],
  covers=["RET-12", "RET-14"], flags=DF)
S(DV, "scn-dlv-0003", "RK-38", "ojs-retry 9.3", "Stale heartbeat after redelivery does not extend B's lease: rejected at 15000, B's reservation still ends at 21000 (attempt 2 times out, retry at 21000 + 2s)",
  REDELIVERED + [
   op(15000, "heartbeat", X({"a": J("active", attempt=2, ru=21000)}, error="stale_delivery"), id="a", delivery=1),
   op(20999, "tick", X({"a": J("active", attempt=2, ru=21000)})),
   op(21000, "tick", X({"a": J("retryable", attempt=2, nra=23000, errs=[T(1, 10000), T(2, 21000)])}))],
  covers=["RET-13", "RET-12"], flags=DF)
# A: fetched at 0 (delivery 1) under max_attempts 1, timed out at 10000 -> discarded;
# manual retry at 11000 (attempt back to 0); B: fetched at 11000 (delivery 2), attempt 1 again.
RETRIED = [enq(0, "a", X(), retry=P1, vis=10000),
           fetch(0, X({"a": J("active", attempt=1, ru=10000)}, fetched="a")),
           op(10000, "tick", X({"a": J("discarded", attempt=1, dl=False, errs=[T(1, 10000)])})),
           op(11000, "retry", X({"a": J("available", attempt=0)}), id="a"),
           fetch(11000, X({"a": J("active", attempt=1, ru=21000, errs=[T(1, 10000)])}, fetched="a"))]
DMF = DF + ["implementation-defined:manual-retry-errors"]
S(DV, "scn-dlv-0004", "RK-39", "ojs-dead-letter 6.1", "Stale ACK across a manual retry: A and B both run attempt 1, only the delivery differs; A's ACK (delivery 1) is rejected, B's ACK completes",
  RETRIED + [
   op(12000, "ack", X({"a": J("active", attempt=1, ru=21000, errs=[T(1, 10000)])}, error="stale_delivery"), id="a", delivery=1),
   op(12000, "ack", X({"a": J("completed", attempt=1, errs=[T(1, 10000)])}), id="a")],
  covers=["DLQ-003", "RK-33"], flags=DMF)
S(DV, "scn-dlv-0005", "RK-39", "ojs-dead-letter 6.1", "Stale FAIL across a manual retry is rejected and not recorded; B's FAIL (delivery 2) at 13000 exhausts max_attempts 1: discarded with both entries",
  RETRIED + [
   fail(12000, "a", X({"a": J("active", attempt=1, ru=21000, errs=[T(1, 10000)])}, error="stale_delivery"), delivery=1),
   fail(13000, "a", X({"a": J("discarded", attempt=1, dl=False, errs=[T(1, 10000), E(1, "smtp.unavailable", "SMTP server unavailable", 13000)])}), delivery=2)],
  covers=["DLQ-003", "RK-33"], flags=DMF)
S(DV, "scn-dlv-0006", "RK-39", "ojs-dead-letter 6.1", "Stale heartbeat across a manual retry does not extend B's lease: B's reservation ends at 21000 and the job is discarded again",
  RETRIED + [
   op(15000, "heartbeat", X({"a": J("active", attempt=1, ru=21000)}, error="stale_delivery"), id="a", delivery=1),
   op(21000, "tick", X({"a": J("discarded", attempt=1, errs=[T(1, 10000), T(1, 21000)])}))],
  covers=["DLQ-003", "RET-13"], flags=DMF)
S(DV, "scn-dlv-0007", "RK-40", "ojs-retry 9.2", "The latest holder answering late (reservation expired at 10000, not yet fetched again) gets invalid_transition; once B fetched the job at 11000 the same ACK is stale_delivery; a job never fetched gets invalid_transition",
  [enq(0, "a", X(), retry=P3, vis=10000), enq(0, "b", X(), queue="other"),
   fetch(0, X(fetched="a")),
   op(10500, "ack", X({"a": J("retryable", attempt=1, nra=11000, errs=[T(1, 10000)])}, error="invalid_transition"), id="a", delivery=1),
   fetch(11000, X({"a": J("active", attempt=2, ru=21000)}, fetched="a")),
   op(11500, "ack", X({"a": J("active", attempt=2, ru=21000)}, error="stale_delivery"), id="a", delivery=1),
   op(11500, "ack", X({"b": J("available", attempt=0)}, error="invalid_transition"), id="b")],
  covers=["RK-31", "RET-12"], flags=DF + ["implementation-defined:boundary"])
S(DV, "scn-dlv-0008", "RK-43", "ojs-retry 9.3", "A reservation that would end after the last representable instant saturates there: fetched at MaxAtMs - 5000 with 10 s, it is reserved until MaxAtMs (7456146436854) and still active then, never ending at its start",
  [enq(0, "a", X(), retry=P3, vis=10000),
   fetch(7456146431854, X({"a": J("active", attempt=1, ru=7456146436854)}, fetched="a")),
   op(7456146436854, "tick", X({"a": J("active", attempt=1, ru=7456146436854, errs=[])})),
   op(7456146436854, "heartbeat", X({"a": J("active", attempt=1, ru=7456146436854)}), id="a", delivery=1),
   op(7456146436854, "ack", X({"a": J("completed", attempt=1, errs=[])}), id="a", delivery=1)],
  covers=["RET-13"], flags=["implementation-defined:delivery", "implementation-defined:boundary"])
S(DV, "scn-dlv-0009", "RK-45", "ojs-core 7.6", "Cancelling an active job ends its delivery at once: the holder's heartbeat and FAIL are rejected (invalid_transition) and nothing is recorded",
  [enq(0, "a", X(), retry=P3, vis=10000), fetch(0, X(fetched="a")),
   op(1000, "cancel", X({"a": J("cancelled", attempt=1, ru=None)}), id="a"),
   op(1000, "heartbeat", X({"a": J("cancelled", attempt=1, ru=None)}, error="invalid_transition"), id="a", delivery=1),
   fail(2000, "a", X({"a": J("cancelled", attempt=1, errs=[])}, error="invalid_transition"), delivery=1),
   op(20000, "tick", X({"a": J("cancelled", attempt=1, errs=[])}))],
  covers=["CORE-T10"], flags=["implementation-defined:delivery"])

# ---- finished.json: retention of finished jobs and delete (RK-41, RK-42)
FN = "finished"
RF = ["implementation-defined:retention"]
def done(at, jid, queue="q"):
    """enqueue, fetch and acknowledge jid at time at"""
    return [enq(at, jid, X(), queue=queue), fetch(at, X(fetched=jid), queue),
            op(at, "ack", X({jid: J("completed", attempt=1)}), id=jid)]
S(FN, "scn-fin-0001", "RK-41", "ojs-dead-letter 5.1", "finished_retention max_count 2 counts per queue and state: the third completed job of q (c at 2000) prunes the oldest (a); r's completed job and q's cancelled job are not counted with them",
  done(0, "a") + done(1000, "b") + done(1500, "d", queue="r") + [
   enq(1800, "e", X(), queue="q"), op(1800, "cancel", X({"e": J("cancelled")}), id="e")] + done(2000, "c") + [
   op(2000, "tick", X({"b": J("completed"), "c": J("completed"), "d": J("completed"), "e": J("cancelled")}, absent=["a"], counts={"completed": 3, "cancelled": 1}))],
  flags=RF, config={"finished_retention": {"max_count": 2}})
S(FN, "scn-fin-0002", "RK-41", "ojs-dead-letter 8.1", "finished_retention max_age 10 s: a completed and b plainly discarded at 0 are kept at exactly 10000 and pruned at 10001; the dead letter c follows the dead-letter retention (default P180D) and stays",
  done(0, "a") + [
   enq(0, "b", X(), retry=P1, queue="q"), fetch(0, X(fetched="b"), "q"), fail(0, "b", X({"b": J("discarded", dl=False)})),
   enq(0, "c", X(), retry=P1DL, queue="q"), fetch(0, X(fetched="c"), "q"), fail(0, "c", X({"c": J("discarded", dl=True)})),
   op(10000, "tick", X({"a": J("completed"), "b": J("discarded", dl=False), "c": J("discarded", dl=True)})),
   op(10001, "tick", X({"c": J("discarded", dl=True)}, absent=["a", "b"], counts={"completed": 0, "discarded": 1, "dead_letter": 1}))],
  covers=["RK-34"], flags=RF, config={"finished_retention": {"max_age_ms": 10000}})
S(FN, "scn-fin-0003", "RK-41", "ojs-dead-letter 5.2", "Default finished_retention max_age is 24 h = 86400000 ms: a job completed at 0 is kept at exactly 86400000 and pruned 1 ms later",
  done(0, "a") + [
   op(86400000, "tick", X({"a": J("completed", attempt=1)})),
   op(86400001, "tick", X(absent=["a"], counts={"completed": 0}))],
  flags=RF)
S(FN, "scn-fin-0004", "RK-42", "ojs-core 6.3", "delete removes a finished job at once and refuses an unfinished one: available and active are invalid_transition, completed is deleted, a second delete is not_found, and the id can be enqueued again",
  [enq(0, "a", X()),
   op(0, "delete", X({"a": J("available")}, error="invalid_transition"), id="a"),
   fetch(0, X(fetched="a")),
   op(0, "delete", X({"a": J("active", attempt=1)}, error="invalid_transition"), id="a"),
   op(10, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   op(20, "delete", X(absent=["a"], counts={"completed": 0}), id="a"),
   op(30, "delete", X(error="not_found"), id="a"),
   enq(40, "a", X({"a": J("available", attempt=0, errs=[])})),
   fetch(50, X({"a": J("active", attempt=1)}, fetched="a"))],
  flags=["implementation-defined:delete", "implementation-defined:error-classes"])
S(FN, "scn-fin-0005", "RK-42", "ojs-dead-letter 6.1", "delete of a dead letter takes it out of the dead letter set; delete of a cancelled job works too; a retryable job is refused",
  [enq(0, "a", X(), retry=P1DL), fetch(0, X(fetched="a")), fail(0, "a", X({"a": J("discarded", dl=True)})),
   enq(0, "b", X(), pending=True), op(0, "cancel", X({"b": J("cancelled")}), id="b"),
   enq(0, "c", X(), retry=P3), fetch(0, X(fetched="c")), fail(0, "c", X({"c": J("retryable", attempt=1, nra=1000)})),
   op(100, "delete", X(absent=["a"], counts={"dead_letter": 0, "discarded": 0}), id="a"),
   op(100, "delete", X(absent=["b"], counts={"cancelled": 0}), id="b"),
   op(100, "delete", X({"c": J("retryable", attempt=1, nra=1000)}, error="invalid_transition"), id="c")],
  covers=["DLQ-003"], flags=["implementation-defined:delete"])


# ---- expiry.json: start deadlines, expires_at (ojs-core 5.2) and enqueue TTL (ojs-timeouts 5.3)
XP = "expiry"
XF = ["extension:expiry"]
S(XP, "scn-exp-0001", "CORE-X01", "ojs-core 5.2", "expires_at 2000: the job waits until 2000 (a FETCH at 2000 would still get it) and is discarded at 2001 without running, with no error entry",
  [enq(0, "a", X({"a": J("available", attempt=0)}), expires=2000),
   op(2000, "tick", X({"a": J("available", attempt=0)})),
   op(2001, "tick", X({"a": J("discarded", attempt=0, dl=False, errs=[])}, counts={"discarded": 1})),
   fetch(2001, X(fetched=None))],
  flags=XF + ["implementation-defined:boundary"])
S(XP, "scn-exp-0002", "CORE-X01", "ojs-core 5.2", "A FETCH at the expires_at instant (2000) claims the job; its attempt runs past the deadline and completes",
  [enq(0, "a", X(), expires=2000),
   fetch(2000, X({"a": J("active", attempt=1)}, fetched="a")),
   op(5000, "ack", X({"a": J("completed", attempt=1)}), id="a")],
  flags=XF + ["implementation-defined:boundary"])
S(XP, "scn-exp-0003", "CORE-X01", "ojs-core 5.2", "expires_at bounds retries: failed at 0 with P3 (retry due 1000), expires_at 500 discards the retryable job at 501",
  [enq(0, "a", X(), retry=P3, expires=500), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   op(500, "tick", X({"a": J("retryable", attempt=1, nra=1000)})),
   op(501, "tick", X({"a": J("discarded", attempt=1, nra=None, dl=False, errs=[F1])})),
   fetch(1000, X(fetched=None))],
  flags=XF)
S(XP, "scn-exp-0004", "CORE-X01", "ojs-core 5.2", "An attempt that fails past expires_at (deadline 1000, failure at 3000) with retries left is discarded at once, not made retryable",
  [enq(0, "a", X(), retry=P3, expires=1000), fetch(0, X(fetched="a")),
   fail(3000, "a", X({"a": J("discarded", attempt=1, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 3000)])}))],
  flags=XF)
S(XP, "scn-exp-0005", "CORE-X01", "ojs-core 5.2", "A scheduled job whose scheduled_at (3000) is past its expires_at (2000) never becomes available: discarded at 2001; a pending one likewise",
  [enq(0, "s", X({"s": J("scheduled")}), sched=3000, expires=2000),
   enq(0, "p", X({"p": J("pending")}), pending=True, expires=2000),
   op(2001, "tick", X({"s": J("discarded", attempt=0), "p": J("discarded", attempt=0)})),
   op(3000, "tick", X({"s": J("discarded", attempt=0)})),
   op(3000, "activate", X(error="invalid_transition"), id="p")],
  covers=["CORE-T00"], flags=XF + ["implementation-defined:error-classes"])
S(XP, "scn-exp-0006", "CORE-X01", "ojs-core 5.2", "A job enqueued at 5000 with expires_at 1000, already past, is discarded at once",
  [enq(5000, "a", X({"a": J("discarded", attempt=0, errs=[])}), expires=1000),
   fetch(5000, X(fetched=None))],
  flags=XF)
S(XP, "scn-exp-0007", "CORE-X02", "ojs-timeouts 5.3", "enqueue_ttl 30000 counted from the enqueue at 1000: waiting at 31000, discarded at 31001",
  [enq(1000, "a", X(), ttl=30000),
   op(31000, "tick", X({"a": J("available", attempt=0)})),
   op(31001, "tick", X({"a": J("discarded", attempt=0, errs=[])})),
   fetch(31001, X(fetched=None))],
  flags=XF + ["implementation-defined:boundary"])
S(XP, "scn-exp-0008", "CORE-X02", "ojs-timeouts 5.3", "enqueue_ttl bounds only the first start: started at 0, failed, the retry due at 60000 runs although the TTL (30000) has run out",
  [enq(0, "a", X(), retry={"max_attempts": 3, "initial_interval": "PT1M", "jitter": False}, ttl=30000),
   fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("retryable", attempt=1, nra=60000)})),
   op(30001, "tick", X({"a": J("retryable", attempt=1, nra=60000)})),
   fetch(60000, X({"a": J("active", attempt=2)}, fetched="a"))],
  flags=XF)
S(XP, "scn-exp-0009", "CORE-X02", "ojs-timeouts 5.3", "The earlier deadline wins: enqueue_ttl 2000 before expires_at 5000 discards at 2001; a manual retry then clears both and the job is fetched at 9000",
  [enq(0, "a", X(), ttl=2000, expires=5000),
   op(2001, "tick", X({"a": J("discarded", attempt=0)})),
   op(3000, "retry", X({"a": J("available", attempt=0)}), id="a"),
   fetch(9000, X({"a": J("active", attempt=1)}, fetched="a"))],
  covers=["CORE-X01", "CORE-T17"], flags=XF + ["implementation-defined:manual-retry-errors"])

# ---- lifecycle.json (continued): limits on caller data (RK-46)
LIM = ["implementation-defined:limits", "implementation-defined:error-classes"]
S(L, "scn-core-0027", "RK-46", "ojs-core 7.1", "Job id limit: an id of 256 bytes is invalid_request and creates nothing; 255 bytes is accepted",
  [enq(0, "i" * 256, X(absent=["i" * 256], counts={"available": 0}, error="invalid_request")),
   enq(0, "i" * 255, X({"i" * 255: A0("available")}, counts={"available": 1}))],
  flags=LIM)
S(L, "scn-core-0028", "RK-46", "ojs-core 7.1", "Job type and queue limits: a 256-byte type or queue name is invalid_request and creates nothing; 255 bytes each is accepted",
  [enq(0, "a", X(absent=["a"], error="invalid_request"), typ="t" * 256),
   enq(0, "b", X(absent=["b"], error="invalid_request"), queue="q" * 256),
   enq(0, "c", X({"c": A0("available")}), typ="t" * 255, queue="q" * 255)],
  flags=LIM)
S(L, "scn-core-0029", "RK-46", "ojs-retry 10.1", "A failure is never refused for its message: a 5000-byte message is recorded as its first 4093 bytes and U+2026 (4096 bytes); a 1025-byte error type is invalid_request and uses up nothing",
  [enq(0, "a", X(), retry={"max_attempts": 3, "initial_interval": "PT1S", "jitter": False}), fetch(0, X(fetched="a")),
   fail(100, "a", X({"a": J("active", attempt=1, errs=[])}, error="invalid_request"), typ="e" * 1025),
   fail(100, "a", X({"a": J("retryable", attempt=1, nra=1100, errs=[E(1, "smtp.unavailable", "m" * 4093 + "\u2026", 100)])}), msg="m" * 5000)],
  covers=["RET-14"], flags=LIM)


# ---- lifecycle.json (continued): priority (ojs-core 5)
PF = ["extension:priority"]
S(L, "scn-core-0030", "CORE-F04", "ojs-core 5", "Higher priority is fetched first, FIFO among equals: a(0) b(10) c(0) d(-10) e(10) come out b e a c d (ojs-core 5: higher values MUST be fetched before lower ones, equal ones in FIFO order)",
  [enq(0, "a", X(), prio=0), enq(1, "b", X(), prio=10), enq(2, "c", X()), enq(3, "d", X(), prio=-10), enq(4, "e", X(), prio=10),
   fetch(5, X(fetched="b")), fetch(5, X(fetched="e")), fetch(5, X(fetched="a")), fetch(5, X(fetched="c")),
   fetch(5, X(fetched="d")), fetch(5, X(fetched=None))],
  covers=["CORE-F03"], flags=PF)
S(L, "scn-core-0031", "CORE-F04", "ojs-core 5", "A job back from its backoff joins the tail of its own priority: r(5) fails at 0 (retry at 1000); p5(5), p0(0), p9(9) enqueued meanwhile; from 1000 the order is p9, p5, r, p0",
  [enq(0, "r", X(), prio=5, retry={"max_attempts": 3, "initial_interval": "PT1S", "jitter": False}), fetch(0, X(fetched="r")),
   fail(0, "r", X({"r": J("retryable", attempt=1, nra=1000)})),
   enq(10, "p5", X(), prio=5), enq(20, "p0", X()), enq(30, "p9", X(), prio=9),
   fetch(1000, X(fetched="p9")), fetch(1000, X(fetched="p5")), fetch(1000, X({"r": J("active", attempt=2)}, fetched="r")),
   fetch(1000, X(fetched="p0"))],
  covers=["CORE-T12"], flags=PF)
S(L, "scn-core-0032", "CORE-F04", "ojs-core 5", "Priority orders jobs within a queue only: queues are still checked left to right, so the low-priority job of the first listed queue comes before the high-priority one of the second",
  [enq(0, "h", X(), queue="second", prio=10), enq(1, "l", X(), queue="first", prio=-10),
   fetch(2, X(fetched="l"), "first", "second"), fetch(2, X(fetched="h"), "first", "second")],
  covers=["CORE-F01"], flags=PF)
S(L, "scn-core-0033", "CORE-F04", "ojs-core 5", "A scheduled job of high priority becomes available at its time and goes before the normal jobs that waited longer",
  [enq(0, "s", X(), sched=1000, prio=10), enq(1, "a", X()), enq(2, "b", X()),
   fetch(999, X(fetched="a")), fetch(1000, X({"s": J("active", attempt=1)}, fetched="s")), fetch(1000, X(fetched="b"))],
  covers=["CORE-T04"], flags=PF)

# ---- budgets.json: time budgets of ojs-timeouts (execution, heartbeat, total timeouts; section 9.1)
B = "budgets"
BF = ["extension:timeouts"]
BB = BF + ["implementation-defined:boundary"]


def TE(attempt, typ, kind, at):
    """A budget expiry entry: error type and timeout_kind of ojs-timeouts 8, code RETRY."""
    return {"attempt": attempt, "type": typ, "code": "RETRY", "at_ms": at, "timeout_kind": kind}


def budget_job(at, jid, expect, timeouts, retry=P3, queue=None):
    st = enq(at, jid, expect, retry=retry, queue=queue)
    st["job"]["timeouts"] = timeouts
    return st


# Execution timeout: limit passes when now - started_at > timeout + grace_period (ojs-timeouts 7.1).
TO1 = {"timeout": 30, "grace_period": 5, "heartbeat_timeout": 600}
EXEC1 = 0 + (30 + 5) * 1000 + 1          # first millisecond past the limit of the attempt started at 0: 35001
RETRY1 = EXEC1 + 1000                     # P3 first delay 1 s: 36001
EXEC2 = RETRY1 + (30 + 5) * 1000 + 1      # attempt 2 started at 36001: 71002
S(B, "scn-bud-0001", "TMO-01", "ojs-timeouts 7.1", "Execution timeout 30 s + grace 5 s, attempt started at 0: still active at 35000, failed at 35001 with type timeout (timeout_kind execution) as attempt 1 and retried after P3's 1 s at 36001; the refetch is attempt 2, reserved until 36001 + 35000 + 1 = 71002",
  [budget_job(0, "a", X({"a": J("available", attempt=0)}), TO1),
   fetch(0, X({"a": J("active", attempt=1, ru=EXEC1)}, fetched="a")),
   op(EXEC1 - 1, "tick", X({"a": J("active", attempt=1, ru=EXEC1, errs=[])})),
   op(EXEC1, "tick", X({"a": J("retryable", attempt=1, nra=RETRY1, ru=None, dl=False, errs=[TE(1, "timeout", "execution", EXEC1)])})),
   fetch(RETRY1, X({"a": J("active", attempt=2, ru=EXEC2)}, fetched="a")),
   op(40000, "ack", X({"a": J("completed", attempt=2, errs=[TE(1, "timeout", "execution", EXEC1)])}), id="a")],
  covers=["TMO-06", "TMO-07", "TMO-08", "RK-216", "RK-226"], flags=BB)

# Stall: limit passes when now - last_heartbeat > heartbeat_timeout (ojs-timeouts 7.3).
TO2 = {"timeout": 600, "heartbeat_timeout": 60}
BEAT = 50000
STALL = BEAT + 60 * 1000 + 1              # 110001
RETRY2 = STALL + 1000                     # 111001
S(B, "scn-bud-0002", "TMO-04", "ojs-timeouts 7.3", "heartbeat_timeout 60 s: reserved until 60001 after the fetch at 0, a heartbeat at 50000 moves it to 110001; silent since, the job is active at 110000 and stalled at 110001: attempt 1 failed with type stalled, retried at 111001 (P3 1 s), refetched as attempt 2 reserved until 111001 + 60001",
  [budget_job(0, "a", X(), TO2),
   fetch(0, X({"a": J("active", attempt=1, ru=0 + 60 * 1000 + 1)}, fetched="a")),
   op(BEAT, "heartbeat", X({"a": J("active", attempt=1, ru=STALL)}), id="a"),
   op(STALL - 1, "tick", X({"a": J("active", attempt=1, ru=STALL, errs=[])})),
   op(STALL, "tick", X({"a": J("retryable", attempt=1, nra=RETRY2, ru=None, errs=[TE(1, "stalled", "stalled", STALL)])})),
   fetch(RETRY2, X({"a": J("active", attempt=2, ru=RETRY2 + 60 * 1000 + 1)}, fetched="a"))],
  covers=["TMO-07", "RK-216", "RK-226"], flags=BB)

# total_timeout 20 s from created_at 0; timeout 10 s (section 9.1 allows the retry at 5000: 20000 >= 5000 + 1000 + 10000).
TO3 = {"timeout": 10, "total_timeout": 20, "heartbeat_timeout": 600}
TOTAL3 = 0 + 20 * 1000 + 1                # 20001
S(B, "scn-bud-0003", "TMO-02", "ojs-timeouts 5.2", "total_timeout precedes max_attempts: P5 (5 attempts), total 20 s from 0; attempt 1 fails at 5000 (retry at 6000: 0 + 20000 >= 5000 + 1000 + 10000), attempt 2 starts at 6000 and is reserved until 20001 (before 6000 + 40001); at 20001 the job is discarded with 3 attempts left, type total_timeout",
  [budget_job(0, "a", X(), TO3, retry=P5), fetch(0, X(fetched="a")),
   fail(5000, "a", X({"a": J("retryable", attempt=1, nra=6000)})),
   fetch(6000, X({"a": J("active", attempt=2, ru=TOTAL3)}, fetched="a")),
   op(TOTAL3 - 1, "tick", X({"a": J("active", attempt=2, ru=TOTAL3)})),
   op(TOTAL3, "tick", X({"a": J("discarded", attempt=2, nra=None, ru=None, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 5000), TE(2, "total_timeout", "total", TOTAL3)])}, counts={"discarded": 1}))],
  covers=["RK-217", "RK-226", "TMO-07"], flags=BB)
S(B, "scn-bud-0004", "TMO-02", "ojs-timeouts 5.2", "The same with on_exhaustion dead_letter: the total timeout at 20001 dead-letters the job with 3 of its 5 attempts left",
  [budget_job(0, "a", X(), TO3, retry={"max_attempts": 5, "initial_interval": "PT1S", "jitter": False, "on_exhaustion": "dead_letter"}),
   fetch(0, X(fetched="a")),
   fail(5000, "a", X({"a": J("retryable", attempt=1, nra=6000)})),
   fetch(6000, X(fetched="a")),
   op(TOTAL3, "tick", X({"a": J("discarded", attempt=2, dl=True, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", 5000), TE(2, "total_timeout", "total", TOTAL3)])}, counts={"dead_letter": 1}))],
  covers=["RK-217", "DLQ-001"], flags=BB)

# Section 9.1 boundary: discard now when created_at + total_timeout < now + backoff_delay + timeout.
# total 60 s, timeout 10 s, first delay 1 s: a failure at t is retried while 60000 >= t + 1000 + 10000, i.e. t <= 49000.
TO4 = {"timeout": 10, "total_timeout": 60, "heartbeat_timeout": 600}
LAST_OK = 0 + 60 * 1000 - 1000 - 10 * 1000   # 49000
S(B, "scn-bud-0005", "TMO-03", "ojs-timeouts 9.1", "Section 9.1 boundary (RK-215, strict): total 60 s, timeout 10 s, delay 1 s. a fails at 49000 (60000 < 49000 + 1000 + 10000 is false): retryable at 50000; b fails 1 ms later and c 1 s later: discarded now, with only their own failure recorded (RK-220)",
  [budget_job(0, "a", X(), TO4, retry=P5), budget_job(0, "b", X(), TO4, retry=P5), budget_job(0, "c", X(), TO4, retry=P5),
   fetch(30000, X(fetched="a")), fetch(30000, X(fetched="b")), fetch(30000, X(fetched="c")),
   fail(LAST_OK, "a", X({"a": J("retryable", attempt=1, nra=LAST_OK + 1000, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", LAST_OK)])})),
   fail(LAST_OK + 1, "b", X({"b": J("discarded", attempt=1, nra=None, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", LAST_OK + 1)])})),
   fail(LAST_OK + 1000, "c", X({"c": J("discarded", attempt=1, nra=None, dl=False, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", LAST_OK + 1000)])})),
   fetch(LAST_OK + 1000, X({"a": J("active", attempt=2, ru=60 * 1000 + 1)}, fetched="a")),
   op(55000, "ack", X({"a": J("completed", attempt=2)}), id="a")],
  covers=["RK-215", "RK-220"], flags=BB)
S(B, "scn-bud-0006", "TMO-03", "ojs-timeouts 9.1", "Section 9.1 against the dead letter action: on_exhaustion dead_letter, the failure at 50000 (60000 < 50000 + 1000 + 10000) dead-letters the job at once",
  [budget_job(0, "a", X(), TO4, retry={"max_attempts": 5, "initial_interval": "PT1S", "jitter": False, "on_exhaustion": "dead_letter"}),
   fetch(30000, X(fetched="a")),
   fail(LAST_OK + 1000, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[E(1, "smtp.unavailable", "SMTP server unavailable", LAST_OK + 1000)])}))],
  covers=["RK-215", "RK-217"], flags=BB)

# A job waiting past its total timeout: retry due at 2000, nobody fetches until after 0 + 30000.
TO5 = {"timeout": 10, "total_timeout": 30, "heartbeat_timeout": 600}
S(B, "scn-bud-0007", "TMO-02", "ojs-timeouts 5.2", "A job still waiting when its total timeout (30 s from 0) has passed never runs again: failed at 1000 (retry at 2000: 30000 >= 1000 + 1000 + 10000), not fetched until 30001; that fetch discards it and claims b, which has no budget",
  [budget_job(0, "a", X(), TO5), fetch(0, X(fetched="a")),
   fail(1000, "a", X({"a": J("retryable", attempt=1, nra=2000)})),
   enq(25000, "b", X()),
   op(30000, "tick", X({"a": J("available", attempt=1)})),
   fetch(30001, X({"a": J("discarded", attempt=1, dl=False), "b": J("active", attempt=1)}, fetched="b")),
   fetch(30001, X(fetched=None))],
  covers=["RK-226", "RK-216"], flags=BB)

S(B, "scn-bud-0008", "TMO-08", "ojs-timeouts 9.1", "An execution timeout is matched against non_retryable_errors like any error (unlike a plain visibility timeout): with timeout listed, the timeout at 0 + (10 + 0) s + 1 ms = 10001 discards the job with 2 attempts left",
  [budget_job(0, "a", X(), {"timeout": 10, "grace_period": 0, "heartbeat_timeout": 600}, retry={"max_attempts": 3, "non_retryable_errors": ["timeout"], "jitter": False}),
   fetch(0, X({"a": J("active", attempt=1, ru=10 * 1000 + 1)}, fetched="a")),
   op(10 * 1000 + 1, "tick", X({"a": J("discarded", attempt=1, dl=False, errs=[TE(1, "timeout", "execution", 10 * 1000 + 1)])}))],
  covers=["TMO-01", "RK-226"], flags=BB)
S(B, "scn-bud-0009", "TMO-01", "ojs-timeouts 5.1", "Execution timeouts exhaust the policy like failures: max_attempts 2, timeout 10 s, grace 0: timed out at 10001 (retry at 11001) and at 11001 + 10001 = 21002, then discarded with two timeout entries",
  [budget_job(0, "a", X(), {"timeout": 10, "grace_period": 0, "heartbeat_timeout": 600}, retry={"max_attempts": 2, "initial_interval": "PT1S", "jitter": False}),
   fetch(0, X(fetched="a")),
   op(10001, "tick", X({"a": J("retryable", attempt=1, nra=11001)})),
   fetch(11001, X({"a": J("active", attempt=2, ru=11001 + 10001)}, fetched="a")),
   op(21002, "tick", X({"a": J("discarded", attempt=2, dl=False, errs=[TE(1, "timeout", "execution", 10001), TE(2, "timeout", "execution", 21002)])}))],
  covers=["RK-216"], flags=BB)
S(B, "scn-bud-0010", "CORE-X02", "ojs-timeouts 5.3", "timeouts.enqueue_ttl (30 s) is the job's enqueue TTL, as enqueue_ttl_ms: enqueued at 1000, still waiting at 31000, discarded without running at 31001",
  [budget_job(1000, "a", X(), {"enqueue_ttl": 30}),
   op(31000, "tick", X({"a": J("available", attempt=0)})),
   op(31001, "tick", X({"a": J("discarded", attempt=0)})),
   fetch(31001, X(fetched=None))],
  covers=["RK-216"], flags=BB + ["extension:expiry"])

# ---- replay.json: automatic replay of dead letters (ojs-dead-letter 7)
RP = "replay"
RPF = ["extension:dead-letter-replay"]
RULE = {"name": "smtp-outage", "filter": {"error_type": "smtp.unavailable"}, "delay": "PT1M", "max_replays": 2}
DELAY = 60 * 1000
F0 = E(1, "smtp.unavailable", "SMTP server unavailable", 0)
R1 = 0 + DELAY                 # first replay: discarded at 0 + 1 min
D2 = R1 + 1000                 # second dead-lettering
R2 = D2 + DELAY                # second replay
D3 = R2 + 1000                 # third dead-lettering: the count (2) has reached max_replays
S(RP, "scn-rpl-0001", "DLQ-R003", "ojs-dead-letter 7.1", "Rule smtp-outage (delay PT1M, max_replays 2) replays a dead letter at discarded_at + 1 min: at 60000 and, dead again at 61000, at 121000; dead again at 122000 it is left in the dead letter set (count 2 = max_replays). Each replay is a manual retry (attempt 0, errors kept) that writes replay_count, last_replayed_at and replay_rule",
  [enq(0, "a", X(), retry=P1DL), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[F0]) | {"replay_at_ms": R1, "replay_count": 0}})),
   op(R1 - 1, "tick", X({"a": J("discarded", attempt=1, dl=True) | {"replay_at_ms": R1, "replay_count": 0}})),
   op(R1, "tick", X({"a": J("available", attempt=0, dl=False, errs=[F0]) | {"replay_count": 1, "last_replayed_at_ms": R1, "replay_rule": "smtp-outage", "replay_at_ms": None}}, counts={"dead_letter": 0, "available": 1})),
   fetch(D2, X({"a": J("active", attempt=1)}, fetched="a")),
   fail(D2, "a", X({"a": J("discarded", attempt=1, dl=True, errs=[F0, E(1, "smtp.unavailable", "SMTP server unavailable", D2)]) | {"replay_at_ms": R2, "replay_count": 1}})),
   op(R2, "tick", X({"a": J("available", attempt=0, dl=False) | {"replay_count": 2, "last_replayed_at_ms": R2, "replay_rule": "smtp-outage", "replay_at_ms": None}})),
   fetch(D3, X(fetched="a")),
   fail(D3, "a", X({"a": J("discarded", attempt=1, dl=True) | {"replay_at_ms": None, "replay_count": 2, "last_replayed_at_ms": R2}})),
   op(D3 + 10 * DELAY, "tick", X({"a": J("discarded", attempt=1, dl=True, errs=[F0, E(1, "smtp.unavailable", "SMTP server unavailable", D2), E(1, "smtp.unavailable", "SMTP server unavailable", D3)]) | {"replay_count": 2, "replay_at_ms": None}}, counts={"dead_letter": 1}))],
  covers=["RK-223", "RK-224", "DLQ-003"], flags=RPF + ["implementation-defined:boundary", "implementation-defined:manual-retry-errors"],
  config={"replay_rules": [RULE]})
S(RP, "scn-rpl-0002", "RK-227", "ojs-dead-letter 7.1", "A manual retry cancels the planned replay: dead-lettered at 0 (replay planned at 60000), retried by hand at 30000; at 60000 nothing is replayed (replay_count 0) and the job waits as the manual retry left it",
  [enq(0, "a", X(), retry=P1DL), fetch(0, X(fetched="a")),
   fail(0, "a", X({"a": J("discarded", attempt=1, dl=True) | {"replay_at_ms": R1}})),
   op(30000, "retry", X({"a": J("available", attempt=0, dl=False, errs=[F0]) | {"replay_at_ms": None, "replay_count": 0}}), id="a"),
   op(R1, "tick", X({"a": J("available", attempt=0, dl=False, errs=[F0]) | {"replay_at_ms": None, "replay_count": 0}})),
   fetch(R1, X({"a": J("active", attempt=1)}, fetched="a"))],
  covers=["DLQ-003"], flags=RPF + ["implementation-defined:manual-retry-errors"],
  config={"replay_rules": [RULE]})
S(RP, "scn-rpl-0003", "RK-225", "ojs-dead-letter 7", "Only matching dead letters are replayed: p is plainly discarded (on_exhaustion discard), t failed with another error type; neither has a replay planned or made, d (matching) is replayed at 60000",
  [enq(0, "p", X(), retry=P1), enq(0, "t", X(), retry=P1DL), enq(0, "d", X(), retry=P1DL),
   fetch(0, X(fetched="p")), fail(0, "p", X({"p": J("discarded", dl=False) | {"replay_at_ms": None}})),
   fetch(0, X(fetched="t")), fail(0, "t", X({"t": J("discarded", dl=True) | {"replay_at_ms": None}}), typ="smtp.auth_failed", msg="bad credentials"),
   fetch(0, X(fetched="d")), fail(0, "d", X({"d": J("discarded", dl=True) | {"replay_at_ms": R1}})),
   op(R1, "tick", X({"p": J("discarded") | {"replay_count": 0}, "t": J("discarded", dl=True) | {"replay_count": 0}, "d": J("available", attempt=0) | {"replay_count": 1, "replay_rule": "smtp-outage"}}))],
  covers=["RK-222", "DLQ-R003"], flags=RPF,
  config={"replay_rules": [RULE]})


# ---- ratelimits.json: rate limits (ojs-rate-limiting 5-8; RK-285 .. RK-287)
RL = "ratelimits"
RLF = ["extension:rate-limiting"]
def lim(key="api", conc=None, rate=None, throttle=None, on=None):
    d = {"key": key}
    if conc is not None: d["concurrency"] = conc
    if rate is not None: d["rate"] = {"limit": rate[0], "period_ms": rate[1]}
    if throttle is not None: d["throttle"] = {"limit": throttle[0], "period_ms": throttle[1]}
    if on is not None: d["on_limit"] = on
    return d
C1 = lim(conc=1)
S(RL, "scn-rl-0001", "RL-001", "ojs-rate-limiting 5.1", "Concurrency 1: while a (key api) is active, b (key api) is skipped and c (no limit) behind it is fetched (8.1); b stays available with attempt 0 and starts as attempt 1 once a is acked",
  [enq(0, "a", X(), queue="q", rl=C1), enq(0, "b", X(), queue="q", rl=C1), enq(0, "c", X(), queue="q"),
   fetch(0, X({"a": J("active", attempt=1)}, fetched="a"), "q"),
   fetch(0, X({"b": J("available", attempt=0), "c": J("active", attempt=1)}, fetched="c"), "q"),
   fetch(0, X({"b": J("available", attempt=0)}, fetched=None), "q"),
   op(10, "ack", X({"a": J("completed", attempt=1)}), id="a"),
   fetch(10, X({"b": J("active", attempt=1)}, fetched="b"), "q")],
  covers=["RL-003", "RL-004"], flags=RLF)
W2 = lim(rate=(2, 10000))
S(RL, "scn-rl-0002", "RK-285", "ojs-rate-limiting 5.2", "Sliding window of 2 starts per 10000 ms: starts at 0 and 3000; at 9999 two starts lie in (-1, 9999] so c waits (attempt 0); at 10000 the start at 0 has left (0, 10000] and c starts; d waits until 13000, when the start at 3000 leaves",
  [enq(0, "a", X(), rl=W2), enq(0, "b", X(), rl=W2), enq(0, "c", X(), rl=W2), enq(0, "d", X(), rl=W2),
   fetch(0, X(fetched="a")), fetch(3000, X(fetched="b")),
   fetch(9999, X({"c": J("available", attempt=0)}, fetched=None)),
   fetch(10000, X({"c": J("active", attempt=1)}, fetched="c")),
   fetch(12999, X({"d": J("available", attempt=0)}, fetched=None)),
   fetch(13000, X(fetched="d"))],
  covers=["RL-002", "RL-003"], flags=RLF + ["implementation-defined:boundary"])
T3 = lim(throttle=(3, 1000))
S(RL, "scn-rl-0003", "RK-286", "ojs-rate-limiting 5.3", "Throttle of 3 per 1000 ms: starts are spaced by ceil(1000 ms / 3) = 333.333334 ms after the last start, the first free: b may not start at 333 ms but at 334 ms; c not at 667 ms (334 + 333.333334 = 667.333334) but at 668 ms",
  [enq(0, "a", X(), rl=T3), enq(0, "b", X(), rl=T3), enq(0, "c", X(), rl=T3),
   fetch(0, X(fetched="a")),
   fetch(333, X({"b": J("available", attempt=0)}, fetched=None)),
   fetch(334, X(fetched="b")),
   fetch(667, X(fetched=None)),
   fetch(668, X({"c": J("active", attempt=1)}, fetched="c"))],
  covers=["RL-002"], flags=RLF + ["implementation-defined:boundary"])
S(RL, "scn-rl-0004", "RK-287", "ojs-rate-limiting 6.2", "on_limit with a window of 1 start per 60000 ms: a starts at 1000; at the next fetch r (reschedule) becomes scheduled for 61000, when the window allows, and d (drop) is discarded without running (attempt 0, not dead-lettered, no error entry); r is available at 61000 and starts as attempt 1",
  [enq(0, "a", X(), rl=lim(key="k", rate=(1, 60000))), enq(0, "r", X(), rl=lim(key="k", rate=(1, 60000), on="reschedule")),
   enq(0, "d", X(), rl=lim(key="k", rate=(1, 60000), on="drop")),
   fetch(1000, X(fetched="a")),
   fetch(1000, X({"r": J("scheduled", attempt=0), "d": J("discarded", attempt=0, dl=False, errs=[])}, fetched=None)),
   op(60999, "tick", X({"r": J("scheduled", attempt=0)})),
   op(61000, "tick", X({"r": J("available", attempt=0)})),
   fetch(61000, X({"r": J("active", attempt=1)}, fetched="r"))],
  covers=["RL-003"], flags=RLF)
S(RL, "scn-rl-0005", "RL-004", "ojs-rate-limiting 8.2", "Priority and retries: p (priority 10, key api, concurrency 1) starts; p2 (priority 10, same key) is skipped for q (priority 0, no limit); p fails at 100 (retry at 1100) and p2 starts; at 1100 p is available but its key is busy, so it waits with attempt 1; after p2's ack at 1200 p starts as attempt 2",
  [enq(0, "p", X(), retry=P3, prio=10, rl=C1), enq(0, "p2", X(), prio=10, rl=C1), enq(0, "q", X()),
   fetch(0, X(fetched="p")), fetch(0, X(fetched="q")),
   fail(100, "p", X({"p": J("retryable", attempt=1, nra=1100)})),
   fetch(100, X(fetched="p2")),
   fetch(1100, X({"p": J("available", attempt=1)}, fetched=None)),
   op(1200, "ack", X(), id="p2"),
   fetch(1200, X({"p": J("active", attempt=2)}, fetched="p"))],
  covers=["RL-001", "CORE-F04"], flags=RLF + ["extension:priority"])
S(RL, "scn-rl-0006", "RL-001", "ojs-rate-limiting 6.2", "Concurrency 0 lets no job of the key start: a (key stop) is never fetched; b of another key is",
  [enq(0, "a", X(), rl=lim(key="stop", conc=0)), enq(0, "b", X(), rl=lim(key="go", conc=0 + 1)),
   fetch(0, X(fetched="b")),
   fetch(100000, X({"a": J("available", attempt=0)}, fetched=None))],
  flags=RLF)
S(RL, "scn-rl-0007", "RL-001", "ojs-rate-limiting 5.1", "A visibility timeout frees the key: a (concurrency 1, visibility 5000) is fetched at 0 and b waits; at 5000 a's reservation expires (a failed attempt, retry at 6000) and b starts; at 6000 a waits for b, attempt still 1",
  [enq(0, "a", X(), retry=P3, vis=5000, rl=C1), enq(0, "b", X(), vis=5000, rl=C1),
   fetch(0, X(fetched="a")), fetch(1, X(fetched=None)),
   fetch(5000, X({"a": J("retryable", attempt=1, nra=6000, errs=[T(1, 5000)]), "b": J("active", attempt=1)}, fetched="b")),
   fetch(6000, X({"a": J("available", attempt=1)}, fetched=None))],
  flags=RLF + ["implementation-defined:timeout-transition", "implementation-defined:boundary"])


# ---- extensions.json: the retry extensions of docs/extensions.md (RK-301 .. RK-306)
XT = "extensions"
XER, XRA, XSN, XJM = ["extension:error_rules"], ["extension:retry_after"], ["extension:snooze"], ["extension:jitter_mode"]


def xfail(at, jid, expect, typ="api.busy", msg="busy", retry_after=None, snooze=None):
    st = fail(at, jid, expect, typ=typ, msg=msg)
    exp = st.pop("expect")
    if retry_after is not None:
        st["retry_after_ms"] = retry_after
    if snooze is not None:
        st["snooze_ms"] = snooze
    st["expect"] = exp
    return st


def JS(state, snoozes, **kw):
    d = J(state, **kw)
    d["snoozes"] = snoozes
    return d


PER = {"max_attempts": 2, "jitter": False,
       "error_rules": [{"match": ["rate_limit.*"], "max_attempts": 3, "initial_interval": "PT1M", "backoff_strategy": "none"}]}
S(XT, "scn-ext-0001", "RK-302", "ojs-retry-extensions 3.2", "Per-error-type rule: rate_limit.* retries every PT1M for 3 attempts in all although the policy allows 2: failures at 1000 and 62000 are retried at 61000 and 122000, the third at 123000 ends the job; another type under the same policy ends at its 2nd attempt",
  [enq(0, "a", X(), retry=PER), fetch(0, X(fetched="a")),
   xfail(1000, "a", X({"a": J("retryable", attempt=1, nra=61000)}), typ="rate_limit.exceeded"),
   op(60999, "tick", X({"a": J("retryable", attempt=1)})),
   fetch(61000, X({"a": J("active", attempt=2)}, fetched="a")),
   xfail(62000, "a", X({"a": J("retryable", attempt=2, nra=122000)}), typ="rate_limit.exceeded"),
   fetch(122000, X({"a": J("active", attempt=3)}, fetched="a")),
   xfail(123000, "a", X({"a": J("discarded", attempt=3, dl=False, errs=[E(1, "rate_limit.exceeded", "busy", 1000), E(2, "rate_limit.exceeded", "busy", 62000), E(3, "rate_limit.exceeded", "busy", 123000)])}), typ="rate_limit.exceeded"),
   enq(124000, "b", X(), retry=PER), fetch(124000, X(fetched="b")),
   xfail(124000, "b", X({"b": J("retryable", attempt=1, nra=125000)}), typ="db.down"),
   fetch(125000, X(fetched="b")),
   xfail(125000, "b", X({"b": J("discarded", attempt=2)}), typ="db.down")],
  covers=["RK-303", "RK-301"], flags=XER + ["extension:backoff_strategy"])

S(XT, "scn-ext-0002", "RK-304", "ojs-retry-extensions 3.3", "Requested delay: retry_after 45 s is honoured exactly (jitter on, not applied), 1 h is bounded by max_retry_after PT2M; the retry is due at 45000 and then at 45000 + 120000",
  [enq(0, "a", X(), retry={"max_attempts": 3, "max_retry_after": "PT2M"}), fetch(0, X(fetched="a")),
   xfail(0, "a", X({"a": J("retryable", attempt=1, nra=45000)}), retry_after=45000),
   fetch(45000, X({"a": J("active", attempt=2)}, fetched="a")),
   xfail(45000, "a", X({"a": J("retryable", attempt=2, nra=165000)}), retry_after=3600000),
   fetch(164999, X(fetched=None)),
   fetch(165000, X({"a": J("active", attempt=3)}, fetched="a")),
   xfail(165000, "a", X({"a": J("discarded", attempt=3)}), retry_after=1000)],
  flags=XRA)

SNZ = {"max_attempts": 2, "jitter": False, "max_snoozes": 2, "max_snooze": "PT1M"}
S(XT, "scn-ext-0003", "RK-306", "ojs-retry-extensions 3.5", "Snooze: two snoozes (30 s, then 1 h bounded by max_snooze PT1M) give attempt 1 back each time, with no error entry; the third, past max_snoozes 2, spends attempt 1 as a requested delay of 10 s; attempt 2 of 2 then ends the job even when it snoozes",
  [enq(0, "a", X(), retry=SNZ), fetch(0, X({"a": J("active", attempt=1)}, fetched="a")),
   xfail(1000, "a", X({"a": JS("retryable", 1, attempt=0, nra=31000, ru=None, errs=[])}), snooze=30000),
   fetch(31000, X({"a": J("active", attempt=1)}, fetched="a")),
   xfail(31000, "a", X({"a": JS("retryable", 2, attempt=0, nra=91000, errs=[])}), snooze=3600000),
   fetch(91000, X({"a": J("active", attempt=1)}, fetched="a")),
   xfail(92000, "a", X({"a": JS("retryable", 2, attempt=1, nra=102000, errs=[E(1, "api.busy", "busy", 92000)])}), snooze=10000),
   fetch(102000, X({"a": J("active", attempt=2)}, fetched="a")),
   xfail(102000, "a", X({"a": JS("discarded", 2, attempt=2, errs=[E(1, "api.busy", "busy", 92000), E(2, "api.busy", "busy", 102000)])}), snooze=1000)],
  flags=XSN)

S(XT, "scn-ext-0004", "RK-305", "ojs-retry-extensions 3.4", "Decorrelated jitter with every draw 0.5: each delay is (I + 3p)/2 from the previous delay p (I = 1 s before the first retry): 2 s, 3.5 s, 5.75 s",
  [enq(0, "a", X(), retry={"max_attempts": 4, "jitter_mode": "decorrelated"}), fetch(0, X(fetched="a")),
   xfail(0, "a", X({"a": J("retryable", attempt=1, nra=2000)})),
   fetch(2000, X(fetched="a")), xfail(2000, "a", X({"a": J("retryable", attempt=2, nra=5500)})),
   fetch(5500, X(fetched="a")), xfail(5500, "a", X({"a": J("retryable", attempt=3, nra=11250)})),
   fetch(11249, X(fetched=None)), fetch(11250, X({"a": J("active", attempt=4)}, fetched="a"))],
  flags=XJM, config={"rand": 0.5})

S(XT, "scn-ext-0005", "RK-305", "ojs-retry-extensions 3.4", "Full and equal jitter with every draw 0.25, PT4S doubling: full waits 4 s * 0.25 = 1 s then 8 s * 0.25 = 2 s; equal waits (4 s + 1 s)/2 = 2.5 s then (8 s + 2 s)/2 = 5 s",
  [enq(0, "f", X(), retry={"max_attempts": 3, "initial_interval": "PT4S", "jitter_mode": "full"}),
   enq(0, "q", X(), retry={"max_attempts": 3, "initial_interval": "PT4S", "jitter_mode": "equal"}),
   fetch(0, X(fetched="f")), fetch(0, X(fetched="q")),
   xfail(0, "f", X({"f": J("retryable", attempt=1, nra=1000)})),
   xfail(0, "q", X({"q": J("retryable", attempt=1, nra=2500)})),
   fetch(1000, X(fetched="f")), xfail(1000, "f", X({"f": J("retryable", attempt=2, nra=3000)})),
   fetch(2500, X(fetched="q")), xfail(2500, "q", X({"q": J("retryable", attempt=2, nra=7500)}))],
  flags=XJM, config={"rand": 0.25})

SNT = {"max_attempts": 3, "jitter": False, "max_snoozes": 5, "max_snooze": "PT1H"}
S(XT, "scn-ext-0006", "RK-306", "ojs-retry-extensions 3.5", "Snoozes are bounded by the total timeout too (ojs-timeouts 9.1): timeout 60 s, total 600 s; a snooze of 530 s at 10 s ends with its next attempt exactly at the deadline and is taken; a snooze of 1 s at 541 s cannot (541 + 1 + 60 > 600), so the job is discarded and the attempt recorded as failed",
  [budget_job(0, "a", X(), {"timeout": 60, "total_timeout": 600, "heartbeat_timeout": 600}, retry=SNT), fetch(0, X(fetched="a")),
   xfail(10000, "a", X({"a": JS("retryable", 1, attempt=0, nra=540000, errs=[])}), snooze=530000),
   fetch(540000, X({"a": J("active", attempt=1)}, fetched="a")),
   xfail(541000, "a", X({"a": JS("discarded", 1, attempt=1, dl=False, errs=[E(1, "api.busy", "busy", 541000)])}), snooze=1000)],
  covers=["RK-215", "RK-301"], flags=XSN + ["extension:timeouts"])

S(XT, "scn-ext-0007", "RK-306", "ojs-retry-extensions 3.5", "A manual retry of a dead letter starts its snoozes afresh: max_snoozes 1 is used up, the job dead-letters at its only attempt, and after the retry it may snooze once more",
  [enq(0, "a", X(), retry={"max_attempts": 1, "jitter": False, "max_snoozes": 1, "on_exhaustion": "dead_letter"}),
   fetch(0, X(fetched="a")),
   xfail(0, "a", X({"a": JS("retryable", 1, attempt=0, nra=5000)}), snooze=5000),
   fetch(5000, X({"a": J("active", attempt=1)}, fetched="a")),
   xfail(5000, "a", X({"a": JS("discarded", 1, attempt=1, dl=True)}), snooze=5000),
   op(6000, "retry", X({"a": JS("available", 0, attempt=0)}), id="a"),
   fetch(6000, X(fetched="a")),
   xfail(6000, "a", X({"a": JS("retryable", 1, attempt=0, nra=11000)}), snooze=5000)],
  flags=XSN)

RBP = {"max_attempts": 5, "jitter": False, "max_snoozes": 3, "on_exhaustion": "dead_letter"}
S(XT, "scn-ext-0008", "RK-307", "ojs-retry-extensions 3.6", "Retry budget, a token bucket of capacity 1 with credit_per_success 1: a's failure takes the token and is retried at 1000; b's snooze takes nothing; b's failure at 1000 finds the bucket empty and is dead-lettered at attempt 1 of 5; a's ack puts the token back, so c's failure at 2000 is retried",
  [enq(0, "a", X(), retry=RBP), enq(0, "b", X(), retry=RBP),
   fetch(0, X(fetched="a")), fetch(0, X(fetched="b")),
   xfail(0, "a", X({"a": J("retryable", attempt=1, nra=1000)})),
   xfail(0, "b", X({"b": JS("retryable", 1, attempt=0, nra=1000)}), snooze=1000),
   fetch(1000, X(fetched="a")), fetch(1000, X(fetched="b")),
   xfail(1000, "b", X({"b": J("discarded", attempt=1, dl=True, errs=[E(1, "api.busy", "busy", 1000)])})),
   op(1500, "ack", X({"a": J("completed", attempt=2)}), id="a"),
   enq(2000, "c", X(), retry=RBP), fetch(2000, X(fetched="c")),
   xfail(2000, "c", X({"c": J("retryable", attempt=1, nra=3000)}))],
  covers=["RK-321"], flags=["extension:retry_budget", "extension:snooze"],
  config={"retry_budget": {"token_bucket": {"capacity": 1, "credit_per_success": 1}}})

if __name__ == "__main__":
    main()
