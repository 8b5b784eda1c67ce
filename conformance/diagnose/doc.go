// Package diagnose names the bugs behind a conformance run's failures by
// reproducing them.
//
// # Model
//
// A [Model] is a small, documented variant of the reference implementation
// with one rule broken the way real implementations break it: no merge
// with the defaults, no cap after jitter, ".*" read as a regular
// expression, durations in float64 milliseconds, a lenient duration
// grammar, no on_exhaustion field, a field left unvalidated, and so on
// ([Models] lists them all, each with a one-line fix). A model answers
// protocol requests like the implementation under test would if it had
// exactly that bug. A model of a missing optional feature (the
// backoff_strategy extension) names the flag the implementation declares
// unclaimed instead ([Model.Unclaim]).
//
// [Diagnose] takes the answers of one run ([Case] values: request, answer,
// verdict) and applies these rules, in order:
//
//  1. a failure is reproduced by a model when the model's answer to the
//     same request equals the implementation's answer (the caller's Same
//     function decides equality, within the declared resolution) and
//     fails the vector too;
//  2. each model that reproduces at least one failure is held against
//     every passing case: a pass the model would have failed contradicts
//     it, and a model contradicted more often than it reproduces is
//     dropped;
//  3. models are taken greedily, the one with the most failures not yet
//     explained less its contradictions first (then more failures, then
//     the name), and each failure is listed under the first model that
//     reproduces it; failures no single model reproduces are then tried
//     with two and three models combined ([Combine]), each combination
//     starting from a model already found; a combination reproduces a
//     failure only when every one of its bugs takes part (no combination
//     with one bug left out reproduces it too), so a bug the answer does
//     not show is never named, and a model dropped by rule 2 does not come
//     back under a partner that changes nothing;
//  4. failures no model reproduces are returned apart, never forced into a
//     group (the conformance report then falls back to the vectors' class
//     flags for them).
//
// So "explains 37 failures, contradicted by 0 passes" means 37 answers
// were reproduced exactly by one bug and no passing answer speaks against
// it.
//
// # Non-goals
//
// Models reproduce answers, not crashes: an adapter error and an executor
// scenario are left to the caller. An answer the implementation drew
// itself (no rand) is reproduced when it lies in the model's range over
// all draws. Combinations of more than three bugs in one answer are not
// searched; such a failure stays unexplained. The catalogue is built from
// what real implementations do; a bug it lacks shows as unexplained
// failures rather than under a model that does not reproduce them.
package diagnose
