package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/internal/strictjson"
)

func TestObjectRefusals(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"x"`, `{"a":1,"a":2}`, `{"a":1} {}`, `{"a":1}x`, "{\"a\":\"\xff\"}", "\ufeff{}",
		`{"a":1,"b":2,"c":3,"d":4}`,
	} {
		if _, err := strictjson.Object([]byte(in), 3); !errors.Is(err, strictjson.ErrSyntax) {
			t.Errorf("Object(%q) = %v, want ErrSyntax", in, err)
		}
	}
	m, err := strictjson.Object([]byte(` {"b": [1, 2], "a": {"x": null}} `), 3)
	if err != nil || len(m) != 2 || m[0].Key != "b" || string(m[1].Value) != `{"x": null}` {
		t.Fatalf("Object = %v, %v", m, err)
	}
}

func TestInt(t *testing.T) {
	for in, want := range map[string]int64{"3": 3, "3.0": 3, "3e0": 3, "30e-1": 3, "0": 0, "-0": 0, "1e3": 1000, "0.0e99999999999": 0, "-5": -5} {
		got, reason := strictjson.Int(json.RawMessage(in), -10, 2000)
		if reason != "" || got != want {
			t.Errorf("Int(%s) = %d, %q; want %d", in, got, reason, want)
		}
	}
	for _, in := range []string{"2.5", "1e-1", `"3"`, "true", "null", "2001", "-11", "1e19", "1e999999999999999999", "99999999999999999999", "[]"} {
		if _, reason := strictjson.Int(json.RawMessage(in), -10, 2000); reason == "" {
			t.Errorf("Int(%s) accepted", in)
		}
	}
	_, reason := strictjson.Int(json.RawMessage("2.5"), 0, 9)
	if !strings.Contains(reason, "must be an integer, got the number 2.5") {
		t.Errorf("reason %q", reason)
	}
}

func ExampleObject() {
	m, err := strictjson.Object([]byte(`{"timeout": 30, "name": "x"}`), 10)
	fmt.Println(len(m), m[0].Key, string(m[0].Value), err)
	v, reason := strictjson.Int(m[0].Value, 1, 60)
	fmt.Println(v, reason == "")
	_, err = strictjson.Object([]byte(`{"a": 1, "a": 2}`), 10)
	fmt.Println(err)
	// Output:
	// 2 timeout 30 <nil>
	// 30 true
	// a: duplicate key
}
