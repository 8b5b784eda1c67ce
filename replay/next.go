package replay

import "time"

// Letter is a dead letter as the rules see it.
//
// The zero Letter is one with no error type, queue or type, discarded at
// the zero time and never replayed. A Letter is a plain value.
type Letter struct {
	ErrorType   string    // type of the most recent error
	Queue       string    // the queue it was discarded from
	Type        string    // the job type
	DiscardedAt time.Time // when it was (last) dead-lettered
	Count       int       // ojs.replay_count: automatic replays so far
}

// Match reports whether r, enabled, selects l: every non-empty filter string
// equal to l's, and l discarded at or after a non-zero Since. The replay
// count is not consulted (see Rules.Next).
func (r Rule) Match(l Letter) bool {
	f := r.Filter
	return r.Enabled &&
		(f.ErrorType == "" || f.ErrorType == l.ErrorType) &&
		(f.Queue == "" || f.Queue == l.Queue) &&
		(f.Type == "" || f.Type == l.Type) &&
		(f.Since.IsZero() || !l.DiscardedAt.Before(f.Since))
}

// Replay is a planned replay of a dead letter.
//
// The zero value plans nothing. A Replay is a plain value.
type Replay struct {
	Rule  string    // the rule's name, for ojs.replay_rule
	At    time.Time // DiscardedAt + the rule's delay
	Count int       // ojs.replay_count after this replay
}

// Next returns the replay of l: by the first rule, in list order, that
// matches l and whose MaxReplays exceeds l.Count (the count is the job's
// automatic replays by any rule, RK-223), due at l.DiscardedAt + the rule's
// delay (saturating at the latest representable time). ok is false when no
// rule replays l: none matches, or every matching rule's max_replays is
// spent — the letter then stays a dead letter. With a rule of
// max_replays 2 and delay PT1H, a job dead-lettered at 10:00 is replayed at
// 11:00 (count 1); dead-lettered again at 11:05, replayed at 12:05 (count
// 2); dead-lettered again, it stays.
func (rs *Rules) Next(l Letter) (r Replay, ok bool) {
	if rs == nil {
		return Replay{}, false
	}
	for _, rule := range rs.rules {
		if rule.Match(l) && l.Count < rule.MaxReplays {
			return Replay{Rule: rule.Name, At: addSat(l.DiscardedAt, rule.Delay), Count: l.Count + 1}, true
		}
	}
	return Replay{}, false
}

// Due is Next, reporting ok only when the replay's time has come: At <= now
// (RK-224: a delay of one hour has passed at exactly one hour).
func (rs *Rules) Due(l Letter, now time.Time) (Replay, bool) {
	r, ok := rs.Next(l)
	if !ok || r.At.After(now) {
		return Replay{}, false
	}
	return r, true
}

// maxTime is the latest instant time.Time.Add can reach from ordinary
// times without wrapping: the largest int64 Unix nanosecond.
var maxTime = time.Unix(0, 1<<63-1)

func addSat(t time.Time, d time.Duration) time.Time {
	if t.After(maxTime.Add(-d)) {
		return maxTime
	}
	return t.Add(d)
}
