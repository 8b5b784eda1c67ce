package conformance

import (
	"encoding/json"
	"fmt"
)

// checkScenarioRequest checks the numeric fields of a scenario request
// against testdata/scenarios/scenario.schema.json, which the decoded
// scenario.Config and scenario.Step cannot tell apart from their defaults
// (an explicit "delivery": 0 reads as an absent delivery, the latest one;
// a negative error_history or visibility timeout reads as the default).
// Out-of-range values are rejected by name rather than quietly replaced:
//
//	config.rand                          a number in [0, 1)
//	config.error_history                 an integer, at least 10
//	config.visibility_timeout_ms         an integer, at least 1
//	config.{finished_,}retention.max_*   integers, at least 1
//	steps[i].delivery                    an integer, at least 1
//	steps[i].job.visibility_timeout_ms   an integer, at least 1
//	steps[i].job.scheduled_at_ms         an integer, at least 0
//	steps[i].job.expires_at_ms           an integer, at least 0
//	steps[i].job.enqueue_ttl_ms          an integer, at least 1
//
// Type errors are left to the decoding that follows.
func checkScenarioRequest(config, steps json.RawMessage) error {
	type retention struct {
		MaxAgeMs *json.Number `json:"max_age_ms"`
		MaxCount *json.Number `json:"max_count"`
	}
	var c struct {
		Rand                *json.Number `json:"rand"`
		ErrorHistory        *json.Number `json:"error_history"`
		VisibilityTimeoutMs *json.Number `json:"visibility_timeout_ms"`
		Retention           *retention   `json:"retention"`
		FinishedRetention   *retention   `json:"finished_retention"`
	}
	if len(config) > 0 && json.Unmarshal(config, &c) == nil {
		if c.Rand != nil {
			if r, err := c.Rand.Float64(); err != nil || r < 0 || r >= 1 {
				return fmt.Errorf("scenario: config.rand: must be in [0, 1), got %s", *c.Rand)
			}
		}
		if err := atLeast("config.error_history", c.ErrorHistory, 10); err != nil {
			return err
		}
		if err := atLeast("config.visibility_timeout_ms", c.VisibilityTimeoutMs, 1); err != nil {
			return err
		}
		for _, r := range []struct {
			name string
			r    *retention
		}{{"config.retention", c.Retention}, {"config.finished_retention", c.FinishedRetention}} {
			if r.r == nil {
				continue
			}
			if err := atLeast(r.name+".max_age_ms", r.r.MaxAgeMs, 1); err != nil {
				return err
			}
			if err := atLeast(r.name+".max_count", r.r.MaxCount, 1); err != nil {
				return err
			}
		}
	}
	var ss []struct {
		Delivery *json.Number `json:"delivery"`
		Job      *struct {
			VisibilityTimeoutMs *json.Number `json:"visibility_timeout_ms"`
			ScheduledAtMs       *json.Number `json:"scheduled_at_ms"`
			ExpiresAtMs         *json.Number `json:"expires_at_ms"`
			EnqueueTTLMs        *json.Number `json:"enqueue_ttl_ms"`
		} `json:"job"`
	}
	if len(steps) == 0 || json.Unmarshal(steps, &ss) != nil {
		return nil
	}
	for i, s := range ss {
		if err := atLeast(fmt.Sprintf("steps[%d].delivery", i), s.Delivery, 1); err != nil {
			return err
		}
		if s.Job == nil {
			continue
		}
		if err := atLeast(fmt.Sprintf("steps[%d].job.visibility_timeout_ms", i), s.Job.VisibilityTimeoutMs, 1); err != nil {
			return err
		}
		if err := atLeast(fmt.Sprintf("steps[%d].job.scheduled_at_ms", i), s.Job.ScheduledAtMs, 0); err != nil {
			return err
		}
		if err := atLeast(fmt.Sprintf("steps[%d].job.expires_at_ms", i), s.Job.ExpiresAtMs, 0); err != nil {
			return err
		}
		if err := atLeast(fmt.Sprintf("steps[%d].job.enqueue_ttl_ms", i), s.Job.EnqueueTTLMs, 1); err != nil {
			return err
		}
	}
	return nil
}

// atLeast checks that an optional JSON number is an integer no smaller than
// min.
func atLeast(field string, n *json.Number, min int64) error {
	if n == nil {
		return nil
	}
	v, err := n.Int64()
	if err != nil {
		// Not an int64: a fraction (the decoding names the type error) or
		// beyond the range; only a negative overflow is below min.
		if len(*n) > 0 && (*n)[0] == '-' {
			return fmt.Errorf("scenario: %s: must be at least %d, got %s", field, min, clipNumber(*n))
		}
		return nil
	}
	if v < min {
		return fmt.Errorf("scenario: %s: must be at least %d, got %d", field, min, v)
	}
	return nil
}

// clipNumber cuts a number's text for a message at 32 bytes.
func clipNumber(n json.Number) string {
	if len(n) > 32 {
		return string(n[:32]) + "…"
	}
	return string(n)
}
