package temporalretry

import (
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/retrykit/retrykit/policy"
)

// FuzzHeader feeds arbitrary bytes to the header parser, both as a
// payload's raw data and as the JSON string a workflow would send. A header
// never panics; one that parses yields the policy policy.Parse gives, one
// that does not gives way to the type's policy with an error.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{
		`{"max_attempts":5,"initial_interval":"PT2S"}`,
		`{"non_retryable_errors":["auth.*"],"on_exhaustion":"dead_letter"}`,
		`{"max_attempts":-1}`, `{}`, `null`, `"x"`, ``, `{"jitter":tru`,
	} {
		f.Add([]byte(s), []byte("json/plain"))
	}
	def := policy.Default()
	i := New(def)
	f.Fuzz(func(t *testing.T, data, encoding []byte) {
		raw := &commonpb.Payload{Metadata: map[string][]byte{"encoding": encoding}, Data: data}
		if p, err := i.policyFor("a", map[string]*commonpb.Payload{HeaderKey: raw}); p == nil || (err != nil && p != def) {
			t.Fatalf("raw payload: policy %v, err %v", p, err)
		}
		pl, err := converter.GetDefaultDataConverter().ToPayload(string(data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := i.policyFor("a", map[string]*commonpb.Payload{HeaderKey: pl})
		want, werr := policy.Parse(data)
		if (err == nil) != (werr == nil) {
			t.Fatalf("header error %v, policy.Parse error %v", err, werr)
		}
		if err == nil && !got.Equal(want) {
			t.Fatalf("header policy %+v, policy.Parse %+v", got.Spec(), want.Spec())
		}
		if err != nil && got != def {
			t.Fatalf("an unreadable header gave %+v, not the default", got.Spec())
		}
	})
}
