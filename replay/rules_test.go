package replay_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
)

// The §7.1 example document, field by field.
func TestParseSection71Example(t *testing.T) {
	rs, err := replay.Parse([]byte(`{
  "replay_rules": [
    {
      "name": "retry-connection-errors",
      "filter": {
        "error_type": "ConnectionError"
      },
      "delay": "PT1H",
      "max_replays": 3,
      "enabled": true
    }
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []replay.Rule{{Name: "retry-connection-errors", Filter: replay.Filter{ErrorType: "ConnectionError"}, Delay: time.Hour, MaxReplays: 3, Enabled: true}}
	if diff := cmp.Diff(want, rs.Rules()); diff != "" {
		t.Fatal(diff)
	}
	out, _ := rs.MarshalJSON()
	again, err := replay.Parse(out)
	if err != nil || !cmp.Equal(again.Rules(), rs.Rules()) {
		t.Fatalf("round trip %s: %v", out, err)
	}
}

func TestParseFilterOfBulkRetry(t *testing.T) {
	rs, err := replay.Parse([]byte(`{"replay_rules": [{"name": "a", "filter": {"queue": "billing", "type": "invoice.generate", "since": "2026-02-12T00:00:00Z", "error_type": "DatabaseConnectionError"}, "delay": "PT0S", "max_replays": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := rs.Rules()[0]
	if !r.Enabled || r.Filter.Since != time.Date(2026, 2, 12, 0, 0, 0, 0, time.UTC) || r.Filter.Queue != "billing" {
		t.Fatalf("%+v", r)
	}
}

func TestParseRefusalsNameTheField(t *testing.T) {
	rule := func(s string) string { return `{"replay_rules": [` + s + `]}` }
	for in, field := range map[string]string{
		`{}`:                   "replay_rules",
		`{"replay_rules": {}}`: "replay_rules",
		`{"replay_rule": []}`:  "replay_rule",
		rule(`{"filter": {}, "delay": "PT1H", "max_replays": 1}`):                                                                              "replay_rules[0].name",
		rule(`{"name": "", "filter": {}, "delay": "PT1H", "max_replays": 1}`):                                                                  "replay_rules[0].name",
		rule(`{"name": "a", "delay": "PT1H", "max_replays": 1}`):                                                                               "replay_rules[0].filter",
		rule(`{"name": "a", "filter": {}, "max_replays": 1}`):                                                                                  "replay_rules[0].delay",
		rule(`{"name": "a", "filter": {}, "delay": "1h", "max_replays": 1}`):                                                                   "replay_rules[0].delay",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H"}`):                                                                                   "replay_rules[0].max_replays",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 0}`):                                                                 "replay_rules[0].max_replays",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1.5}`):                                                               "replay_rules[0].max_replays",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1, "enabled": "yes"}`):                                               "replay_rules[0].enabled",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1, "enabld": true}`):                                                 "replay_rules[0].enabld",
		rule(`{"name": "a", "filter": {"queue": ""}, "delay": "PT1H", "max_replays": 1}`):                                                      "replay_rules[0].filter.queue",
		rule(`{"name": "a", "filter": {"queue": null}, "delay": "PT1H", "max_replays": 1}`):                                                    "replay_rules[0].filter.queue",
		rule(`{"name": "a", "filter": {"since": "yesterday"}, "delay": "PT1H", "max_replays": 1}`):                                             "replay_rules[0].filter.since",
		rule(`{"name": "a", "filter": {"error": "X"}, "delay": "PT1H", "max_replays": 1}`):                                                     "replay_rules[0].filter.error",
		rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1}, {"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1}`): "replay_rules[1].name",
	} {
		_, err := replay.Parse([]byte(in))
		var fe *replay.FieldError
		if !errors.Is(err, replay.ErrInvalidRules) || !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Parse(%s) = %v, want an error on %s", in, err, field)
		}
	}
	_, err := replay.Parse([]byte(rule(`{"name": "a", "filter": {}, "delay": "PT1H", "max_replays": 1, "enabld": true}`)))
	if err == nil || !strings.Contains(err.Error(), `did you mean "enabled"?`) {
		t.Errorf("typo: %v", err)
	}
	_, err = replay.Parse([]byte(rule(`{"name": "a", "filter": {}, "delay": "PT", "max_replays": 1}`)))
	if !errors.Is(err, policy.ErrInvalidDuration) {
		t.Errorf("delay PT: %v, want the duration error as cause", err)
	}
	many := strings.Repeat(`{"name": "x", "filter": {}, "delay": "PT1H", "max_replays": 1},`, replay.MaxRules+1)
	if _, err := replay.Parse([]byte(rule(many[:len(many)-1]))); !errors.Is(err, replay.ErrInvalidRules) {
		t.Errorf("%d rules: %v", replay.MaxRules+1, err)
	}
}

var t0 = time.Date(2026, 2, 13, 10, 0, 0, 0, time.UTC)

func TestMatchEachFilterField(t *testing.T) {
	base := replay.Letter{ErrorType: "ConnectionError", Queue: "billing", Type: "invoice.generate", DiscardedAt: t0}
	for _, c := range []struct {
		f    replay.Filter
		want bool
	}{
		{replay.Filter{}, true},
		{replay.Filter{ErrorType: "ConnectionError"}, true},
		{replay.Filter{ErrorType: "connectionerror"}, false},
		{replay.Filter{Queue: "billing", Type: "invoice.generate"}, true},
		{replay.Filter{Queue: "email"}, false},
		{replay.Filter{Type: "invoice"}, false},
		{replay.Filter{Since: t0}, true},
		{replay.Filter{Since: t0.Add(time.Nanosecond)}, false},
	} {
		r := replay.Rule{Name: "r", Filter: c.f, MaxReplays: 1, Enabled: true}
		if got := r.Match(base); got != c.want {
			t.Errorf("filter %+v: %v, want %v", c.f, got, c.want)
		}
		r.Enabled = false
		if r.Match(base) {
			t.Errorf("disabled rule %+v matched", c.f)
		}
	}
}

// max_replays bounds ojs.replay_count; the first matching rule with replays
// left fires; the delay runs from discarded_at, due at exactly that time.
func TestNextAndDue(t *testing.T) {
	rs, err := replay.New([]replay.Rule{
		{Name: "quick", Filter: replay.Filter{Queue: "billing"}, Delay: time.Minute, MaxReplays: 1, Enabled: true},
		{Name: "slow", Filter: replay.Filter{}, Delay: time.Hour, MaxReplays: 3, Enabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := replay.Letter{Queue: "billing", DiscardedAt: t0}
	for count, want := range map[int]replay.Replay{
		0: {Rule: "quick", At: t0.Add(time.Minute), Count: 1},
		1: {Rule: "slow", At: t0.Add(time.Hour), Count: 2},
		2: {Rule: "slow", At: t0.Add(time.Hour), Count: 3},
	} {
		l.Count = count
		if got, ok := rs.Next(l); !ok || got != want {
			t.Errorf("count %d: %+v, %v; want %+v", count, got, ok, want)
		}
	}
	l.Count = 3
	if r, ok := rs.Next(l); ok {
		t.Errorf("count 3 = max_replays of every rule, yet replayed: %+v", r)
	}
	l.Count = 0
	if _, ok := rs.Due(l, t0.Add(time.Minute-time.Nanosecond)); ok {
		t.Error("due before the delay passed")
	}
	if _, ok := rs.Due(l, t0.Add(time.Minute)); !ok {
		t.Error("not due when the delay has passed exactly (RK-229)")
	}
	var none *replay.Rules
	if _, ok := none.Next(l); ok {
		t.Error("nil Rules replayed")
	}
}

func TestMetaRoundTripKeepsOtherKeys(t *testing.T) {
	meta := []byte(`{"tenant": "acme", "ojs.replay_count": 1, "trace": {"id": 7}}`)
	st, err := replay.ReadMeta(meta)
	if err != nil || st.Count != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	out, err := replay.WriteMeta(meta, replay.State{Count: 2, LastAt: t0, Rule: "r"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"tenant":"acme","trace":{"id": 7},"ojs.replay_count":2,"ojs.last_replayed_at":"2026-02-13T10:00:00Z","ojs.replay_rule":"r"}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	back, err := replay.ReadMeta(out)
	if err != nil || back != (replay.State{Count: 2, LastAt: t0, Rule: "r"}) {
		t.Fatalf("%+v %v", back, err)
	}
	for in, field := range map[string]string{
		`{"ojs.replay_count": -1}`:    "meta.ojs.replay_count",
		`{"ojs.replay_count": "2"}`:   "meta.ojs.replay_count",
		`{"ojs.last_replayed_at": 5}`: "meta.ojs.last_replayed_at",
		`{"ojs.replay_rule": ["x"]}`:  "meta.ojs.replay_rule",
		`[]`:                          "meta",
		`{"a": 1, "a": 2}`:            "meta",
	} {
		_, err := replay.ReadMeta([]byte(in))
		var me *replay.MetaError
		if !errors.Is(err, replay.ErrInvalidMeta) || !errors.As(err, &me) || me.Field != field {
			t.Errorf("ReadMeta(%s) = %v, want an error on %s", in, err, field)
		}
	}
}
