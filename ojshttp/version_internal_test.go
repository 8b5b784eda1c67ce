package ojshttp

import (
	"strings"
	"testing"
)

// FuzzAcceptVersion: acceptVersion never panics, accepts only headers
// whose major is 1 ("1" then the end, '.', '-' or '+'), and accepts every
// "1.MINOR.PATCH" built from digits.
func FuzzAcceptVersion(f *testing.F) {
	for _, s := range []string{"", "1", "1.0", "1.0.0-rc.1", "2.0", "1.0.0+b", "1-", "1..", "01.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ok := acceptVersion(v)
		if ok && v != "" {
			if !strings.HasPrefix(v, "1") || (len(v) > 1 && !strings.ContainsRune(".-+", rune(v[1]))) {
				t.Fatalf("accepted %q, whose major is not 1", v)
			}
		}
		if d := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, v); d != "" && len(d) < 20 && !acceptVersion("1."+d+".0") {
			t.Fatalf("refused 1.%s.0", d)
		}
	})
}
