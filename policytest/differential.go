package policytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"pgregory.net/rapid"
)

// Disagreement is one request on which an implementation and the reference
// differ: what was sent, what the reference answered (Want), what the
// implementation answered (Got), and why [conformance.Judge] rejects it.
// Flags are the vector flags of the request ([Flags]). A Disagreement is
// plain data.
type Disagreement struct {
	Request protocol.Request
	Want    protocol.Response
	Got     protocol.Response
	Reason  string
	Flags   []string
}

// Error returns the three answers side by side, one per line:
//
//	policytest: delay: delay_ns: got 1000000001, want 1000000000
//	  sent:     {"id":1,"op":"delay","attempt":1,"rand":0.5}
//	  expected: {"id":1,"delay_ns":1000000000}
//	  got:      {"id":1,"delay_ns":1000000001}
func (d *Disagreement) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policytest: %s: %s\n", d.Request.Op, d.Reason)
	fmt.Fprintf(&b, "  sent:     %s\n", d.Request.AppendJSON(nil))
	fmt.Fprintf(&b, "  expected: %s\n", d.Want.AppendJSON(nil))
	fmt.Fprintf(&b, "  got:      %s", d.Got.AppendJSON(nil))
	return b.String()
}

// Compare sends req to impl and to [conformance.Reference] and judges the
// answer with [conformance.Judge], given impl's hello h. Before sending,
// req's Rand is removed when h declares opaque jitter (the answer is then
// checked against the jitter bounds). It returns nil when impl agrees, a
// *Disagreement when it does not, [ErrUnsupported] for an "unsupported"
// answer, and an error when impl.Do fails (a crashed or hung adapter). Compare does not check h.UnclaimedFlags; see
// [Claimed].
func Compare(ctx context.Context, h protocol.Hello, impl protocol.Implementation, req protocol.Request) (*Disagreement, error) {
	if h.Jitter == protocol.JitterOpaque {
		req.Rand = nil
	}
	got, err := impl.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if got.Unsupported {
		return nil, ErrUnsupported
	}
	return Judge(h, req, got), nil
}

// ErrUnsupported is returned by [Compare] when the implementation answers
// "unsupported" (PROTOCOL.md section 3.8): the case is not covered, which
// is neither an agreement nor a disagreement.
var ErrUnsupported = errors.New("policytest: the implementation answered unsupported")

// Judge is the second half of [Compare]: it computes the reference's answer
// to req and judges got against it. It returns nil when got passes, and
// for an "unsupported" answer (PROTOCOL.md section 3.8: the case is not
// covered, as an opaque-jitter adapter answers scenarios with jitter).
func Judge(h protocol.Hello, req protocol.Request, got protocol.Response) *Disagreement {
	if got.Unsupported {
		return nil
	}
	want, _ := conformance.Reference().Do(context.Background(), req)
	if conformance.Judge(h, req, want, got) == "" {
		return nil // agreement without any tolerance: the common case, no flags needed
	}
	flags := Flags(req)
	reason := conformance.Judge(h, req, want, got, flags...)
	if reason == "" {
		return nil
	}
	got.ID, want.ID = req.ID, req.ID
	return &Disagreement{Request: req, Want: want, Got: got, Reason: reason, Flags: flags}
}

// Claimed reports whether the implementation that sent h claims every flag
// of req ([Flags]); requests it does not claim are not sent.
func Claimed(h protocol.Hello, req protocol.Request) bool {
	if len(h.UnclaimedFlags) == 0 {
		return true
	}
	for _, f := range Flags(req) {
		if !h.Claims(f) {
			return false
		}
	}
	return true
}

// Flags returns the conformance vector flags (testdata/vectors/README.md)
// that apply to req:
//
//   - "extension:backoff_strategy": the policy has a backoff_strategy key;
//   - "should:date-components": a duration (the value, or a string of the
//     policy) uses years, months or days;
//   - "should:prefix-match": a pattern list (match, or the policy's) has an
//     entry ending in ".*";
//   - "float-tolerance": the delay involves float64 rounding that an exact
//     implementation does not share: a fractional coefficient with the
//     exponential or polynomial strategy, a jitter draw whose shortest
//     decimal (the wire form) is not its exact binary value, or a jitter
//     product base·(0.5+r) that float64 cannot hold exactly.
func Flags(req protocol.Request) []string {
	var flags []string
	add := func(ok bool, f string) {
		if ok {
			flags = append(flags, f)
		}
	}
	switch req.Op {
	case protocol.OpParseDuration:
		add(hasDateComponent(req.Value), "should:date-components")
	case protocol.OpMatch:
		prefix := false
		for _, p := range req.Patterns {
			prefix = prefix || strings.HasSuffix(p, ".*")
		}
		add(prefix, "should:prefix-match")
	case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
		add(bytes.Contains(req.Policy, []byte(`"backoff_strategy"`)), "extension:backoff_strategy")
		add(policyHasDate(req.Policy), "should:date-components")
		add(bytes.Contains(req.Policy, []byte(`.*"`)), "should:prefix-match")
		if req.Op != protocol.OpValidate {
			add(floatRounding(req), "float-tolerance")
		}
	}
	return flags
}

