package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/profile"
)

// TestReferenceProfiles: the reference lists every profile in hello and
// answers the delay op's profile form (PROTOCOL.md 3.4.1).
func TestReferenceProfiles(t *testing.T) {
	ref := Reference()
	h, err := ref.Hello(context.Background())
	if err != nil || !slices.Equal(h.Profiles, profile.Names()) {
		t.Fatalf("hello profiles %v, %v", h.Profiles, err)
	}
	r := 0.5
	// asynq after attempt 2: n = 1, 1 + 15 + rand(30)*2 with rand(30) = 15: 46 s.
	resp, _ := ref.Do(context.Background(), protocol.Request{Op: protocol.OpDelay, Profile: "asynq", Attempt: 2, Rand: &r})
	if resp.DelayNS == nil || *resp.DelayNS != 46e9 {
		t.Errorf("asynq attempt 2: %+v", resp)
	}
	for _, req := range []protocol.Request{
		{Op: protocol.OpDelay, Profile: "nope", Attempt: 1},
		{Op: protocol.OpDelay, Profile: "river", Attempt: 0},
		{Op: protocol.OpDelay, Profile: "river", Attempt: 1, Policy: json.RawMessage(`{}`)},
	} {
		resp, _ := ref.Do(context.Background(), req)
		if resp.Error == nil || resp.Error.Type != protocol.ErrorInvalidRequest {
			t.Errorf("%+v: answer %+v, want invalid_request", req, resp)
		}
	}
	// Without rand the reference draws its own: inside the bounds.
	resp, _ = ref.Do(context.Background(), protocol.Request{Op: protocol.OpDelay, Profile: "river", Attempt: 3})
	if resp.DelayNS == nil || *resp.DelayNS < 72.9e9 || *resp.DelayNS > 89.1e9 {
		t.Errorf("river attempt 3 own draw: %+v", resp)
	}
}
