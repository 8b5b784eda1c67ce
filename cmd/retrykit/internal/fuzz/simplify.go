package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
)

// maxSimplifySteps bounds the requests simplify sends.
const maxSimplifySteps = 400

// simplify continues rapid's shrinking at the level of the request, with
// steps rapid's shrinker, which lowers one draw at a time, cannot take when
// one draw depends on another (an attempt chosen near the policy's
// max_attempts keeps max_attempts alive): it drops policy keys, array
// elements and pattern entries, lowers the attempt and integer policy fields to the smallest
// value that still disagrees (a binary search, so a bug that starts at
// attempt N ends at N), deletes duration components and characters and
// scenario steps, and
// resets rand, the error type and the code. A
// step is kept when the implementation still disagrees with the reference.
func simplify(ctx context.Context, impl protocol.Implementation, h protocol.Hello, d *policytest.Disagreement) *policytest.Disagreement {
	steps := 0
	try := func(req protocol.Request) *policytest.Disagreement {
		if steps >= maxSimplifySteps || !policytest.Claimed(h, req) {
			return nil
		}
		steps++
		dd, err := policytest.Compare(ctx, h, impl, req)
		if err != nil {
			return nil
		}
		return dd
	}
	for changed := true; changed && steps < maxSimplifySteps; {
		changed = false
		for _, cand := range candidates(d.Request) {
			if dd := try(cand); dd != nil {
				d, changed = dd, true
				break
			}
		}
		if changed {
			continue
		}
		// Binary searches: the smallest attempt, then the smallest value
		// of each integer policy field, that still disagree.
		if r := d.Request; r.Attempt > 1 {
			if dd := lowest(1, r.Attempt, func(a int64) *policytest.Disagreement {
				r.Attempt = a
				return try(r)
			}); dd != nil && dd.Request.Attempt < d.Request.Attempt {
				d, changed = dd, true
			}
		}
		fields, ok := objectFields(d.Request.Policy)
		if !ok {
			continue
		}
		for i, f := range fields {
			v, err := strconv.ParseInt(string(f.value), 10, 64)
			if err != nil || v <= 0 {
				continue
			}
			if dd := lowest(0, v, func(x int64) *policytest.Disagreement {
				r := d.Request
				g := append([]field(nil), fields...)
				g[i].value = []byte(strconv.FormatInt(x, 10))
				r.Policy = writeObject(g)
				return try(r)
			}); dd != nil && !bytes.Equal(dd.Request.Policy, d.Request.Policy) {
				d, changed = dd, true
				break
			}
		}
	}
	return d
}

// lowest returns the disagreement at the smallest x in [lo, hi] for which
// at(x) disagrees, found by binary search assuming at(hi) disagrees, or
// nil when no x below hi does.
func lowest(lo, hi int64, at func(int64) *policytest.Disagreement) *policytest.Disagreement {
	var best *policytest.Disagreement
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d := at(mid); d != nil {
			best, hi = d, mid
		} else {
			lo = mid + 1
		}
	}
	return best
}

// candidates returns simpler variants of req, simplest first.
func candidates(req protocol.Request) []protocol.Request {
	var out []protocol.Request
	if fields, ok := objectFields(req.Policy); ok {
		for i := range fields {
			r := req
			r.Policy = writeObject(append(append([]field(nil), fields[:i]...), fields[i+1:]...))
			out = append(out, r)
		}
		// One element less in an array value (non_retryable_errors).
		for i, f := range fields {
			var elems []json.RawMessage
			if json.Unmarshal(f.value, &elems) != nil {
				continue
			}
			for j := range elems {
				g := append([]field(nil), fields...)
				g[i].value, _ = json.Marshal(append(append([]json.RawMessage{}, elems[:j]...), elems[j+1:]...))
				r := req
				r.Policy = writeObject(g)
				out = append(out, r)
			}
		}
	}
	if req.Attempt > 1 {
		r := req
		r.Attempt = 1
		out = append(out, r)
	}
	if req.Rand != nil && *req.Rand != 0 {
		r, zero := req, 0.0
		r.Rand = &zero
		out = append(out, r)
	}
	if req.Error != nil && (req.Error.Type != "" || req.Error.Code != "") {
		r := req
		r.Error = &protocol.FailureInput{Code: req.Error.Code}
		out = append(out, r)
		r.Error = &protocol.FailureInput{Type: req.Error.Type}
		out = append(out, r)
	}
	if req.Op == protocol.OpScenario {
		// One step less.
		var steps []json.RawMessage
		if json.Unmarshal(req.Steps, &steps) == nil && len(steps) > 1 {
			for i := range steps {
				r := req
				r.Steps, _ = json.Marshal(append(append([]json.RawMessage{}, steps[:i]...), steps[i+1:]...))
				out = append(out, r)
			}
		}
	}
	if req.Op == protocol.OpParseDuration {
		// Whole components first, then single characters.
		for _, m := range component.FindAllStringIndex(req.Value, -1) {
			r := req
			r.Value = req.Value[:m[0]] + req.Value[m[1]:]
			if v, ok := strings.CutSuffix(r.Value, "T"); ok && len(v) > 1 {
				r.Value = v // no time component left
			}
			out = append(out, r)
		}
		for i := range req.Value {
			r := req
			_, size := utf8.DecodeRuneInString(req.Value[i:])
			r.Value = req.Value[:i] + req.Value[i+size:]
			out = append(out, r)
		}
	}
	for i := range req.Patterns {
		r := req
		r.Patterns = append(append([]string{}, req.Patterns[:i]...), req.Patterns[i+1:]...)
		out = append(out, r)
	}
	return out
}

// component matches one component of a duration string.
var component = regexp.MustCompile(`[0-9]+(\.[0-9]+)?[YMWDHS]`)

type field struct {
	key   string
	value json.RawMessage
}

// objectFields splits a JSON object into its members in order, duplicates
// kept; ok is false for anything else.
func objectFields(raw json.RawMessage) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{key, v})
	}
	return out, true
}

func writeObject(fields []field) json.RawMessage {
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.key)
		b = append(b, k...)
		b = append(b, ':')
		b = append(b, f.value...)
	}
	return append(b, '}')
}
