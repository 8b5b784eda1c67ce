package policytest_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/policytest"
)

// The README's policytest fragment ("Fuzzing"), line for line
// (TestSnippetsMarked in the root package checks it), compiled and run here
// with retrykit's own reference implementation as myImpl.
var myImpl = conformance.Reference()

func TestAgreesWithRetrykit(t *testing.T) {
	rapid.Check(t, policytest.Differential(myImpl)) // shrinks and prints sent, expected, got
}

func TestScheduleProperties(t *testing.T) {
	t.Run("bounds", rapid.MakeCheck(policytest.WithinBounds(myImpl)))
	t.Run("cap after jitter", rapid.MakeCheck(policytest.CapAfterJitter(myImpl)))
	t.Run("monotone", rapid.MakeCheck(policytest.Monotone(myImpl)))
	t.Run("exhaustion", rapid.MakeCheck(policytest.Exhausts(myImpl)))
}
