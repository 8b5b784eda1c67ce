package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
)

// TestDeadLetterRetryRefusesWhatPushRefuses: a dead letter's retry body is
// read as strictly as a PUSH (RK-163, RK-164): bytes that are not UTF-8
// and repeated keys anywhere in it are refused naming the path, and the
// job stays a dead letter.
func TestDeadLetterRetryRefusesWhatPushRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body, field string }{
		{"invalid UTF-8 in override.args", "{\"override\":{\"args\":[\"ok\xff\"]}}", "override.args[0]"},
		{"invalid UTF-8 in override.meta", "{\"override\":{\"meta\":{\"k\":\"\xc3\"}}}", "override.meta.k"},
		{"a lone surrogate in override.meta", `{"override":{"meta":{"k":"\ud800"}}}`, "override.meta.k"},
		{"invalid UTF-8 in a meta key", "{\"override\":{\"meta\":{\"\xff\":1}}}", "override.meta.\uFFFD"},
		{"retry.max_attempts twice", `{"override":{"retry":{"max_attempts":2,"max_attempts":9}}}`, "override.retry.max_attempts"},
		{"meta twice", `{"override":{"meta":{"a":1},"meta":{"b":2}}}`, "override.meta"},
		{"args twice", `{"override":{"args":[1],"args":[2]}}`, "override.args"},
		{"priority twice", `{"override":{"priority":1,"priority":2}}`, "override.priority"},
		{"queue twice", `{"override":{"queue":"a","queue":"b"}}`, "override.queue"},
		{"override twice", `{"override":{"queue":"a"},"override":{"queue":"b"}}`, "override"},
		{"a key twice inside meta", `{"override":{"meta":{"k":1,"k":2}}}`, "override.meta.k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			id := s.deadLetter("dl", "t", "boom")
			code, m := s.do("POST", "/ojs/v1/dead-letter/"+id+"/retry", tc.body)
			e, _ := m["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			if code != 400 || d["field"] != tc.field {
				t.Fatalf("%d %v, want 400 naming %q", code, m, tc.field)
			}
			if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["state"]; st != "discarded" {
				t.Fatalf("a refused retry changed the dead letter: state %v", st)
			}
		})
	}
}

// TestStructBodiesRefuseKeysDifferingInCase: encoding/json matches a
// struct field whatever the case of the key, so FETCH with "queues" and
// "QUEUES" would read one of them silently; it is refused naming it.
func TestStructBodiesRefuseKeysDifferingInCase(t *testing.T) {
	s := newTestServer(t)
	s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"b"}}`)
	for path, body := range map[string]string{
		"/ojs/v1/workers/fetch": `{"queues":["a"],"QUEUES":["b"]}`,
		"/ojs/v1/workers/nack":  `{"job_id":"x","error":{"message":"m","MESSAGE":"n"}}`,
		"/ojs/v1/jobs":          `{"type":"t","args":[],"options":{"unique":{"keys":["type"],"Keys":["args"]}}}`,
	} {
		code, m := s.do("POST", path, body)
		if code != 400 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "differs only in case") {
			t.Errorf("POST %s %s: %d %v", path, body, code, m)
		}
	}
	if n := s.exec.Len(); n != 1 {
		t.Fatalf("%d jobs", n)
	}
}

// TestRetryErrorsNameTheFullPath: a policy error names the field inside
// the policy, under the policy's own place in the body.
func TestRetryErrorsNameTheFullPath(t *testing.T) {
	s := newTestServer(t)
	for body, field := range map[string]string{
		`{"type":"t","args":[],"options":{"retry":{"max_attempts":-1}}}`:                                 "options.retry.max_attempts",
		`{"type":"t","args":[],"retry":{"initial_interval_ms":1000,"initial_interval":"PT1S"}}`:          "retry.initial_interval_ms",
		`{"type":"t","args":[],"options":{"retry":{"non_retryable_errors":["a",1]}}}`:                    "options.retry.non_retryable_errors[1]",
		`{"type":"t","args":[],"options":{"retry":{"backoff_type":"linear","backoff_strategy":"none"}}}`: "options.retry.backoff_type",
	} {
		code, m := s.do("POST", "/ojs/v1/jobs", body)
		e := m["error"].(map[string]any)
		if code != 422 || e["details"].(map[string]any)["field"] != field || !strings.HasPrefix(e["message"].(string), field+": ") {
			t.Errorf("%s: %d %v, want 422 naming %s", body, code, e, field)
		}
	}
	id := s.deadLetter("dl", "t", "boom")
	code, m := s.do("POST", "/ojs/v1/dead-letter/"+id+"/retry", `{"override":{"retry":{"max_attempts":2.5}}}`)
	if e := m["error"].(map[string]any); code != 422 || e["details"].(map[string]any)["field"] != "override.retry.max_attempts" {
		t.Fatalf("override: %d %v", code, e)
	}
}

// TestOneIntegerRuleOnTheWire: every integer field of a body follows
// RK-10 (3000.0 is 3000), as the library's policy fields do.
func TestOneIntegerRuleOnTheWire(t *testing.T) {
	s := newTestServer(t)
	v := job(s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"q","timeout_ms":3000.0,"visibility_timeout_ms":4e3,"priority":2.0,"retry":{"max_attempts":3.0,"initial_interval_ms":1000.0}}}`))
	if v["timeout_ms"] != 3000.0 || v["priority"] != 2.0 {
		t.Fatalf("view %v", v)
	}
	if m := s.must(200, "POST", "/ojs/v1/workers/fetch", `{"queues":["q"],"count":1.0}`); len(m["jobs"].([]any)) != 1 {
		t.Fatalf("fetch %v", m)
	}
	for _, body := range []string{
		`{"type":"t","args":[],"options":{"timeout_ms":30.5}}`,
		`{"type":"t","args":[],"options":{"retry":{"initial_interval_ms":1000.5}}}`,
	} {
		if code, m := s.do("POST", "/ojs/v1/jobs", body); code < 400 {
			t.Errorf("%s: %d %v", body, code, m)
		}
	}
}