// hasDateComponent reports whether the duration string s has a Y, or an M
// or D before any T.
func hasDateComponent(s string) bool {
	if !strings.HasPrefix(s, "P") || len(s) < 3 || s[1] < '0' || s[1] > '9' {
		return false // not a duration with a date part ("PT…", "polynomial")
	}
	date, _, _ := strings.Cut(s[1:], "T")
	return strings.ContainsAny(date, "YMD")
}

// policyHasDate reports whether any string in the JSON text raw is a
// duration with a date component.
func policyHasDate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		j := bytes.IndexByte(raw[i+1:], '"')
		if j < 0 {
			return false
		}
		if hasDateComponent(string(raw[i+1 : i+1+j])) {
			return true
		}
		i += j + 1
	}
	return false
}

// floatRounding reports whether the delay of a delay or decide request is
// computed with float64 rounding: a fractional coefficient on the
// exponential or polynomial strategy, or jitter whose product with the base
// delay is not exact in float64.
func floatRounding(req protocol.Request) bool {
	p := policyOf(req.Policy)
	if p == nil || req.Attempt < 1 {
		return false
	}
	c := p.Backoff().Config()
	if (c.Strategy == backoff.Exponential || c.Strategy == backoff.Polynomial) && c.Coefficient != math.Trunc(c.Coefficient) {
		return true
	}
	if !c.Jitter {
		return false
	}
	if req.Rand == nil {
		return true
	}
	// The wire carries r as its shortest decimal text; an implementation
	// that reads that text exactly (rational arithmetic) and one that reads
	// the float64 differ when the two values differ (228797/2^18 is written
	// 0.8727912902832031), by a nanosecond at an integer boundary.
	text, _ := new(big.Rat).SetString(strconv.FormatFloat(*req.Rand, 'g', -1, 64))
	if text == nil || text.Cmp(new(big.Rat).SetFloat64(*req.Rand)) != 0 {
		return true
	}
	// r = R/2^k with k ≤ 52 fraction bits makes 0.5 + r = m/2^max(k,1)
	// exact, with m = 2^(k-1) + R (m = 1 for r = 0); the product
	// base·m/2^k is then exact in float64 when base·m < 2^53.
	r := *req.Rand
	k := 0
	for ; r != math.Trunc(r); k++ {
		if k == 52 {
			return true
		}
		r *= 2
	}
	m := uint64(1)
	if k > 0 {
		m = 1<<(k-1) + uint64(r)
	}
	base := uint64(p.Backoff().Base(clampAttempt(req.Attempt)))
	hi, lo := bits.Mul64(base, m)
	return hi != 0 || lo >= 1<<53
}

func clampAttempt(a int64) int {
	if a > math.MaxInt {
		return math.MaxInt
	}
	return int(a)
}

// Differential returns a property for [rapid.Check] that generates a
// request ([Request]) for one of ops (default: every op of [Ops] that impl
// lists in its hello), sends it to impl and fails with a [Disagreement],
// shrunk by rapid to a minimal request, when impl's answer differs from
// the reference's ([Compare]). Requests carrying a flag impl does not
// claim are not sent. impl's Hello is called once, on the first case.
//
//	func TestMyQueueAgreesWithRetrykit(t *testing.T) {
//		rapid.Check(t, policytest.Differential(myqueue.ConformanceImpl()))
//	}
func Differential(impl protocol.Implementation, ops ...string) func(*rapid.T) {
	var (
		once  sync.Once
		h     protocol.Hello
		herr  error
		use   []string
		ctx   = context.Background()
		askOp = ops
	)
	return func(t *rapid.T) {
		once.Do(func() {
			h, herr = impl.Hello(ctx)
			if herr != nil {
				return
			}
			if len(askOp) == 0 {
				askOp = allOps
			}
			for _, op := range askOp {
				if h.Supports(op) && requestGens[op] != nil {
					use = append(use, op)
				}
			}
			if len(use) == 0 {
				herr = fmt.Errorf("policytest: the implementation lists none of the ops %v", askOp)
			}
		})
		if herr != nil {
			t.Fatalf("policytest: hello: %v", herr)
		}
		op := use[intRange(0, len(use)-1).Draw(t, "op")]
		req := requestGens[op].Draw(t, "request")
		req.ID = 1
		if !Claimed(h, req) {
			t.Skip("policytest: the implementation does not claim a flag of this request")
		}
		d, err := Compare(ctx, h, impl, req)
		if errors.Is(err, ErrUnsupported) {
			return // not covered: nothing to compare
		}
		if err != nil {
			t.Fatalf("policytest: %s: the implementation failed: %v", op, err)
		}
		if d != nil {
			t.Fatal(d.Error())
		}
	}
}
