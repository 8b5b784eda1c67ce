package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// comparison holds what the runner needs to judge one answer.
type comparison struct {
	hello protocol.Hello
	// bounds, when set, replaces an exact expected delay: the implementation
	// has opaque jitter and the vector's policy has jitter on.
	bounds *[2]int64
	// floatTol widens delay comparisons for vectors flagged
	// "float-tolerance": |got − want| ≤ max(1ns, want·2⁻⁴⁰) also passes.
	floatTol bool
}

// compare judges got against the vector's expectation. It returns "" when
// the answer passes, else the reason it fails. For an implementation-defined
// vector, any acceptable outcome passes.
func (c comparison) compare(v *Vector, got protocol.Response) string {
	if v.want.Acceptable == nil {
		return c.compareOne(v.Kind, &v.want, got)
	}
	var reasons []string
	for i := range v.want.Acceptable {
		r := c.compareOne(v.Kind, &v.want.Acceptable[i], got)
		if r == "" {
			return ""
		}
		reasons = append(reasons, r)
	}
	return "matches none of the acceptable outcomes: " + strings.Join(reasons, " | ")
}

func (c comparison) compareOne(kind string, w *outcome, got protocol.Response) string {
	if w.Error != "" {
		if got.Error == nil {
			return fmt.Sprintf("want error %s, got a result", w.Error)
		}
		if got.Error.Type != w.Error && !(w.Error == protocol.ErrorPatternInvalid && got.Error.Type == protocol.ErrorPolicyInvalid) {
			return fmt.Sprintf("error type: got %s, want %s", got.Error.Type, w.Error)
		}
		var missing []string
		for _, f := range w.ErrorFields {
			if !strings.Contains(got.Error.Message, f) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("error message %q does not name %s", got.Error.Message, strings.Join(missing, ", "))
		}
		return ""
	}
	if got.Error != nil {
		return fmt.Sprintf("want a result, got error %s: %s", got.Error.Type, got.Error.Message)
	}
	switch kind {
	case kindDuration:
		if got.NS == nil {
			return "answer has no ns"
		}
		if w.NS == nil {
			return c.within("ns", *got.NS, *w.MinNS, *w.MaxNS, "bounds")
		}
		return c.nanos("ns", *got.NS, *w.NS)
	case kindValidate:
		return c.effective(w.Effective, got.Effective)
	case kindMatch:
		if got.Match == nil {
			return "answer has no match"
		}
		if *got.Match != *w.Match {
			return fmt.Sprintf("match: got %v, want %v", *got.Match, *w.Match)
		}
		return ""
	case kindTimeoutDecide, kindTimeoutExpiry, kindReplay, kindExtensionDecide:
		return c.result(w.Result, got.Result)
	case kindDecide:
		if got.Action != w.Action {
			return fmt.Sprintf("action: got %q, want %q", got.Action, w.Action)
		}
		if w.Action != "retry" {
			return ""
		}
		fallthrough
	case kindDelay:
		if got.DelayNS == nil {
			return "answer has no delay_ns"
		}
		d := *got.DelayNS
		switch {
		case c.bounds != nil:
			return c.within("delay_ns", d, c.bounds[0], c.bounds[1], "jitter bounds (opaque jitter)")
		case w.DelayNS != nil:
			return c.nanos("delay_ns", d, *w.DelayNS)
		default:
			return c.within("delay_ns", d, *w.MinNS, *w.MaxNS, "bounds")
		}
	}
	return "unknown kind " + kind
}

// asSent rewrites "FIELD: got N" in a reason with the number as the answer
// wrote it, when that text is not N: "delay_ns: got 1e30 (read as
// 9223372036854775807)" rather than the saturated value the adapter never
// sent.
func asSent(reason string, got protocol.Response) string {
	var m map[string]json.RawMessage
	if reason == "" || json.Unmarshal(got.AppendJSON(nil), &m) != nil {
		return reason
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"ns", got.NS}, {"delay_ns", got.DelayNS}} {
		if f.v == nil {
			continue
		}
		if text, n := string(m[f.name]), strconv.FormatInt(*f.v, 10); text != "" && text != n {
			reason = strings.Replace(reason, f.name+": got "+n, f.name+": got "+text+" (read as "+n+")", 1)
		}
	}
	return reason
}

