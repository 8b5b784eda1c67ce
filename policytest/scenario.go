package policytest

import (
	"encoding/json"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
	"pgregory.net/rapid"
)

// scenarioStep is a step of the scenario op on the wire: a scenario step
// without its expectation (PROTOCOL.md section 3.7).
type scenarioStep struct {
	AtMs   int64                `json:"at_ms"`
	Op     string               `json:"op"`
	Job    *scenario.JobInput   `json:"job,omitempty"`
	ID     string               `json:"id,omitempty"`
	Queues []string             `json:"queues,omitempty"`
	Queue  string               `json:"queue,omitempty"`
	Error  *scenario.ErrorInput `json:"error,omitempty"`
	Retry  json.RawMessage      `json:"retry,omitempty"`
}

var (
	jobIDs      = []string{"a", "b", "c"}
	queueNames  = []string{"q", "r"}
	timeSteps   = []int64{0, 1, 999, 1000, 1001, 2000, 5000, 10000, 60000, 300000}
	jobTimeouts = []int64{0, 1000, 5000, 30000}
	// Every step op, with enqueue, fetch and fail more often, so that
	// jobs reach retries, exhaustion and dead letters.
	stepOps = append(scenario.Ops(), "enqueue", "fetch", "fetch", "fail", "fail", "fail")
)

// drawJobPolicy draws a retry policy whose delays fit a scenario's
// timeline (milliseconds to minutes), or nil for the default policy.
func drawJobPolicy(t *rapid.T) json.RawMessage {
	if rapid.Bool().Draw(t, "default_policy") {
		return nil
	}
	var w objectWriter
	w.field("max_attempts", scenarioPick1.Draw(t, "max_attempts"))
	w.field("initial_interval", scenarioPick2.Draw(t, "initial_interval"))
	w.field("max_interval", scenarioPick3.Draw(t, "max_interval"))
	if rapid.Bool().Draw(t, "no_jitter") {
		w.field("jitter", "false")
	}
	if rapid.Bool().Draw(t, "patterns") {
		w.field("non_retryable_errors", `["auth.*","io.timeout"]`)
	}
	if rapid.Bool().Draw(t, "dead_letter") {
		w.field("on_exhaustion", `"dead_letter"`)
	}
	if rapid.Bool().Draw(t, "strategy") {
		w.field("backoff_strategy", scenarioPick4.Draw(t, "backoff_strategy"))
	}
	return w.close()
}

func drawStep(t *rapid.T, at int64) scenarioStep {
	st := scenarioStep{AtMs: at, Op: stepOps[intRange(0, len(stepOps)-1).Draw(t, "step_op")]}
	id := jobIDs[intRange(0, len(jobIDs)-1).Draw(t, "job")]
	queue := queueNames[intRange(0, len(queueNames)-1).Draw(t, "queue")]
	switch st.Op {
	case "enqueue":
		j := &scenario.JobInput{ID: id, Type: "email.send", Queue: queue, Retry: drawJobPolicy(t),
			VisibilityTimeoutMs: jobTimeouts[intRange(0, len(jobTimeouts)-1).Draw(t, "job_timeout")]}
		if rapid.Bool().Draw(t, "scheduled") {
			s := at + timeSteps[intRange(0, len(timeSteps)-1).Draw(t, "scheduled_in")]
			j.ScheduledAtMs = &s
		}
		j.Pending = intRange(0, 5).Draw(t, "pending") == 5
		st.Job = j
	case "fetch":
		st.Queues = []string{queue}
		if rapid.Bool().Draw(t, "both_queues") {
			st.Queues = queueNames
		}
	case "pause", "resume":
		st.Queue = queue
	case "fail":
		st.ID = id
		st.Error = &scenario.ErrorInput{Type: scenarioPick5.Draw(t, "error_type"), Message: "m", Code: scenarioPick6.Draw(t, "code")}
	case "retry":
		st.ID = id
		if rapid.Bool().Draw(t, "override") {
			st.Retry = drawJobPolicy(t)
		}
	case "tick":
	default: // ack, heartbeat, cancel, activate
		st.ID = id
	}
	return st
}

func drawScenario(t *rapid.T) protocol.Request {
	var cfg scenario.Config
	if rapid.Bool().Draw(t, "config_rand") {
		r := drawJitter(t)
		cfg.Rand = &r
	}
	cfg.ErrorHistory = scenarioPick7.Draw(t, "error_history")
	cfg.VisibilityTimeoutMs = jobTimeouts[intRange(0, len(jobTimeouts)-1).Draw(t, "visibility_timeout")]
	if rapid.Bool().Draw(t, "retention") {
		cfg.Retention = &scenario.Retention{MaxAgeMs: scenarioPick8.Draw(t, "max_age"), MaxCount: intRange(0, 2).Draw(t, "max_count")}
	}
	steps := make([]scenarioStep, intRange(1, 16).Draw(t, "steps"))
	at := int64(0)
	for i := range steps {
		at += timeSteps[intRange(0, len(timeSteps)-1).Draw(t, "after")]
		steps[i] = drawStep(t, at)
	}
	config, _ := json.Marshal(cfg)
	raw, _ := json.Marshal(steps)
	return protocol.Request{Op: protocol.OpScenario, Config: config, Steps: raw}
}

// Generators of fixed choices, built once.
var scenarioPick1 = rapid.SampledFrom([]string{"3", "1", "2", "0", "4"})
var scenarioPick2 = rapid.SampledFrom([]string{`"PT1S"`, `"PT0.1S"`, `"PT2S"`, `"PT0.001S"`})
var scenarioPick3 = rapid.SampledFrom([]string{`"PT5M"`, `"PT5S"`, `"PT1M"`, `"PT2S"`})
var scenarioPick4 = rapid.SampledFrom([]string{`"none"`, `"linear"`, `"polynomial"`})
var scenarioPick5 = rapid.SampledFrom([]string{"smtp.unavailable", "auth.expired", "io.timeout", ""})
var scenarioPick6 = rapid.SampledFrom([]string{"", "RETRY", "DISCARD", "DEAD_LETTER", "FAIL"})
var scenarioPick7 = rapid.SampledFrom([]int{0, 10, 11, 20})
var scenarioPick8 = rapid.SampledFrom([]int64{0, 1000, 10000})
