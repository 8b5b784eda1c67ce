package diagnose

import (
	"testing"

	"github.com/retrykit/retrykit/policy"
)

// FuzzReadDuration: the duration-unit family's reader never panics, keeps
// its output linear in its input, and, with every component read in its
// own unit, reads any text to the length the spec's parser gives it (or
// refuses it as the spec does).
func FuzzReadDuration(f *testing.F) {
	f.Add("PT1M", uint8(5), int64(1e6))
	f.Add("P1Y2M3DT4H5M6.789S", uint8(3), int64(0))
	f.Add("PT0.0000000005S", uint8(7), int64(1e9))
	f.Add("P", uint8(1), int64(1))
	f.Add("PT2562047H47M16.854775807S", uint8(4), int64(3600e9))
	f.Add("P99999999999999999999D", uint8(3), int64(1))
	f.Fuzz(func(t *testing.T, v string, comp uint8, unit int64) {
		comp = comp%uint8(len(durComponents)) + 1
		d := deviation{durComp: comp, durUnit: max(unit, 0)}
		out := d.readDuration(v)
		if len(out) > 2*len(v)+64 {
			t.Fatalf("%q read as %d bytes", v, len(out))
		}
		same := deviation{durComp: comp, durUnit: durComponents[comp-1].unit}
		got, err1 := policy.ParseDuration(same.readDuration(v))
		want, err2 := policy.ParseDuration(v)
		if (err1 == nil) != (err2 == nil) || err1 == nil && got != want {
			t.Fatalf("%q read in its own units: %v, %v; the spec: %v, %v", v, got, err1, want, err2)
		}
	})
}
