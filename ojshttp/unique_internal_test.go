package ojshttp

import (
	"encoding/json"
	"testing"
)

// FuzzUnique: parseUnique never panics on any JSON; for an accepted policy
// the uniqueness key is a 64-digit hex SHA-256 and depends on the values
// of args and meta, not on their spelling: key order, whitespace, number
// forms (§4.2: keys sorted at every level, RFC 8785-style numbers).
func FuzzUnique(f *testing.F) {
	for _, s := range [][3]string{
		{`{"keys":["type","queue","args"],"args_keys":["user_id"],"period":"PT1H","on_conflict":"reject"}`, `[{"user_id":42,"t":"w"}]`, `{}`},
		{`{"keys":["meta"],"meta_keys":["tenant"],"states":["completed","active"]}`, `[]`, `{"tenant":"acme","trace":"x"}`},
		{`{"keys":["args"]}`, `[{"b":[1,{"y":2,"x":1}],"a":1.0},"s",null]`, `{}`},
		{`{"keys":["args","meta"],"meta_keys":["k"]}`, `[ 1e2 , {"z":0,"a":-0.5} ]`, `{ "k" : [true] }`},
		{`{"on_conflict":"ignore","period":"P1000Y"}`, `[]`, `{}`},
		{`{}`, `[1e400]`, `{}`}, {`null`, `[]`, `{}`}, {`{"keys":"args"}`, `[]`, `{}`},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pol, args, meta string) {
		u, err := parseUnique(json.RawMessage(pol))
		if err != nil {
			if err.code != CodeInvalidRequest {
				t.Fatalf("%s: code %s", pol, err.code)
			}
			return
		}
		if !json.Valid([]byte(args)) || !json.Valid([]byte(meta)) {
			return
		}
		k1, err1 := uniqueKey(u, "t", "q", json.RawMessage(args), json.RawMessage(meta))
		if err1 != nil {
			return
		}
		if len(k1) != 64 {
			t.Fatalf("key %q", k1)
		}
		// The same values written another way: keys sorted, no
		// whitespace, numbers re-spelled (1.0 as 1, 1e2 as 100).
		var a, m any
		json.Unmarshal([]byte(args), &a)
		json.Unmarshal([]byte(meta), &m)
		ra, _ := json.Marshal(a)
		rm, _ := json.Marshal(m)
		k2, err2 := uniqueKey(u, "t", "q", ra, rm)
		if err2 != nil || k2 != k1 {
			t.Fatalf("reordered %s %s: key %q (%v), want %q", ra, rm, k2, err2, k1)
		}
	})
}
