package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/ojshttp"
)

// TestReplayRulesNamingNoQueueAreRefused: --queue-replay-rules with a name
// no queue can have, or a rule whose filter.queue no job can be in, is
// refused at startup naming the flag and the field, not accepted to never
// match.
func TestReplayRulesNamingNoQueueAreRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, filterQueue string) string {
		p := filepath.Join(dir, name)
		f := `{}`
		if filterQueue != "" {
			f = `{"queue":"` + filterQueue + `"}`
		}
		if err := os.WriteFile(p, []byte(`{"replay_rules":[{"name":"r","filter":`+f+`,"delay":"PT1M","max_replays":2}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", "")
	for _, tc := range []struct {
		all      string
		perQueue []string
		want     string
		isQueue  bool
	}{
		{"", []string{"BAD Q=" + good}, `--queue-replay-rules BAD Q=`, true},
		{"", []string{"-x=" + good}, `--queue-replay-rules -x=`, true},
		{"", []string{"billing=" + write("bad.json", "Billing Q")}, "replay_rules[0].filter.queue", true},
		{write("all.json", "has space"), nil, "--replay-rules", true},
		{"", []string{"billing=" + write("other.json", "email")}, `"email" in the rules of queue "billing"`, false},
	} {
		_, err := replayOptions(tc.all, tc.perQueue)
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.isQueue != errors.Is(err, ojshttp.ErrQueueName) {
			t.Errorf("%q %q: %v, want an error containing %q (ErrQueueName %v)", tc.all, tc.perQueue, err, tc.want, tc.isQueue)
		}
	}
	if _, err := replayOptions(write("ok.json", "billing"), []string{"billing=" + write("ok2.json", "billing")}); err != nil {
		t.Fatalf("valid rules: %v", err)
	}
}
