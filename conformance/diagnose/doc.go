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
// Beside the fixed catalogue, [Diagnose] searches parameterised
// families of bugs ([Families]): an attempt or exponent offset, each
// strategy computed as each other, a jitter multiplier range fitted from
// the answers to injected draws, no cap or a cap scaled by a constant
// factor (a unit mixed up), the jitter field ignored, a wrong default
// for an absent field, exhaustion off by ±k, handler
// codes ignored in whole or in part, loosened matching (letter case,
// bare prefix, unanchored regular expressions), rounding or truncation of
// delays and durations, a fraction of a nanosecond kept and rounded by the
// answer's conversion, a constant factor or offset in time, another
// jitter formula (equal jitter in integer halves, decorrelated jitter),
// one duration component read in another unit wherever a duration is
// read (minutes as milliseconds, days ignored, the fraction of seconds
// dropped). Parameter
// values are read off the failures (the ratio and the difference of the
// delays, the draws and the multipliers they show, the codes of the
// failing requests) and each fitted model is then judged like a
// catalogue entry.
//
// [Diagnose] takes the answers of one run ([Case] values: request, answer,
// verdict) and applies these rules, in order:
//
//  1. a failure is reproduced by a model when the model's answer to the
//     same request equals the implementation's answer (the caller's Same
//     function decides equality, within the declared resolution) and
//     fails the vector too;
//  2. a model is claimed only when it reproduces every failure it claims
//     and contradicts no pass: a model that would have failed one passing
//     case is dropped, however many failures it reproduces. A failure
//     the model mispredicts (both accept the request, the model's value
//     is not the implementation's) speaks against it too: one drops a
//     fitted family; a catalogue model is dropped, and the run diagnosed
//     again without it, when its mispredicted failures that no
//     combination with it explains are more than a third of the failures
//     it reproduces (a second bug in the same answers explains a few). A
//     fitted family is dropped too when more than four times as many
//     failures of its kind as it explains stay unexplained: it fits a
//     few by coincidence inside a larger bug;
//  3. models are taken greedily by one cover shared with the live
//     checker's diagnosis (internal/cover): the one with the most failures
//     not yet explained first, then a catalogue entry before a fitted
//     family, fewer fitted parameters before more, two families together
//     (tried when one alone mispredicts failures) last, then the name;
//     each failure is listed under the first model that reproduces it;
//     failures no single model reproduces are then tried with two and
//     three catalogue models combined ([Combine]), each combination
//     starting from a model already found; a combination reproduces a
//     failure only when every one of its bugs takes part (no combination
//     with one bug left out reproduces it too, a smaller model that a
//     pass contradicts not counting), so a bug the answer does not show
//     is never named; a delay the implementation drew itself is then
//     listed under every catalogue bug found in the run that can fail its
//     vector alone and that together reproduce it, whatever the draw;
//  4. failures no model reproduces are returned apart, never forced into a
//     group; [Deviations] groups them by the deviation observed between
//     each answer and the reference's ("every delay is 2× the spec's",
//     "one attempt past max_attempts retried", "matches differ only in
//     letter case", "a delay above max_interval", "every delay is
//     backoff_coefficient× the spec's", "a delay of 0"), each group with
//     its smallest reproduction; a delay the implementation drew itself
//     joins a group of ratios or offsets when its whole range shows it,
//     and a remnant of a quarter or less of a group of its kind joins it.
//     One deviation seen from several ops is one group: a valid input
//     refused is grouped by the field or duration the refusal names, not
//     by op; failures that show durations read otherwise (parse_duration
//     answers, policies refused for an interval, effective intervals,
//     delays that are the spec's with an interval read as another
//     length) gather in one group when both parse_duration and policies
//     show it; decisions that retry a type the patterns list join the
//     group of match answers that miss it.
//
// So "explains 37 failures" means 37 answers were reproduced exactly by
// one bug and no passing answer speaks against it. How many passing
// answers were held against the model is [Finding.Replayed]: the passes
// whose request the model answers with a value of its own and whose
// vector judges it (a pass the implementation drew itself is not
// replayed), every one of which the model passes too.
//
// # Non-goals
//
// Models reproduce answers, not crashes: an adapter error and an executor
// scenario are left to the caller. An answer the implementation drew
// itself (no rand) is reproduced when it lies in the model's range over
// all draws. Combinations of more than three bugs in one answer are not
// searched, nor of a fitted family with a catalogue model, nor of more
// than two families (two are tried when one alone mispredicts failures);
// such a failure stays unexplained. The catalogue is built from
// what real implementations do; a bug it lacks shows as unexplained
// failures rather than under a model that does not reproduce them.
package diagnose
