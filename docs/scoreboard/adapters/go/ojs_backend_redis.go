//go:build ignore

// Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
// code of the ojs-backend-redis server (github.com/openjobspec/ojs-backend-redis,
// internal/core and internal/redis), for the scoreboard. Its packages are
// internal, so the adapter is built inside a copy of that module
// (docs/scoreboard/BUILD.md), with protocol.go beside it. It answers the
// ops the code implements and adds no logic of its own beyond unit
// conversion (time.Duration is nanoseconds already):
//
//	parse_duration  core.ParseISO8601Duration(value)
//	validate        core.ParseEnqueueRequest of a PUSH body whose
//	                options.retry is the policy's text, then
//	                core.ValidateEnqueueRequest, as the PUSH handler does;
//	                the effective policy is the core.RetryPolicy it decoded
//	                (no defaults merged: the code keeps none), or
//	                core.DefaultRetryPolicy() when the body has none, the
//	                policy core.CalculateBackoff falls back to
//	delay           the same decoding, then core.CalculateBackoff(policy,
//	                attempt); it draws its jitter from math/rand's global
//	                source, which cannot be injected (jitter opaque)
//	match           redis.matchesPattern(error_type, pattern) for each
//	                pattern, as the FAIL handler (Backend.Nack) loops over
//	                non_retryable_errors; Nack also matches the error's
//	                message, which the op does not carry
//
// Both rejections of the policy (a body encoding/json cannot decode, and
// ValidateEnqueueRequest's error) are answered as
// validation.retry_policy_invalid with the code's message. The code's own
// backoff_type/backoff_strategy field (exponential, linear, constant) is
// not retrykit's backoff_strategy extension, which is declared unclaimed.
package main

import (
	"encoding/json"

	"github.com/openjobspec/ojs-backend-redis/internal/core"
	"github.com/openjobspec/ojs-backend-redis/internal/redis"
)

func main() { serve(answerFor) }

// policyOf decodes the request's policy as the PUSH handler does; a nil
// policy means the body had none (the policy absent or null).
func policyOf(r request) (*core.RetryPolicy, answer) {
	options := "{}"
	if r.has("policy") {
		options = `{"retry":` + string(r["policy"]) + `}`
	}
	req, err := core.ParseEnqueueRequest([]byte(`{"type":"retrykit.probe","args":[],"options":` + options + `}`))
	if err != nil {
		return nil, invalidPolicy(err.Error())
	}
	if e := core.ValidateEnqueueRequest(req); e != nil {
		return nil, invalidPolicy(e.Message)
	}
	return req.Options.Retry, nil
}

func answerFor(op string, r request) answer {
	switch op {
	case "hello":
		return answer{"protocol": 1, "implementation": "ojs-backend-redis-core", "version": "5b459da",
			"ops": []string{"parse_duration", "validate", "delay", "match"}, "resolution_ns": 1, "jitter": "opaque",
			// retrykit's backoff_strategy extension is not the code's
			"unclaimed_flags": []string{"extension:backoff_strategy"}}
	case "parse_duration":
		v, ok := r.str("value")
		if !ok {
			return invalidPolicy("value is not a string")
		}
		d, err := core.ParseISO8601Duration(v)
		if err != nil {
			return invalidPolicy(err.Error())
		}
		return answer{"ns": int64(d)}
	case "validate":
		p, bad := policyOf(r)
		if bad != nil {
			return bad
		}
		if p == nil {
			d := core.DefaultRetryPolicy()
			p = &d
		}
		nre := p.NonRetryableErrors
		if nre == nil {
			nre = []string{}
		}
		return answer{"effective": map[string]any{
			"max_attempts": p.MaxAttempts, "initial_interval": p.InitialInterval,
			"backoff_coefficient": p.BackoffCoefficient, "max_interval": p.MaxInterval,
			"jitter": p.Jitter, "non_retryable_errors": nre, "on_exhaustion": p.OnExhaustion,
		}}
	case "delay":
		if r.has("profile") {
			return invalidRequest("no profiles")
		}
		p, bad := policyOf(r)
		if bad != nil {
			return bad
		}
		a, ok := r.attempt()
		if !ok {
			return invalidRequest("attempt must be an integer from 1 to 2^63-1")
		}
		return answer{"delay_ns": int64(core.CalculateBackoff(p, a))}
	case "match":
		var patterns []string
		typ, ok := r.str("error_type")
		if json.Unmarshal(r["patterns"], &patterns) != nil || !ok {
			return invalidRequest("patterns (strings) and error_type")
		}
		for _, p := range patterns {
			if redis.MatchesPattern(typ, p) {
				return answer{"match": true}
			}
		}
		return answer{"match": false}
	}
	return answer{"unsupported": true}
}
