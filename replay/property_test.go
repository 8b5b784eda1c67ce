package replay_test

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/replay"
	"pgregory.net/rapid"
)

// However often a dead letter comes back, a rule set replays it at most
// max(max_replays) times, the count rises by one per replay, and no replay
// is due before its discarded_at + delay.
func TestReplayCountNeverExceedsMaxReplays(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5).Draw(t, "rules")
		var rules []replay.Rule
		most := 0
		queues := []string{"", "a", "b"}
		for i := 0; i < n; i++ {
			r := replay.Rule{
				Name:       string(rune('a' + i)),
				Filter:     replay.Filter{Queue: rapid.SampledFrom(queues).Draw(t, "queue")},
				Delay:      time.Duration(rapid.Int64Range(0, int64(48*time.Hour)).Draw(t, "delay")),
				MaxReplays: rapid.IntRange(1, 20).Draw(t, "max"),
				Enabled:    rapid.Bool().Draw(t, "enabled"),
			}
			rules = append(rules, r)
			if r.Enabled {
				most = max(most, r.MaxReplays)
			}
		}
		rs, err := replay.New(rules)
		if err != nil {
			t.Fatal(err)
		}
		l := replay.Letter{Queue: rapid.SampledFrom(queues[1:]).Draw(t, "letter queue"), DiscardedAt: time.Unix(rapid.Int64Range(0, 1<<33).Draw(t, "at"), 0)}
		replays := 0
		for {
			r, ok := rs.Next(l)
			if !ok {
				break
			}
			if r.Count != l.Count+1 || r.At.Before(l.DiscardedAt) {
				t.Fatalf("replay %+v of %+v", r, l)
			}
			replays++
			if replays > most {
				t.Fatalf("%d replays, max_replays at most %d", replays, most)
			}
			l.Count = r.Count
			l.DiscardedAt = r.At.Add(time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "runs for")))
		}
	})
}