// nanos compares two nanosecond values within the declared resolution.
func (c comparison) nanos(field string, got, want int64) string {
	diff := absDiff(got, want)
	if diff < uint64(c.hello.ResolutionNS) {
		return ""
	}
	if c.floatTol && float64(diff) <= math.Max(1, math.Abs(float64(want))*0x1p-40) {
		return ""
	}
	if c.hello.ResolutionNS > 1 {
		return fmt.Sprintf("%s: got %d, want %d (±%d)", field, got, want, c.hello.ResolutionNS-1)
	}
	return fmt.Sprintf("%s: got %d, want %d", field, got, want)
}

// within checks lo − res < got < hi + res.
func (c comparison) within(field string, got, lo, hi int64, what string) string {
	res := uint64(c.hello.ResolutionNS)
	if (got >= lo || absDiff(got, lo) < res) && (got <= hi || absDiff(got, hi) < res) {
		return ""
	}
	return fmt.Sprintf("%s: got %d, outside %s [%d, %d]", field, got, what, lo, hi)
}

func absDiff(a, b int64) uint64 {
	if a > b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}

// effective compares two effective policies field by field (PROTOCOL.md
// section 5, rule 2).
func (c comparison) effective(wantRaw, gotRaw json.RawMessage) string {
	if gotRaw == nil {
		return "answer has no effective policy"
	}
	var want, got map[string]json.RawMessage
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		return "vector effective: " + err.Error()
	}
	if err := json.Unmarshal(gotRaw, &got); err != nil || got == nil {
		return fmt.Sprintf("effective is not a JSON object: %s", gotRaw)
	}
	var diffs []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			if k == "backoff_strategy" && !c.hello.Claims("extension:backoff_strategy") {
				continue
			}
			diffs = append(diffs, k+": missing")
			continue
		}
		if d := c.field(k, want[k], g); d != "" {
			diffs = append(diffs, d)
		}
	}
	var extra []string
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		diffs = append(diffs, clip([]byte(k))+": unexpected field")
	}
	if len(diffs) > maxDiffs {
		diffs = append(diffs[:maxDiffs], fmt.Sprintf("and %d more", len(diffs)-maxDiffs))
	}
	return strings.Join(diffs, "; ")
}

// Bounds on the work and the text spent on one answer, whatever the
// adapter sends (answers are at most 1 MiB, protocol.MaxLineBytes).
const (
	// maxAnswerDuration is the longest duration string of an effective
	// policy the runner parses; the longest the suite expects has 26
	// bytes.
	maxAnswerDuration = 256
	// maxAnswerNumber is the longest number literal the runner compares
	// exactly.
	maxAnswerNumber = 64
	// maxDiffs is how many differences of one effective policy a
	// failure reason lists.
	maxDiffs = 10
)

// maxReportedAnswer is the longest answer a result keeps as its Got; a
// longer one is replaced by a JSON string naming its length, so that a
// report stays small whatever the adapter answers.
const maxReportedAnswer = 4 << 10

// reportedAnswer returns answer, or for one longer than maxReportedAnswer
// a JSON string with its length and its first bytes.
func reportedAnswer(answer []byte) json.RawMessage {
	if len(answer) <= maxReportedAnswer {
		return answer
	}
	b, _ := json.Marshal(fmt.Sprintf("answer of %d bytes, not kept; it begins %s", len(answer), answer[:200]))
	return b
}

// clip returns b as text, cut after 200 bytes with the full length named.
func clip(b []byte) string {
	const max = 200
	if len(b) <= max {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:max], len(b))
}

