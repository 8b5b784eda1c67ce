package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// planted is the reference with one fault of the timeouts or dead-letter
// extension planted by rewriting requests or answers — written apart from
// the bug models of package diagnose, as a real implementation's bug
// would be.
type planted struct {
	fault func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response
}

func (p planted) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (p planted) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	ref := func(r protocol.Request) protocol.Response {
		a, _ := conformance.Reference().Do(ctx, r)
		return a
	}
	return p.fault(req, ref), nil
}

func caseOf(t *testing.T, req protocol.Request) map[string]any {
	var c map[string]any
	if err := json.Unmarshal(req.Case, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Each planted fault — the §9.1 boundary off by one, a timed-out attempt
// that is not counted, max_replays off by one — fails vectors, and the
// report names exactly that bug as the one cause of every failure.
func TestPlantedTimeoutAndReplayFaultsAreNamed(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	faults := map[string]func(protocol.Request, func(protocol.Request) protocol.Response) protocol.Response{
		// discards a retry whose attempt would end exactly at the deadline
		"budget-boundary-inclusive": func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			a := ref(req)
			if req.Op != protocol.OpTimeoutDecide || a.Result == nil {
				return a
			}
			var res struct {
				Action  string `json:"action"`
				DelayNS int64  `json:"delay_ns"`
			}
			_ = json.Unmarshal(a.Result, &res)
			c := caseOf(t, req)
			tj, _ := json.Marshal(c["timeouts"])
			b, err := budget.Parse(tj)
			if res.Action != "retry" || err != nil || c["timeouts"] == nil || b.Spec().TotalTimeout == 0 {
				return a
			}
			pj, _ := json.Marshal(c["policy"])
			p, _ := policy.Parse(pj)
			used := time.Duration(c["now_ms"].(float64)-c["created_at_ms"].(float64)) * time.Millisecond
			if used+time.Duration(res.DelayNS)+b.Spec().Timeout == b.Spec().TotalTimeout {
				a.Result, _ = json.Marshal(map[string]string{"action": p.Spec().OnExhaustion.String()})
			}
			return a
		},
		// decides as if the attempt that timed out or stalled had not happened
		"timeout-not-an-attempt": func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			if req.Op != protocol.OpTimeoutDecide {
				return ref(req)
			}
			c := caseOf(t, req)
			e, _ := c["error"].(map[string]any)
			n, _ := c["attempt"].(float64)
			if typ, _ := e["type"].(string); (typ == "timeout" || typ == "stalled") && n > 1 {
				c["attempt"] = n - 1
				req.Case, _ = json.Marshal(c)
			}
			return ref(req)
		},
		// counts replays from zero after the first: one replay too many
		"max-replays-off-by-one": func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			if req.Op != protocol.OpReplay {
				return ref(req)
			}
			c := caseOf(t, req)
			l, _ := c["letter"].(map[string]any)
			meta, _ := l["meta"].(map[string]any)
			n, _ := meta["ojs.replay_count"].(float64)
			if n < 1 {
				return ref(req)
			}
			meta["ojs.replay_count"] = n - 1
			req.Case, _ = json.Marshal(c)
			a := ref(req)
			var res map[string]any
			if json.Unmarshal(a.Result, &res) == nil && res["replay"] == true {
				res["replay_count"] = res["replay_count"].(float64) + 1
				a.Result, _ = json.Marshal(res)
			}
			return a
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), planted{fault})
			bad := rep.Totals.Fail + rep.Totals.Error
			if bad == 0 {
				t.Fatal("no vector catches the fault")
			}
			if len(rep.Causes) != 1 || rep.Causes[0].Class != "bug:"+name || !rep.Causes[0].Reproduced ||
				len(rep.Causes[0].IDs) != bad || rep.Causes[0].PassesReplayed == nil {
				for _, c := range rep.Causes {
					t.Errorf("cause %s ×%d reproduced %v", c.Class, len(c.IDs), c.Reproduced)
				}
				t.Fatalf("%d failures not named as the one bug %s", bad, name)
			}
			t.Logf("%s: %d failures, all named", name, bad)
		})
	}
}
