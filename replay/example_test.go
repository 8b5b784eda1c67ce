package replay_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/replay"
)

// The §7.1 rule with max_replays 2: a job dead-lettered with a
// ConnectionError is replayed an hour later, twice, then left.
func Example() {
	rules, err := replay.Parse([]byte(`{"replay_rules": [{"name": "retry-connection-errors",
		"filter": {"error_type": "ConnectionError"}, "delay": "PT1H", "max_replays": 2, "enabled": true}]}`))
	if err != nil {
		panic(err)
	}
	var meta []byte // the job's meta
	discarded := time.Date(2026, 2, 13, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		st, _ := replay.ReadMeta(meta)
		l := replay.Letter{ErrorType: "ConnectionError", Queue: "billing", Type: "invoice.generate", DiscardedAt: discarded, Count: st.Count}
		r, ok := rules.Next(l)
		if !ok {
			fmt.Println("left in the dead letter queue, count", st.Count)
			break
		}
		meta, _ = replay.WriteMeta(meta, st.Replayed(r, r.At))
		fmt.Println("replayed at", r.At.Format("15:04"), string(meta))
		discarded = r.At.Add(5 * time.Minute) // fails again and is dead-lettered
	}
	// Output:
	// replayed at 11:00 {"ojs.replay_count":1,"ojs.last_replayed_at":"2026-02-13T11:00:00Z","ojs.replay_rule":"retry-connection-errors"}
	// replayed at 12:05 {"ojs.replay_count":2,"ojs.last_replayed_at":"2026-02-13T12:05:00Z","ojs.replay_rule":"retry-connection-errors"}
	// left in the dead letter queue, count 2
}
