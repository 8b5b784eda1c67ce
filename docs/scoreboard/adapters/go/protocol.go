//go:build ignore

// The line protocol of conformance/PROTOCOL.md (version 1), shared by the
// Go scoreboard adapters ojs_backend_redis.go and ojs_go_sdk.go: one
// request a line on standard input, one answer a line on standard output.
// It holds no retry logic: each adapter's answer function calls the
// library. Built together with one of them (BUILD.md); the build line keeps
// it out of retrykit's own module.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// request is one request line, its fields kept as the line wrote them.
type request map[string]json.RawMessage

// has reports whether the request carries field k (null included).
func (r request) has(k string) bool { _, ok := r[k]; return ok }

// str returns field k as a string, false when absent or not a string.
func (r request) str(k string) (string, bool) {
	var s string
	if raw, ok := r[k]; !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// attempt returns the request's attempt, an integer from 1 to 2^63−1.
func (r request) attempt() (int, bool) {
	n, err := strconv.ParseInt(string(r["attempt"]), 10, 64)
	return int(n), err == nil && n >= 1
}

// answer is an answer line without its id.
type answer map[string]any

// invalidPolicy answers a rejected policy or duration.
func invalidPolicy(msg string) answer {
	return answer{"error": map[string]string{"type": "validation.retry_policy_invalid", "message": msg}}
}

// invalidRequest answers a request the op cannot read.
func invalidRequest(msg string) answer {
	return answer{"error": map[string]string{"type": "validation.invalid_request", "message": msg}}
}

// serve answers every request line with answerFor until standard input
// ends, flushing whenever no more input is waiting.
func serve(answerFor func(op string, r request) answer) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		line, err := in.ReadBytes('\n')
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			out.Write(respond(line, answerFor))
			out.WriteByte('\n')
		}
		if err != nil {
			return
		}
		if in.Buffered() == 0 {
			out.Flush()
		}
	}
}

// respond returns the answer line to one request line.
func respond(line []byte, answerFor func(op string, r request) answer) []byte {
	var r request
	if json.Unmarshal(line, &r) != nil || r == nil {
		b, _ := json.Marshal(answer{"id": 0, "error": invalidRequest("not a JSON object")["error"]})
		return b
	}
	id := json.RawMessage("0")
	if raw, ok := r["id"]; ok {
		id = raw
	}
	op, _ := r.str("op")
	a := answerFor(op, r)
	a["id"] = id
	b, err := json.Marshal(a)
	if err != nil { // a number JSON cannot hold (an infinite coefficient)
		b, _ = json.Marshal(answer{"id": id, "error": map[string]string{"type": "adapter.unencodable", "message": fmt.Sprint(err)}})
	}
	return b
}
