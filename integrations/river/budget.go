package riverretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
)

// BudgetKey is the key of a job's metadata object that holds its OJS time
// budget (the ojs-timeouts fields timeout, total_timeout, … in whole
// seconds), as a JSON object that budget.Parse reads.
const BudgetKey = "retrykit_timeouts"

// quotedBudgetKey is BudgetKey as it appears in JSON text.
var quotedBudgetKey = []byte(`"` + BudgetKey + `"`)

// WithBudget returns the metadata md with b written under [BudgetKey]
// (replacing any earlier one) for river.InsertOpts.Metadata; md must be a
// JSON object, empty or null, e.g. the result of [Metadata]. The other
// members are kept byte for byte. A nil b writes the default budget. Its
// error matches [ErrMetadata].
func WithBudget(md []byte, b *budget.Budget) ([]byte, error) {
	bj, _ := b.MarshalJSON() // never fails
	member := append([]byte(`"`+BudgetKey+`":`), bj...)
	if len(bytes.TrimSpace(md)) == 0 || string(bytes.TrimSpace(md)) == "null" {
		return append(append([]byte{'{'}, member...), '}'), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(md, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	out := make([]byte, 0, len(md)+len(member)+2)
	out = append(out, '{')
	err := eachMember(md, func(key string, text []byte) {
		if key != BudgetKey {
			out = append(append(out, text...), ',')
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	return append(append(out, member...), '}'), nil
}

// JobBudget returns the time budget the job carries under [BudgetKey]; ok
// is false when it carries none (no key, or null). err reports metadata
// that is not a JSON object (errors.Is [ErrMetadata]) or a budget that
// budget.Parse refuses (errors.Is budget.ErrInvalidBudget).
func JobBudget(job *rivertype.JobRow) (b *budget.Budget, ok bool, err error) {
	if job == nil {
		return nil, false, nil
	}
	b, ok, err = metadataBudget(job.Metadata)
	if errors.Is(err, budget.ErrInvalidBudget) {
		return nil, false, fmt.Errorf("riverretry: job %d %w", job.ID, err)
	}
	return b, ok, err
}

func metadataBudget(md []byte) (*budget.Budget, bool, error) {
	if !bytes.Contains(md, quotedBudgetKey) && bytes.IndexByte(md, '\\') < 0 {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(md, &m); err != nil {
		if !bytes.Contains(md, quotedBudgetKey) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	raw, ok := m[BudgetKey]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false, nil
	}
	b, err := budget.Parse(raw)
	if err != nil {
		return nil, false, fmt.Errorf("metadata %s: %w", BudgetKey, err)
	}
	return b, true, nil
}

// decideFailure is the middleware's decision for failure f of job under
// pol: the policy's alone (jitter at 0.5) when the job carries no time
// budget, else budget.Budget.DecideBeforeDraw with the job's created_at
// and the plugin's clock, since River draws the delay it uses in
// NextRetry, after this decision (docs/decisions.md RK-233). created_at is
// PostgreSQL's clock, the plugin's clock the worker's: a worker clock
// behind the database's is read as no time spent yet. why says which rule
// decided; berr is an unreadable budget (then the policy decides alone).
func (p *Plugin) decideFailure(job *rivertype.JobRow, pol *policy.Policy, f policy.Failure) (d policy.Decision, why budget.Reason, berr, derr error) {
	b, ok, berr := JobBudget(job)
	if !ok {
		d, derr = pol.DecideAt(f, 0.5)
		return d, budget.ReasonPolicy, berr, derr
	}
	now := time.Now
	if p != nil && p.now != nil {
		now = p.now
	}
	bd, derr := b.DecideBeforeDraw(pol, budget.Failure{Failure: f, CreatedAt: job.CreatedAt, At: now()})
	if derr != nil {
		return policy.Decision{}, budget.ReasonPolicy, nil, derr
	}
	if bd.Reason == budget.ReasonPolicy {
		return bd.Policy, budget.ReasonPolicy, nil, nil
	}
	return policy.Decision{Action: bd.Action, Reason: bd.Policy.Reason}, bd.Reason, nil, nil
}

// attemptContext bounds the attempt by the timeout of the job's budget, when
// it carries one; River's own job timeout (Config.JobTimeout,
// Worker.Timeout) still applies, and the shorter one wins.
func attemptContext(ctx context.Context, job *rivertype.JobRow) (context.Context, context.CancelFunc) {
	if b, ok, _ := JobBudget(job); ok {
		return context.WithTimeout(ctx, b.Spec().Timeout)
	}
	return ctx, func() {}
}
