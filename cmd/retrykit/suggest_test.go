package main

import (
	"strings"
	"testing"
)

// Mistyped command and flag names get a "did you mean"; huge ones are cut
// in the message.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"shedule"}, `unknown command "shedule" (did you mean "schedule"?)`},
		{[]string{"simualte"}, `(did you mean "simulate"?)`},
		{[]string{"help", "conformence"}, `unknown command "conformence" (did you mean "conformance"?)`},
		{[]string{"schedule", "--jsno"}, `unknown flag "-jsno" (did you mean --json?)`},
		{[]string{"schedule", "--list-profile"}, `(did you mean --list-profiles?)`},
		{[]string{"simulate", "--outgae", "1s"}, `(did you mean --outage?)`},
		{[]string{"compare", "--profil", "sidekiq"}, `unknown flag "--profil" (did you mean --profile?)`},
		{[]string{"compare", "--sgv=x.svg", "--profile", "river"}, `(did you mean --svg?)`},
		{[]string{"conformance", "--requirment", "RET-01"}, `(did you mean --requirement?)`},
		{[]string{"fuzz", "--impl", "x", "--case", "3"}, `(did you mean --cases?)`},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr lacks %q:\n%s", tc.args, code, tc.want, errOut)
		}
	}
	for _, args := range [][]string{{"frobnicate"}, {"schedule", "--colour"}} {
		_, _, errOut := runCLI(t, "", args...)
		if strings.Contains(errOut, "did you mean") {
			t.Errorf("%q: suggests something far off:\n%s", args, errOut)
		}
	}
	huge := strings.Repeat("s", 1<<20)
	code, _, errOut := runCLI(t, "", huge)
	if code != 2 || len(errOut) > 4096 || !strings.Contains(errOut, "(1048576 bytes)") {
		t.Errorf("huge command name: exit %d, %d bytes of stderr", code, len(errOut))
	}
}
