// Package servermodel names the bugs behind a live OJS server's failures by
// reproducing them, as package conformance/diagnose does for libraries.
//
// # Model
//
// The reference server is the retry spec's behaviour over the HTTP
// binding: a partial policy merged over the defaults field by field,
// non_retryable_errors matched against the error type only (exact, or the
// ".*" prefix), the delay capped, jittered and capped again, attempts
// 1-based everywhere, an expired reservation counted as a failed attempt,
// handler codes obeyed, on_exhaustion applied. A [Model] is that server
// with one rule broken the way real servers break it ([Models] lists
// them, each with a one-line fix); a set of models is a server with
// several bugs.
//
// The live checker records what it saw as observations ([Obs]): the FAIL
// answer of attempt n of a job under a given policy and failure, the
// attempt a FETCH, an INFO or an error history entry showed, whether an
// expired reservation counted, whether a retry came early, whether the
// dead-letter list honoured its queue filter. [Diagnose] applies these
// rules, in order:
//
//  1. a model (on top of the models already taken) explains a failed
//     check when every observation of the check is what that server would
//     have answered, and at least one differs from the reference's answer
//     (a model that changes nothing explains nothing);
//  2. a passing check with an observation the model answers otherwise
//     than both the reference and the server contradicts it; a model
//     contradicted by any pass is never taken (a cause is claimed only
//     when it reproduces every failure it claims and contradicts no pass);
//  3. models are taken one at a time by the greedy cover shared with the
//     library diagnosis (internal/cover): the most failed checks newly
//     explained first, a catalogue model before a fitted family, then the
//     name; so a failure needing two bugs is explained by the pair;
//  4. a catalogue model that explains a few failed checks while more
//     than four times as many failed checks with a deviation of the same
//     kind (a delay that differs; a retry handed out before its
//     next_attempt_at is of that kind too) stay unexplained is refused,
//     and so is a fitted family beside more of its kind unexplained than
//     it explains (its parameters were read off the failures), and the
//     run diagnosed again without them: the deviation is wider than the
//     model, which then reproduces its checks by coincidence (the library
//     diagnosis refuses a fitted family at four times);
//  5. failed checks no set of models explains are returned apart, and
//     [Deviations] groups them by what was observed.
//
// Beside the catalogue, families of bugs are fitted to the observations
// ([Families]): each strategy computed as each other (a server that
// accepts polynomial and computes exponential is
// strategy-as(polynomial→exponential)), attempt and exponent offsets (of
// every strategy or of one), exhaustion off by ±k, handler codes ignored
// in part, a jitter range estimated from the delays of many jobs, no cap,
// max_interval read as k times itself, a constant factor in time, a retry
// promoted late against its delay, non_retryable_errors matched against
// another field of the error than its type. At most one family joins the
// catalogue models of a server. A family that changes the delay a FAIL
// answer announces also reproduces retries handed out before that
// next_attempt_at (a server announcing from one formula and scheduling
// from another shows both).
//
// A model whose pattern a dialect flag of the checker explains (a server
// that ignores initial_interval_ms, reads the error type from error.code,
// or discards non-retryable failures as the binding's L1-RET-003 does)
// names the flag ([Model.Flag]).
//
// # Non-goals
//
// Models reproduce answers, not transport errors or timeouts; a check
// that errored is never explained by a model. Timing beyond "early or
// not" (latency) is a figure of the report, not a model.
package servermodel
