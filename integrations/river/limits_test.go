package riverretry_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/riverqueue/river"
	"pgregory.net/rapid"

	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// TestMaxAttemptsStoredByRiver: for max_attempts drawn from the whole int64
// range, the max_attempts River itself stores in PostgreSQL (its smallint
// column) is the policy's, 0 counting as 1, saturated at 32767: never
// wrapped, never refused.
func TestMaxAttemptsStoredByRiver(t *testing.T) {
	e := newEnv(t)
	c := e.client(riverretry.New(nil), nil, 0)
	ctx := context.Background()
	check := func(t interface{ Fatalf(string, ...any) }, n int64) {
		pol := `{"max_attempts":` + strconv.FormatInt(n, 10) + `}`
		res, err := c.Insert(ctx, ScriptPolicyArgs{Script: []string{"ok"}, Policy: pol}, nil)
		if err != nil {
			t.Fatalf("insert with max_attempts %d: %v", n, err)
		}
		want := int64(min(max(n, 1), math.MaxInt16))
		if got := int64(res.Job.MaxAttempts); got != want {
			t.Fatalf("max_attempts %d: River stored %d, want %d", n, got, want)
		}
	}
	for _, n := range []int64{0, 1, 2, math.MaxInt16 - 1, math.MaxInt16, math.MaxInt16 + 1, 1 << 16, 1<<31 + 1, 1<<32 + 2, math.MaxInt64} {
		check(t, n)
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.OneOf(
			rapid.Int64Range(0, math.MaxInt64),
			rapid.Int64Range(math.MaxInt16-3, math.MaxInt16+3),
			rapid.Int64Range(math.MaxInt64-3, math.MaxInt64),
		).Draw(t, "max_attempts")
		check(t, n)
	})
}

// TestMetadataKeptThroughRiver: a job's own metadata, inserted through
// River with a per-job policy, reads back from PostgreSQL with the user's
// members unchanged (jsonb normalises their order) and the policy added.
func TestMetadataKeptThroughRiver(t *testing.T) {
	e := newEnv(t)
	c := e.client(riverretry.New(nil), nil, 0)
	md := []byte(`{"tenant":"<acme & co>","z":1,"a":[1,2]}`)
	res, err := c.Insert(context.Background(), ScriptPolicyArgs{Script: []string{"ok"}, Policy: `{"max_attempts":4}`}, &river.InsertOpts{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Job.Metadata, &got); err != nil {
		t.Fatal(err)
	}
	if got["tenant"] != "<acme & co>" || got["z"] != 1.0 || got[riverretry.MetadataKey] == nil || res.Job.MaxAttempts != 4 {
		t.Errorf("stored metadata %s, max_attempts %d", res.Job.Metadata, res.Job.MaxAttempts)
	}
}
