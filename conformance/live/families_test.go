package live_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

// familySeed is the seed of TestRandomFamilyParameters: $RETRYKIT_FAMILY_SEED
// when set (to replay a logged run), else the clock.
func familySeed(t *testing.T) uint64 {
	if s := os.Getenv("RETRYKIT_FAMILY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RETRYKIT_FAMILY_SEED: %v", err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// plantedCase is one server bug drawn from a family, with the name the
// diagnosis must give it.
type plantedCase struct {
	want   string
	params ojsfault.Params
	jitter [2]float64 // a jitter range, or zero
}

// drawFamilies draws one parameter for each family of the live diagnosis
// that a parameterised planted fault plants.
func drawFamilies(r *rand.Rand) []plantedCase {
	pick := func(xs ...float64) float64 { return xs[r.IntN(len(xs))] }
	pickInt := func(xs ...int) int { return xs[r.IntN(len(xs))] }
	strategies := []backoff.Strategy{backoff.None, backoff.Linear, backoff.Exponential, backoff.Polynomial}
	from := strategies[r.IntN(len(strategies))]
	to := from
	for to == from {
		to = strategies[r.IntN(len(strategies))]
	}
	k := pick(0.5, 1.5, 2, 3)
	e := pickInt(-1, 1, 2)
	x := pickInt(-2, -1, 1, 2)
	lo, hi := pick(0.7, 0.75, 0.8, 0.85, 0.9), pick(1.1, 1.15, 1.2, 1.25, 1.3)
	return []plantedCase{
		{want: fmt.Sprintf("time-factor(×%g)", k), params: ojsfault.Params{TimeFactor: k}},
		{want: fmt.Sprintf("exponent-offset(%+d)", e), params: ojsfault.Params{ExponentOffset: e}},
		{want: fmt.Sprintf("exhaustion-offset(%+d)", x), params: ojsfault.Params{ExhaustShift: x}},
		{want: fmt.Sprintf("strategy-as(%v→%v)", from, to), params: ojsfault.Params{StrategySet: true, StrategyFrom: from, StrategyTo: to}},
		{want: fmt.Sprintf("jitter-range([%g,%g))", lo, hi), jitter: [2]float64{lo, hi}},
	}
}

// TestRandomFamilyParameters: a server with one bug of a family, its
// parameter drawn at random (the seed is logged), comes out as exactly one
// cause, that family with the parameter drawn.
func TestRandomFamilyParameters(t *testing.T) {
	seed := familySeed(t)
	t.Logf("seed %d (replay with RETRYKIT_FAMILY_SEED=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	for _, tc := range drawFamilies(r) {
		t.Run(tc.want, func(t *testing.T) {
			// the server's jitter draws come from the seed too, so a
			// replay draws the same values (the scenarios, run side by
			// side, may still take them in another order)
			var src backoff.Source = rand.New(rand.NewPCG(seed, 0x717))
			if tc.jitter != [2]float64{} {
				var err error
				if src, err = ojsfault.JitterSource(tc.jitter[0], tc.jitter[1], src); err != nil {
					t.Fatal(err)
				}
			}
			srv := ojshttp.New(executor.New(executor.WithRand(src)))
			ojsfault.PlantParams(srv, tc.params)
			defer ojsfault.PlantParams(srv, ojsfault.Params{})
			hs := httptest.NewServer(srv)
			defer hs.Close()
			rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0))
			if err == nil && rep.OK() {
				t.Logf("not caught in a first run; played again") // a loaded host, as TestPlantedFaults
				rep, err = live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0))
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.OK() {
				t.Fatalf("the report is OK: the planted %s was not caught", tc.want)
			}
			rep = judged(t, rep)
			if len(rep.Causes) != 1 || !names(rep.Causes[0], tc.want) {
				t.Errorf("causes %q, want %s alone; failures %q", causeNames(rep), tc.want, bad(rep))
				for _, c := range rep.Causes {
					t.Logf("cause %s: %q; %s", c.Class, c.IDs, c.Reproduction)
				}
			}
			for _, res := range rep.Results {
				if res.Status == conformance.StatusError {
					t.Errorf("%s errored: %s", res.ID, res.Reason)
				}
			}
		})
	}
}
