package ojshttp_test

import "testing"

// TestTimeoutFieldsGivenTwiceAreRefused: an ojs-timeouts field at the top
// level and in options is refused naming it, as queue and priority are;
// neither value is dropped silently.
func TestTimeoutFieldsGivenTwiceAreRefused(t *testing.T) {
	s := newTestServer(t)
	for _, f := range []string{"timeout", "total_timeout", "grace_period", "heartbeat_timeout"} {
		code, m := s.do("POST", "/ojs/v1/jobs", `{"type":"t","args":[],"`+f+`":60,"options":{"`+f+`":30}}`)
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if code != 400 || d["field"] != f {
			t.Errorf("%s twice: %d %v", f, code, m)
		}
	}
	if n := s.exec.Len(); n != 0 {
		t.Fatalf("refused PUSHes created %d jobs", n)
	}
	// One place is enough, either one.
	for _, body := range []string{`{"type":"t","args":[],"timeout":30}`, `{"type":"t","args":[],"options":{"timeout":30}}`} {
		if v := job(s.must(201, "POST", "/ojs/v1/jobs", body)); v["timeout"] != 30.0 {
			t.Errorf("%s: view %v", body, v)
		}
	}
}

// TestOffsetsPastRFC3339AreRefused: RFC 3339 offsets run from 00:00 to
// 23:59; time.Parse also takes +24:00, which no field may.
func TestOffsetsPastRFC3339AreRefused(t *testing.T) {
	s := newTestServer(t)
	for _, f := range []string{"scheduled_at", "expires_at"} {
		for _, off := range []string{"+24:00", "-24:00", "+23:60"} {
			code, m := s.do("POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"`+f+`":"2030-01-01T00:00:00`+off+`"}}`)
			e, _ := m["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			if code != 400 || d["field"] != "options."+f {
				t.Errorf("%s %s: %d %v", f, off, code, m)
			}
		}
		s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"`+f+`":"2030-01-01T00:00:00+23:59"}}`)
	}
	code, m := s.do("GET", "/ojs/v1/dead-letter?since=2026-01-01T00:00:00%2B24:00", nil)
	if e, _ := m["error"].(map[string]any); code != 400 || e["details"].(map[string]any)["field"] != "since" {
		t.Errorf("since +24:00: %d %v", code, m)
	}
	code, m = s.do("POST", "/ojs/v1/dead-letter/retry", `{"filter":{"since":"2026-01-01T00:00:00+24:00"},"confirm":true}`)
	if code != 400 {
		t.Errorf("bulk since +24:00: %d %v", code, m)
	}
	s.must(200, "GET", "/ojs/v1/dead-letter?since=2026-01-01T00:00:00%2B23:59", nil)
}
