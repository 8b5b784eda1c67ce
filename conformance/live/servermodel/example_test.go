package servermodel_test

import (
	"fmt"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

func ExampleDiagnose() {
	one, zero := 1, 0
	obs := []servermodel.Obs{{
		// A policy without max_attempts, failed once: the server answered
		// discarded, max_attempts 0, where the merged policy retries.
		Check: "http-partial-max-attempts", Kind: servermodel.FailAnswer,
		Policy: map[string]any{"initial_interval": "PT0.02S", "jitter": false}, N: 1,
		Failure: servermodel.Failure{Type: "external.timeout", Message: "boom"},
		State:   "discarded", Attempt: &one, MaxAttempts: &zero,
	}, {
		// The first FETCH showed attempt 1: right. The model answers it
		// as the reference does, so this pass does not test it.
		Check: "http-attempt-absolute", Kind: servermodel.FetchAttempt, N: 1, Attempt: &one,
	}}
	found, unexplained := servermodel.Diagnose(obs, map[string]bool{"http-partial-max-attempts": true, "http-attempt-absolute": false})
	for _, f := range found {
		fmt.Printf("%s: explains %v, passes replayed %v\n", f.Model.Name, f.Explains, f.Replayed)
	}
	fmt.Println("unexplained:", unexplained)
	// Output:
	// no-merge-max-attempts: explains [http-partial-max-attempts], passes replayed []
	// unexplained: []
}