// mutateRetry returns doc changed the way a client's encoder or a hostile
// one might: an ISO interval in the binding's millisecond spelling, an
// integer written as 3.0, a repeated key, a byte that is not UTF-8 in a
// string, backoff_type beside or instead of backoff_strategy.
func mutateRetry(t *rapid.T, doc []byte) []byte {
	switch rapid.IntRange(0, 7).Draw(t, "mutation") {
	case 1:
		re := regexp.MustCompile(`"(initial|max)_interval":\s*"PT(\d{1,4})S"`)
		return re.ReplaceAll(doc, []byte(`"${1}_interval_ms":${2}000`))
	case 2:
		return regexp.MustCompile(`("max_attempts":\s*)(\d{1,3})([,}])`).ReplaceAll(doc, []byte(`${1}${2}.0${3}`))
	case 3:
		if bytes.HasPrefix(doc, []byte("{\"")) {
			return append([]byte(`{"jitter":true,`), doc[1:]...)
		}
	case 4:
		if i := bytes.IndexByte(doc, '"'); i >= 0 {
			return append(append(append([]byte{}, doc[:i+1]...), 0xff), doc[i+1:]...)
		}
	case 5:
		if bytes.HasPrefix(doc, []byte("{")) && !bytes.HasPrefix(doc, []byte("{}")) {
			bt := rapid.SampledFrom([]string{"constant", "linear", "Exponential", "polynomial", "random", "none"}).Draw(t, "backoff_type")
			return append([]byte(`{"backoff_type":"`+bt+`",`), doc[1:]...)
		}
	case 6:
		return regexp.MustCompile(`"backoff_strategy"`).ReplaceAll(doc, []byte(`"backoff_type"`))
	case 7:
		return regexp.MustCompile(`"initial_interval":\s*"PT(\d{1,4})S"`).ReplaceAll(doc, []byte(`"initial_interval":"PT${1}S","initial_interval_ms":1000`))
	}
	return doc
}

