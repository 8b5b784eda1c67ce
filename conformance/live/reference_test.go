package live

import (
	"encoding/json"
	"testing"
	"time"

	scn "github.com/retrykit/retrykit/conformance/scenario"
)

// play runs a job under pol through the scenario model's reference
// executor (package conformance/scenario): fetched and failed with each of
// fails in turn, each fetch at the job's next_retry_at. It returns the
// job's state after every fail step.
func play(t *testing.T, pol retry, fails []failure) []scn.JobState {
	t.Helper()
	raw, err := json.Marshal(pol.raw())
	if err != nil {
		t.Fatal(err)
	}
	sc := &scn.Scenario{ID: "live", Steps: []scn.Step{{Op: "enqueue", Job: &scn.JobInput{ID: "j", Type: "t", Queue: "q", Retry: raw}}}}
	var at int64
	var out []scn.JobState
	for _, f := range fails {
		sc.Steps = append(sc.Steps,
			scn.Step{AtMs: at, Op: "fetch", Queues: []string{"q"}},
			scn.Step{AtMs: at, Op: "fail", ID: "j", Error: &scn.ErrorInput{Type: f.Type, Message: "m", Code: f.Code}})
		obs, err := scn.Play(sc)
		if err != nil {
			t.Fatal(err)
		}
		st := obs[len(obs)-1].Jobs["j"]
		out = append(out, st)
		if st.NextRetryAtMs != nil {
			at = *st.NextRetryAtMs
		}
	}
	return out
}

// TestExpectationsAgreeWithReference: the hand-written expectations of the
// live scenarios (from the spec's rules) agree with what retrykit's
// reference executor does with the same lifecycle, played through the
// scenario model (jitter at its default draw, a multiplier of 1).
func TestExpectationsAgreeWithReference(t *testing.T) {
	t.Run("exhaust-discard", func(t *testing.T) {
		pol := retry{max: 4, initial: 20 * ms, coef: 2, maxIv: 50 * ms}
		fails := make([]failure, pol.max)
		for i := range fails {
			fails[i] = failure{Type: "external.timeout"}
		}
		var prev int64
		for n, st := range play(t, pol, fails) {
			att := n + 1
			wantState := "retryable"
			if att == pol.max {
				wantState = "discarded"
			}
			if st.State != wantState || st.Attempt != att || st.DeadLetter {
				t.Errorf("after attempt %d: %+v, want %s", att, st, wantState)
			}
			if st.NextRetryAtMs != nil {
				lo, _ := pol.bounds(att)
				if got := time.Duration(*st.NextRetryAtMs-prev) * time.Millisecond; got != lo {
					t.Errorf("after attempt %d: delay %v, the checker expects %v", att, got, lo)
				}
				prev = *st.NextRetryAtMs
			}
		}
	})
	for _, tc := range nonRetryableCases {
		t.Run(tc.check+"/"+tc.typ, func(t *testing.T) {
			st := play(t, retry{max: 5, initial: 20 * ms, coef: 2, maxIv: time.Second, nonRetry: tc.patterns, dead: tc.dead}, []failure{{Type: tc.typ}})[0]
			want := "discarded"
			if tc.retried {
				want = "retryable"
			}
			if st.State != want || st.Attempt != 1 || st.DeadLetter != tc.dead {
				t.Errorf("%+v, the checker expects %s (dead letter %v)", st, want, tc.dead)
			}
		})
	}
	for _, tc := range codeCases {
		t.Run(tc.check, func(t *testing.T) {
			st := play(t, retry{max: 5, initial: 20 * ms, coef: 2, maxIv: time.Second, dead: !tc.dead}, []failure{{Type: "external.declined", Code: tc.code}})[0]
			if st.State != tc.state || st.DeadLetter != tc.dead {
				t.Errorf("%+v, the checker expects %s (dead letter %v)", st, tc.state, tc.dead)
			}
		})
	}
}
