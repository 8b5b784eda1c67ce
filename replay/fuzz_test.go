package replay_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/replay"
)

// Parse never panics, refuses with ErrInvalidRules, and what it accepts
// writes back to equal rules.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"replay_rules": [{"name": "r", "filter": {"error_type": "E"}, "delay": "PT1H", "max_replays": 3, "enabled": true}]}`,
		`{"replay_rules": []}`, `{"replay_rules": [{"name": "r", "filter": {"since": "2026-02-12T00:00:00Z", "queue": "q\u00e9"}, "delay": "P1DT0.5S", "max_replays": 1e3}]}`,
		`{"replay_rules": [{}]}`, `{"replay_rules": null}`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := replay.Parse(data)
		if err != nil {
			if !errors.Is(err, replay.ErrInvalidRules) {
				t.Fatalf("error %v does not match ErrInvalidRules", err)
			}
			return
		}
		out, _ := rs.MarshalJSON()
		again, err := replay.Parse(out)
		if err != nil || !cmp.Equal(again.Rules(), rs.Rules()) {
			t.Fatalf("%s → %s → %v", data, out, err)
		}
	})
}

// ReadMeta never panics; what WriteMeta writes, ReadMeta reads back.
func FuzzReadMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"ojs.replay_count": 2, "ojs.last_replayed_at": "2026-02-13T12:00:00Z", "ojs.replay_rule": "r"}`, `{"x": [1, {"y": null}]}`, `{"ojs.replay_count": 1e2}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := replay.ReadMeta(data)
		if err != nil {
			if !errors.Is(err, replay.ErrInvalidMeta) {
				t.Fatalf("error %v does not match ErrInvalidMeta", err)
			}
			return
		}
		out, err := replay.WriteMeta(data, st)
		if err != nil {
			t.Fatalf("WriteMeta refused what ReadMeta read: %v", err)
		}
		back, err := replay.ReadMeta(out)
		if err != nil || back.Count != st.Count || back.Rule != st.Rule || !back.LastAt.Equal(st.LastAt) {
			t.Fatalf("%s → %s: %+v, %v; want %+v", data, out, back, err, st)
		}
	})
}
