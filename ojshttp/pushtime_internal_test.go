package ojshttp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzPushTime: pushTime never panics; a relative time it accepts is never
// before now (no sign but "+"), and an RFC 3339 one it accepts reads back
// to the same instant.
func FuzzPushTime(f *testing.F) {
	for _, s := range []string{"+PT5S", "+P1D", "2026-01-01T00:00:00Z", "+", "+-PT1S", "2026-01-01T00:00:00.5+02:00", "+PT2562047H47M16.854775807S"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		raw, _ := json.Marshal(s)
		got, err := pushTime("f", raw, now)
		if err != nil {
			return
		}
		if strings.HasPrefix(s, "+") {
			if got.Before(now) {
				t.Fatalf("%q is %v, before now", s, got)
			}
			return
		}
		want, perr := time.Parse(time.RFC3339Nano, s)
		if perr != nil || !want.Equal(got) {
			t.Fatalf("%q: %v, time.Parse says %v %v", s, got, want, perr)
		}
	})
}
