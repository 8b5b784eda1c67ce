// Package replay is the automatic replay of dead letters (ojs-dead-letter
// §7, urn:ojs:ext:dead-letter): rules that re-enqueue matching dead letters
// after a delay, at most max_replays times — the second tier of retrying,
// for an outage that outlasts a job's attempts.
//
// # Model
//
// A [Rule] has a name, a [Filter] (error type, queue, job type, discarded
// since; the bulk-retry filter of §6.2), a delay, a max_replays limit and an
// enabled flag. [Rules] is a validated, immutable, ordered list, safe to
// share. A dead letter, as the rules see it, is a [Letter]: what the filter
// reads and the replay count kept in the job's meta ([State]: meta keys
// ojs.replay_count, ojs.last_replayed_at, ojs.replay_rule, §7.2).
//
// The schedule: a dead letter discarded at D is replayed at D + delay by the
// first enabled rule, in list order, that matches it and whose max_replays
// is above the letter's replay count. A replayed job that dead-letters
// again at D2 is replayed at D2 + delay, until its count reaches
// max_replays; then it stays (RK-221 to RK-225).
//
// # Entry points
//
//   - [Parse] decodes {"replay_rules": [...]}; [New] validates rules built
//     in Go.
//   - [Rules.Next] says which rule replays a letter and when; [Rules.Due]
//     whether that time has come.
//   - [ReadMeta] reads a job's replay [State] from its meta object;
//     [State.Replayed] is the state after one more replay; [WriteMeta]
//     writes it back, keeping the other keys.
//
// Errors: [ErrInvalidRules] with *[FieldError] naming the JSON path
// ("replay_rules[1].max_replays"); [ErrInvalidMeta] for a meta object
// whose replay keys are malformed.
//
// # Non-goals
//
// The package reads no clock and moves no job: the executor or server
// scans its dead letters and re-enqueues (package executor).
package replay
