package policytest_test

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
	"pgregory.net/rapid"
)

// printTB is a minimal rapid.TB that prints the first failure message of
// the policytest properties. A test passes its *testing.T instead.
type printTB struct {
	failed bool
	msg    string
}

func (t *printTB) Helper()                         {}
func (t *printTB) Name() string                    { return "example" }
func (t *printTB) Logf(format string, args ...any) { t.Log(fmt.Sprintf(format, args...)) }
func (t *printTB) Log(args ...any) {
	if s := fmt.Sprint(args...); t.msg == "" && strings.HasPrefix(s, "policytest:") {
		t.msg = s
	}
}
func (t *printTB) Skipf(string, ...any) {}
func (t *printTB) Skip(...any)          {}
func (t *printTB) SkipNow()             {}
func (t *printTB) Errorf(string, ...any) {
	t.failed = true
}
func (t *printTB) Error(...any)          { t.failed = true }
func (t *printTB) Fatalf(string, ...any) { t.failed = true }
func (t *printTB) Fatal(...any)          { t.failed = true }
func (t *printTB) FailNow()              { t.failed = true }
func (t *printTB) Fail()                 { t.failed = true }
func (t *printTB) Failed() bool          { return t.failed }

// lateCap is an implementation with a classic bug: from the fifth attempt
// on it forgets the cap on the jittered delay.
type lateCap struct{}

func (lateCap) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (lateCap) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	resp, err := conformance.Reference().Do(ctx, req)
	if req.Op == protocol.OpDelay && resp.DelayNS != nil && req.Attempt >= 5 {
		d := *resp.DelayNS + 1
		resp.DelayNS = &d
	}
	return resp, err
}

// Differential compares an implementation with the reference on generated
// requests. In a test: rapid.Check(t, policytest.Differential(impl)).
func ExampleDifferential() {
	// rapid saves each failure under testdata/rapid unless told not to;
	// this example fails on purpose.
	prev := flag.Lookup("rapid.nofailfile").Value.String()
	_ = flag.Set("rapid.nofailfile", "true")
	defer flag.Set("rapid.nofailfile", prev)

	ok := &printTB{}
	rapid.Check(ok, policytest.Differential(conformance.Reference()))
	fmt.Println("reference failed:", ok.failed)

	bad := &printTB{}
	rapid.Check(bad, policytest.Differential(lateCap{}, protocol.OpDelay))
	fmt.Println("lateCap failed:", bad.failed)
	fmt.Println(strings.SplitN(bad.msg, "\n", 2)[0][:len("policytest: delay: delay_ns")])
	// Output:
	// reference failed: false
	// lateCap failed: true
	// policytest: delay: delay_ns
}

// The schedule properties hold for every correct implementation.
func ExampleWithinBounds() {
	for name, prop := range map[string]func(*rapid.T){
		"bounds":     policytest.WithinBounds(conformance.Reference()),
		"cap":        policytest.CapAfterJitter(conformance.Reference()),
		"monotone":   policytest.Monotone(conformance.Reference()),
		"exhaustion": policytest.Exhausts(conformance.Reference()),
	} {
		t := &printTB{}
		rapid.Check(t, prop)
		if t.failed {
			fmt.Println(name, "failed:", t.msg)
		}
	}
	fmt.Println("done")
	// Output:
	// done
}

// Generators are ordinary rapid generators: draw from them in a property,
// or look at examples.
func ExampleValidDuration() {
	for seed := range 200 {
		s := policytest.ValidDuration().Example(seed)
		if _, err := policy.ParseDuration(s); err != nil {
			fmt.Println("rejected:", s, err)
		}
	}
	fmt.Println(policytest.ValidDuration().Example(0) != "")
	// Output:
	// true
}

// SpecJSON writes a policy as an OJS document, leaving out the fields
// that have their default value.
func ExampleSpecJSON() {
	s := policy.DefaultSpec()
	s.MaxAttempts = 5
	s.NonRetryableErrors = []string{"auth.*"}
	fmt.Printf("%s\n", policytest.SpecJSON(s, nil))
	fmt.Printf("%s\n", policytest.SpecJSON(s, func(field string) bool { return field == "jitter" }))
	// Output:
	// {"max_attempts":5,"non_retryable_errors":["auth.*"]}
	// {"max_attempts":5,"jitter":true,"non_retryable_errors":["auth.*"]}
}

// Flags tells which conformance flags a request depends on; requests with
// a flag the implementation does not claim are not sent.
func ExampleFlags() {
	r := 0.1
	fmt.Println(policytest.Flags(protocol.Request{Op: protocol.OpParseDuration, Value: "P1DT2H"}))
	fmt.Println(policytest.Flags(protocol.Request{Op: protocol.OpMatch, Patterns: []string{"auth.*"}, ErrorType: "auth.x"}))
	fmt.Println(policytest.Flags(protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{"backoff_strategy":"linear"}`), Attempt: 3, Rand: &r}))
	// Output:
	// [should:date-components]
	// [should:prefix-match]
	// [extension:backoff_strategy float-tolerance]
}