// TestPropEveryRouteReadsAPolicyAsTheLibraryDoes: a generated or mutated
// retry policy is accepted by PUSH (in options and at the top level), by
// batch PUSH and by a dead letter's retry override exactly when
// policy.ParseWith with the binding dialect accepts it (over the dead
// letter's policy for an override): one reading on every path (STYLE 16).
func TestPropEveryRouteReadsAPolicyAsTheLibraryDoes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := mutateRetry(t, policytest.Policy().Draw(t, "policy"))
		if len(bytes.TrimSpace(doc)) == 0 || !json.Valid(doc) && !bytes.Contains(doc, []byte{0xff}) {
			t.Skip("not embeddable as a value")
		}
		_, libErr := policy.ParseWith(doc, policy.BindingDialect())
		clock := executor.NewFakeClock(start)
		h := ojshttp.New(executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(0.5))), ojshttp.WithManualClock(clock))
		call := func(path, body string) (int, string) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			return rec.Code, rec.Body.String()
		}
		verdict := func(route string, code int, answer string, lib error) {
			if (code < 300) != (lib == nil) {
				t.Fatalf("%s: %d %s; library: %v\npolicy %q", route, code, answer, lib, doc)
			}
		}
		c, a := call("/ojs/v1/jobs", `{"type":"p","args":[],"options":{"queue":"p","retry":`+string(doc)+`}}`)
		verdict("PUSH options.retry", c, a, libErr)
		c, a = call("/ojs/v1/jobs", `{"type":"p","args":[],"retry":`+string(doc)+`}`)
		verdict("PUSH retry", c, a, libErr)
		c, a = call("/ojs/v1/jobs/batch", `{"jobs":[{"type":"p","args":[]},{"type":"p","args":[],"options":{"retry":`+string(doc)+`}}]}`)
		verdict("batch PUSH", c, a, libErr)

		base := `{"max_attempts":1,"initial_interval":"PT3S","backoff_strategy":"linear","on_exhaustion":"dead_letter"}`
		basePol, err := policy.Parse([]byte(base))
		if err != nil {
			t.Fatal(err)
		}
		if c, a := call("/ojs/v1/jobs", `{"type":"d","args":[],"options":{"queue":"dl","retry":`+base+`}}`); c != 201 {
			t.Fatalf("push: %d %s", c, a)
		}
		var f struct{ Jobs []struct{ ID string } }
		_, a = call("/ojs/v1/workers/fetch", `{"queues":["dl"]}`)
		if json.Unmarshal([]byte(a), &f) != nil || len(f.Jobs) != 1 {
			t.Fatalf("fetch: %s", a)
		}
		call("/ojs/v1/workers/nack", `{"job_id":"`+f.Jobs[0].ID+`","error":{"message":"x"}}`)
		_, overErr := policy.ParseWith(doc, policy.Over(basePol), policy.BindingDialect())
		c, a = call("/ojs/v1/dead-letter/"+f.Jobs[0].ID+"/retry", `{"override":{"retry":`+string(doc)+`}}`)
		verdict("dead-letter retry override.retry", c, a, overErr)
	})
}

// bodyRoutes are the routes that read a JSON body, each with a valid body
// and how deep encoding/json fills fixed fields from it (strictjson.FoldKeys;
// 0 for a body read as a map).
var bodyRoutes = []struct {
	method, path, body string
	fold               int
}{
	{"POST", "/ojs/v1/jobs", `{"type":"t.a","args":["x",1],"meta":{"k":"v"},"options":{"queue":"q","retry":{"max_attempts":3}}}`, 0},
	{"POST", "/ojs/v1/jobs/batch", `{"jobs":[{"type":"t.a","args":["x"],"meta":{"k":"v"}}]}`, 2},
	{"POST", "/ojs/v1/workers/fetch", `{"queues":["q"],"count":1,"worker_id":"w"}`, 2},
	{"POST", "/ojs/v1/workers/ack", `{"job_id":"none","result":{"k":"v"}}`, 2},
	{"POST", "/ojs/v1/workers/nack", `{"job_id":"none","error":{"type":"e","message":"m","details":{"a":"b"}}}`, 2},
	{"POST", "/ojs/v1/workers/heartbeat", `{"worker_id":"w","active_job_ids":["x"]}`, 2},
	{"POST", ojshttp.AdminClockPath, `{"advance_ms":1}`, 2},
	{"POST", "/ojs/v1/dead-letter/none/retry", `{"override":{"queue":"q","args":["x"],"meta":{"k":"v"}}}`, 0},
	{"POST", "/ojs/v1/dead-letter/retry", `{"filter":{"queue":"q"},"confirm":true}`, 0},
	{"POST", ojshttp.ResetPath, `{"k":"v"}`, 0},
	{"PUT", "/ojs/v1/admin/queues/q/rate-limit", `{"concurrency":2,"rate":{"limit":5,"period":"PT1M"}}`, 0},
	{"POST", "/ojs/v1/admin/workers/w/quiet", `{"k":"v"}`, 0},
}