func (c comparison) field(k string, want, got json.RawMessage) string {
	switch k {
	case "initial_interval", "max_interval":
		var ws, gs string
		if json.Unmarshal(want, &ws) != nil {
			return k + ": vector value is not a string"
		}
		if err := json.Unmarshal(got, &gs); err != nil {
			return fmt.Sprintf("%s: got %s, want a duration string", k, clip(got))
		}
		if len(gs) > maxAnswerDuration {
			// Checked before parsing: the work per answer stays small
			// whatever the adapter sends (PROTOCOL.md section 5, rule 2).
			return fmt.Sprintf("%s: got a duration string of %d bytes, longer than the %d the runner reads", k, len(gs), maxAnswerDuration)
		}
		wd, err := policy.ParseDuration(ws)
		if err != nil {
			return fmt.Sprintf("%s: vector value %q: %v", k, ws, err)
		}
		gd, err := policy.ParseDuration(gs)
		if err != nil {
			return fmt.Sprintf("%s: got %q, not a valid OJS duration (%v)", k, gs, err)
		}
		if d := c.nanos(k, int64(gd), int64(wd)); d != "" {
			return fmt.Sprintf("%s: got %q, want %q", k, gs, ws)
		}
		return ""
	case "max_attempts", "backoff_coefficient":
		wn, ok1 := ratOf(want)
		gn, ok2 := ratOf(got)
		if !ok1 || !ok2 || wn.Cmp(gn) != 0 {
			return fmt.Sprintf("%s: got %s, want %s", k, clip(got), want)
		}
		return ""
	}
	var wv, gv any
	if json.Unmarshal(want, &wv) != nil || json.Unmarshal(got, &gv) != nil || !reflect.DeepEqual(wv, gv) {
		return fmt.Sprintf("%s: got %s, want %s", k, clip(got), want)
	}
	return ""
}

// ratOf reads a JSON number exactly. A literal longer than
// maxAnswerNumber bytes is not read (exact decimal conversion is not linear
// in the number's length); no number a vector expects is that long.
func ratOf(raw json.RawMessage) (*big.Rat, bool) {
	var n json.Number
	if len(raw) == 0 || len(raw) > maxAnswerNumber || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return nil, false
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return r, ok
}

// result compares the result object of a timeout_decide, timeout_expiry or
// replay answer with the vector's: the same keys, numbers by exact value
// (delay_ns within the resolution), everything else by JSON value.
func (c comparison) result(wantRaw, gotRaw json.RawMessage) string {
	var want, got map[string]json.RawMessage
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		return "vector result: " + err.Error()
	}
	if err := json.Unmarshal(gotRaw, &got); err != nil {
		return fmt.Sprintf("result: got %s, want an object", clip(gotRaw))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			diffs = append(diffs, "result."+k+": missing, want "+string(want[k]))
			continue
		}
		wn, isNum := ratOf(want[k])
		switch {
		case k == "delay_ns" && isNum:
			gn, ok := ratOf(g)
			if !ok || !gn.IsInt() || !wn.IsInt() {
				diffs = append(diffs, fmt.Sprintf("result.delay_ns: got %s, want %s", clip(g), want[k]))
			} else if d := c.nanos("result.delay_ns", clampInt64(gn), clampInt64(wn)); d != "" {
				diffs = append(diffs, d)
			}
		case isNum:
			if gn, ok := ratOf(g); !ok || gn.Cmp(wn) != 0 {
				diffs = append(diffs, fmt.Sprintf("result.%s: got %s, want %s", k, clip(g), want[k]))
			}
		default:
			var wv, gv any
			if json.Unmarshal(want[k], &wv) != nil || json.Unmarshal(g, &gv) != nil || !reflect.DeepEqual(wv, gv) {
				diffs = append(diffs, fmt.Sprintf("result.%s: got %s, want %s", k, clip(g), want[k]))
			}
		}
	}
	var extra []string
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, "result."+clip([]byte(k))+": unexpected field")
		}
	}
	sort.Strings(extra)
	diffs = append(diffs, extra...)
	return strings.Join(diffs, "; ")
}

// clampInt64 returns the integer r saturated to the int64 range.
func clampInt64(r *big.Rat) int64 {
	n := r.Num()
	if n.IsInt64() {
		return n.Int64()
	}
	if n.Sign() < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}
