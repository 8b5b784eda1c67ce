package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRequestProfile: a delay request naming a profile is written with
// "profile" in place of "policy" and reads back the same.
func TestRequestProfile(t *testing.T) {
	r := 0.5
	req := Request{ID: 7, Op: OpDelay, Profile: "asynq", Attempt: 2, Rand: &r}
	line := string(req.AppendJSON(nil))
	if want := `{"id":7,"op":"delay","profile":"asynq","attempt":2,"rand":0.5}`; line != want {
		t.Fatalf("line %s, want %s", line, want)
	}
	var back Request
	if err := back.UnmarshalJSON([]byte(line)); err != nil {
		t.Fatal(err)
	}
	if back.Profile != "asynq" || back.Attempt != 2 || back.Rand == nil || *back.Rand != 0.5 || back.Policy != nil {
		t.Errorf("read back %+v", back)
	}
	// Other ops never carry a profile.
	dec := Request{ID: 8, Op: OpDecide, Profile: "asynq", Attempt: 1}
	if s := string(dec.AppendJSON(nil)); strings.Contains(s, "profile") {
		t.Errorf("decide line carries a profile: %s", s)
	}
}

// TestHelloProfiles: the optional "profiles" field of hello is read and
// written, and left out when empty.
func TestHelloProfiles(t *testing.T) {
	var h Hello
	if err := json.Unmarshal([]byte(`{"protocol":1,"implementation":"x","version":"1","ops":["delay"],"resolution_ns":1,"jitter":"injectable","profiles":["river","sidekiq"]}`), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Profiles) != 2 || h.Profiles[1] != "sidekiq" || h.Check() != nil {
		t.Errorf("hello %+v", h)
	}
	h.Profiles = nil
	b, _ := json.Marshal(h)
	if strings.Contains(string(b), "profiles") {
		t.Errorf("empty profiles written: %s", b)
	}
}
