// Package suggest finds the known name closest to a mistyped one, for the
// "did you mean" hints of retrykit's error messages: unknown policy fields,
// command names and flags.
//
// [Closest] compares names after folding case and dropping '_', '-' and
// spaces, by the optimal string alignment distance (insertions, deletions,
// substitutions and swaps of two adjacent characters, each costing one), and
// accepts a match within a third of the candidate's length. Names longer
// than [MaxLen] bytes are never compared, so the cost of one call is bounded
// by the number of candidates times MaxLen² whatever the input: callers can
// pass hostile names.
//
// Non-goals: phonetic or keyboard-distance matching, ranking several
// suggestions.
package suggest