// mutateBody changes a valid body the way a careless or hostile client
// might: a key repeated (at the top or deeper), a byte that is not UTF-8
// or a lone surrogate escape in a string or key, a key repeated in
// another case.
func mutateBody(t *rapid.T, body string) string {
	quotes := []int{}
	for i := range len(body) {
		if body[i] == '"' {
			quotes = append(quotes, i)
		}
	}
	objects := []int{}
	for i := range len(body) {
		if body[i] == '{' && i+1 < len(body) && body[i+1] == '"' {
			objects = append(objects, i)
		}
	}
	firstKey := func(at int) string {
		end := strings.IndexByte(body[at+2:], '"')
		return body[at+2 : at+2+end]
	}
	switch rapid.IntRange(0, 4).Draw(t, "mutation") {
	case 0: // a key repeated in some object
		at := rapid.SampledFrom(objects).Draw(t, "object")
		return body[:at+1] + `"` + firstKey(at) + `":null,` + body[at+1:]
	case 1: // a byte that is not UTF-8
		at := rapid.SampledFrom(quotes).Draw(t, "quote")
		return body[:at+1] + "\xff" + body[at+1:]
	case 2: // a lone surrogate
		at := rapid.SampledFrom(quotes).Draw(t, "quote")
		return body[:at+1] + `\udc00` + body[at+1:]
	case 3: // a key repeated in another case
		at := rapid.SampledFrom(objects).Draw(t, "object")
		return body[:at+1] + `"` + strings.ToUpper(firstKey(at)) + `":null,` + body[at+1:]
	}
	return body
}

// TestPropEveryRouteReadsABodyAsTheLibraryDoes: every route that reads a
// body refuses a mutated body, with 400 naming the same path, exactly when
// the library's reader (strictjson.Check) refuses it, and never reports a
// repeated key or bad UTF-8 in a body the library accepts.
func TestPropEveryRouteReadsABodyAsTheLibraryDoes(t *testing.T) {
	clock := executor.NewFakeClock(start)
	h := ojshttp.New(executor.New(executor.WithClock(clock)), ojshttp.WithManualClock(clock), ojshttp.WithReset())
	rapid.Check(t, func(t *rapid.T) {
		rt := rapid.SampledFrom(bodyRoutes).Draw(t, "route")
		body := mutateBody(t, rt.body)
		var opts []strictjson.Option
		if rt.fold > 0 {
			opts = append(opts, strictjson.FoldKeys(rt.fold))
		}
		libErr := strictjson.Check([]byte(body), opts...)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
		req.Header.Set("Content-Type", ojshttp.MediaType)
		h.ServeHTTP(rec, req)
		var m struct {
			Error struct {
				Message string
				Details struct{ Field string }
			}
		}
		json.Unmarshal(rec.Body.Bytes(), &m)
		strictRefusal := strings.Contains(m.Error.Message, "duplicate key") || strings.Contains(m.Error.Message, "not valid UTF-8")
		var fe *strictjson.FieldError
		switch {
		case libErr == nil && strictRefusal:
			t.Fatalf("%s %q: %d %s; the library accepts it", rt.path, body, rec.Code, rec.Body)
		case libErr != nil && rec.Code != 400:
			t.Fatalf("%s %q: %d %s; the library refuses it: %v", rt.path, body, rec.Code, rec.Body, libErr)
		case (errors.Is(libErr, strictjson.ErrDuplicateKey) || errors.Is(libErr, strictjson.ErrInvalidUTF8)) && !strictRefusal:
			t.Fatalf("%s %q: %d %s; the library refuses it: %v", rt.path, body, rec.Code, rec.Body, libErr)
		case libErr != nil && !strictRefusal:
			// bad JSON: 400 invalid_payload, no field
		case errors.As(libErr, &fe) && m.Error.Details.Field != fe.Path && !(fe.Path == "" && m.Error.Details.Field == "(body)"):
			t.Fatalf("%s %q: field %q, the library names %q", rt.path, body, m.Error.Details.Field, fe.Path)
		}
	})
}

// TestEnvelopeErrorsNameWhereTheFieldWasGiven: an envelope attribute may sit
// at the top level or in options; a refusal names it where the client put it.
func TestEnvelopeErrorsNameWhereTheFieldWasGiven(t *testing.T) {
	s := newTestServer(t)
	for body, field := range map[string]string{
		`{"type":"t","args":[],"scheduled_at":"2030-01-01T00:00:00+24:00"}`:             "scheduled_at",
		`{"type":"t","args":[],"options":{"scheduled_at":"2030-01-01T00:00:00+24:00"}}`: "options.scheduled_at",
		`{"type":"t","args":[],"queue":"bad queue"}`:                                    "queue",
		`{"type":"t","args":[],"options":{"queue":"bad queue"}}`:                        "options.queue",
	} {
		code, m := s.do("POST", "/ojs/v1/jobs", body)
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if code != 400 || d["field"] != field {
			t.Errorf("%s: %d %v, want 400 naming %s", body, code, e, field)
		}
	}
}
