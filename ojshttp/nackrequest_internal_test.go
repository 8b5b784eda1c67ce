package ojshttp

import (
	"testing"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// FuzzNackRequest: the retry_after and snooze members of a FAIL are read
// as the policy's parser reads a duration, never both, never negative,
// and a refusal names the member.
func FuzzNackRequest(f *testing.F) {
	for _, s := range []string{"PT30S", "PT0S", "P1D", "PT1.5S", "", "-PT1S", "soon", "PT2562047H47M16.854775807S", "PT2562047H47M16.854775808S"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		var ra, sn *string
		switch which % 3 {
		case 0:
			ra = &s
		case 1:
			sn = &s
		default:
			ra, sn = &s, &s
		}
		r, aerr := nackRequest(ra, sn)
		want, perr := policy.ParseDuration(s)
		switch {
		case ra != nil && sn != nil:
			if aerr == nil {
				t.Fatalf("both members given: %+v accepted", r)
			}
		case perr != nil:
			if aerr == nil || aerr.details["field"] == nil {
				t.Fatalf("%q accepted as %+v, ParseDuration says %v", s, r, perr)
			}
		default:
			kind := errmatch.RetryAfter
			if sn != nil {
				kind = errmatch.Snooze
			}
			if aerr != nil || r.Kind != kind || r.Delay != want || r.Delay < 0 {
				t.Fatalf("%q: %+v %v, want %v %v", s, r, aerr, kind, want)
			}
		}
	})
}
