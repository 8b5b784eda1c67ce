package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// referenceVersion is the version the built-in reference reports in hello.
const referenceVersion = "0.1.0"

// referenceOps are the ops the reference answers.
var referenceOps = []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide, protocol.OpScenario,
	protocol.OpTimeoutDecide, protocol.OpTimeoutExpiry, protocol.OpReplay, protocol.OpExtensionDecide}

// Reference returns retrykit's own implementation (packages policy, backoff
// and errmatch, and for the scenario op the reference executor through
// [scenario.Play]) as a [protocol.Implementation]: exact to the nanosecond,
// injectable jitter, every op. Requests without rand draw from
// [backoff.Random]. The result is stateless and safe for concurrent use:
// each scenario runs on its own executor.
func Reference() protocol.Implementation { return reference{} }

type reference struct{}

var _ protocol.Implementation = reference{}

func (reference) Hello(context.Context) (protocol.Hello, error) {
	return protocol.Hello{
		Protocol:       protocol.Version,
		Implementation: "retrykit",
		Version:        referenceVersion,
		Ops:            append([]string(nil), referenceOps...),
		ResolutionNS:   1,
		Jitter:         protocol.JitterInjectable,
		Profiles:       profile.Names(),
	}, nil
}

func (reference) Do(_ context.Context, req protocol.Request) (protocol.Response, error) {
	return referenceDo(req), nil
}

// referenceDo answers req with the reference implementation. It never fails:
// every problem with the input is a rejection.
func referenceDo(req protocol.Request) protocol.Response {
	resp := protocol.Response{ID: req.ID}
	reject := func(typ string, err error) protocol.Response {
		resp.Error = &protocol.ErrorResult{Type: typ, Message: err.Error()}
		return resp
	}
	switch req.Op {
	case protocol.OpParseDuration:
		d, err := policy.ParseDuration(req.Value)
		if err != nil {
			return reject(protocol.ErrorPolicyInvalid, err)
		}
		ns := int64(d)
		resp.NS = &ns
	case protocol.OpValidate:
		p, err := policy.Parse(req.Policy)
		if err != nil {
			return reject(protocol.ErrorPolicyInvalid, err)
		}
		eff, err := p.MarshalJSON()
		if err != nil {
			return reject(protocol.ErrorPolicyInvalid, err)
		}
		resp.Effective = eff
	case protocol.OpMatch:
		// As validate rejects such an entry of non_retryable_errors
		// (policy.Parse, RK-19), so does match.
		for i, p := range req.Patterns {
			if !utf8.ValidString(p) {
				return reject(protocol.ErrorPatternInvalid, fmt.Errorf("conformance: patterns[%d]: must be valid UTF-8, got %+q", i, clipPattern(p)))
			}
		}
		m, err := errmatch.Compile(req.Patterns)
		if err != nil {
			return reject(protocol.ErrorPatternInvalid, err)
		}
		ok := m.Match(req.ErrorType)
		resp.Match = &ok
	case protocol.OpDelay, protocol.OpDecide:
		if req.Op == protocol.OpDelay && req.Profile != "" {
			return profileDelay(req, resp)
		}
		p, err := policy.Parse(req.Policy)
		if err != nil {
			return reject(protocol.ErrorPolicyInvalid, err)
		}
		if req.Attempt < 1 {
			return reject(protocol.ErrorInvalidRequest, errors.New("conformance: attempt must be ≥ 1"))
		}
		n := clampAttempt(req.Attempt)
		if req.Op == protocol.OpDelay {
			var d int64
			if req.Rand != nil {
				d = int64(p.Backoff().DelayAt(n, *req.Rand))
			} else {
				d = int64(p.Backoff().Delay(n, backoff.Random()))
			}
			resp.DelayNS = &d
			return resp
		}
		f := policy.Failure{Attempt: n}
		if req.Error != nil {
			f.ErrorType = req.Error.Type
			f.Code = errmatch.Code(req.Error.Code)
		}
		if _, err := errmatch.ParseCode(string(f.Code)); err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		var dec policy.Decision
		if req.Rand != nil {
			dec, err = p.DecideAt(f, *req.Rand)
		} else {
			dec, err = p.Decide(f, backoff.Random())
		}
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		resp.Action = dec.Action.String()
		if dec.Action == policy.Retry {
			d := int64(dec.Delay)
			resp.DelayNS = &d
		}
	case protocol.OpTimeoutDecide, protocol.OpTimeoutExpiry, protocol.OpReplay, protocol.OpExtensionDecide:
		return referenceCase(req, resp)
	case protocol.OpScenario:
		steps, err := playScenario(req)
		if err != nil {
			return reject(protocol.ErrorInvalidRequest, err)
		}
		resp.Steps = steps
	default:
		resp.Unsupported = true
	}
	return resp
}

// playScenario runs the scenario of a scenario request on a fresh reference
// executor and returns the observations as JSON. Unknown keys inside the
// config and the steps are ignored (PROTOCOL.md section 3.7).
func playScenario(req protocol.Request) (json.RawMessage, error) {
	sc := scenario.Scenario{ID: "request"}
	if err := checkScenarioRequest(req.Config, req.Steps); err != nil {
		return nil, err
	}
	if len(req.Config) > 0 {
		if err := json.Unmarshal(req.Config, &sc.Config); err != nil {
			return nil, fmt.Errorf("scenario: config: %w", err)
		}
	}
	if len(req.Steps) == 0 {
		return nil, errors.New("scenario: steps are required")
	}
	if err := json.Unmarshal(req.Steps, &sc.Steps); err != nil {
		return nil, fmt.Errorf("scenario: steps: %w", err)
	}
	if sc.Steps == nil {
		return nil, errors.New("scenario: steps must be an array")
	}
	obs, err := scenario.Play(&sc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obs)
}

// clampAttempt converts a wire attempt (≥ 1) to int, saturating on 32-bit
// platforms.
func clampAttempt(a int64) int {
	const maxInt = int64(^uint(0) >> 1)
	if a > maxInt {
		return int(maxInt)
	}
	return int(a)
}

// profileDelay answers a delay request that names a profile in place of a
// policy (PROTOCOL.md section 3.4).
func profileDelay(req protocol.Request, resp protocol.Response) protocol.Response {
	reject := func(msg string) protocol.Response {
		resp.Error = &protocol.ErrorResult{Type: protocol.ErrorInvalidRequest, Message: msg}
		return resp
	}
	if req.Policy != nil {
		return reject("conformance: profile: give a policy or a profile, not both")
	}
	p, err := profile.Lookup(req.Profile)
	if err != nil {
		return reject("conformance: " + err.Error())
	}
	if req.Attempt < 1 {
		return reject("conformance: attempt must be ≥ 1")
	}
	n := clampAttempt(req.Attempt)
	var d int64
	if req.Rand != nil {
		d = int64(p.DelayAt(n, *req.Rand))
	} else {
		d = int64(p.Delay(n, backoff.Random()))
	}
	resp.DelayNS = &d
	return resp
}

// clipPattern cuts a pattern for a message at 64 bytes.
func clipPattern(p string) string {
	if len(p) > 64 {
		return p[:64] + "…"
	}
	return p
}
