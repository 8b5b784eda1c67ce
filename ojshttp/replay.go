package ojshttp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/replay"
)

// The timeouts and dead-letter replay extensions on the wire:
//
//   - PUSH reads the ojs-timeouts fields timeout, total_timeout,
//     grace_period and heartbeat_timeout (integer seconds, top level or in
//     options) with package budget's parser, so the server refuses what the
//     library refuses, naming the field; a job with any of them gets that
//     time budget (executor.JobSpec.Budget). They are echoed as given.
//   - An error entry recorded for an expired limit carries the §8 fields
//     timeout_kind, limit_seconds and elapsed_seconds beside its type.
//   - Events: job.timeout, job.stalled and job.total_timeout when a limit
//     ends an attempt (§11.1), dead_letter.replayed when a replay rule
//     re-enqueues a dead letter (ojs-dead-letter §11.1).
//   - A dead letter's meta shows ojs.replay_count, ojs.last_replayed_at and
//     ojs.replay_rule once a rule has replayed it; a dead letter with a
//     replay planned shows replay_at and replay_rule; GET
//     /ojs/v1/dead-letter/replay-rules lists the rules.

// budgetFields are the ojs-timeouts envelope fields PUSH reads.
var budgetFields = []string{"timeout", "total_timeout", "grace_period", "heartbeat_timeout"}

// isBudgetField reports whether k is one of budgetFields.
func isBudgetField(k string) bool {
	for _, f := range budgetFields {
		if k == f {
			return true
		}
	}
	return false
}

// decodeBudget gives p the time budget of its timeouts fields, if any. The
// fields stay among the job's unknown fields, which the view echoes.
func decodeBudget(p *pushed) *apiError {
	var b strings.Builder
	for _, k := range budgetFields {
		v, ok := p.x.unknown[k]
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + k + `":`)
		b.Write(v)
	}
	if b.Len() == 0 {
		return nil
	}
	bud, err := budget.Parse([]byte("{" + b.String() + "}"))
	if err != nil {
		var fe *budget.FieldError
		if ve, ok := err.(*budget.ValidationError); ok && len(ve.Errors) > 0 {
			fe = ve.Errors[0]
			return invalid(fe.Field, "%s", fe.Reason)
		}
		return invalid("timeout", "%s", err.Error())
	}
	p.spec.Budget = bud
	return nil
}

// timeoutErrorFields lifts the §8 fields of an expiry's error entry into
// its error object.
func timeoutErrorFields(e executor.ErrorEntry, m map[string]any) {
	switch e.Type {
	case budget.ErrorTypeTimeout, budget.ErrorTypeStalled, budget.ErrorTypeTotalTimeout:
	default:
		return
	}
	var obj struct {
		Kind    string `json:"timeout_kind"`
		Limit   *int64 `json:"limit_seconds"`
		Elapsed *int64 `json:"elapsed_seconds"`
	}
	if json.Unmarshal(e.Details, &obj) != nil || obj.Kind == "" || obj.Limit == nil || obj.Elapsed == nil {
		return
	}
	m["timeout_kind"], m["limit_seconds"], m["elapsed_seconds"] = obj.Kind, *obj.Limit, *obj.Elapsed
}

// metaView returns the meta the view shows: the job's own, with the replay
// keys of §7.2 once a rule has replayed it.
func metaView(j executor.Job, meta json.RawMessage) json.RawMessage {
	if j.Replay.Count == 0 {
		return meta
	}
	m, err := replay.WriteMeta(meta, j.Replay)
	if err != nil {
		return meta
	}
	return m
}

// replayView adds the planned replay of a dead letter to its view.
func (s *Server) replayView(j executor.Job, v map[string]any) {
	if !j.DeadLetter {
		return
	}
	if at, rule, ok := s.exec.ReplayAt(j.ID); ok {
		v["replay_at"] = stamp(at)
		v["replay_rule"] = rule
	}
}

// replayRules serves GET /ojs/v1/dead-letter/replay-rules: the executor's
// rules and each queue's own.
func (s *Server) replayRules(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	all, perQueue := s.exec.ReplayRules()
	rules := func(rs *replay.Rules) json.RawMessage {
		b, _ := rs.MarshalJSON()
		var doc struct {
			Rules json.RawMessage `json:"replay_rules"`
		}
		_ = json.Unmarshal(b, &doc)
		return doc.Rules
	}
	queues := make(map[string]json.RawMessage, len(perQueue))
	for q, rs := range perQueue {
		queues[q] = rules(rs)
	}
	return http.StatusOK, map[string]any{"replay_rules": rules(all), "queues": queues}, nil
}

// TimedOut logs job.timeout, job.stalled or job.total_timeout when a limit
// of the job's time budget ended its attempt (ojs-timeouts §11.1); a plain
// visibility timeout logs nothing of its own (executor.Observer).
func (ev *Events) TimedOut(j executor.Job) {
	if len(j.Errors) == 0 {
		return
	}
	e := j.Errors[len(j.Errors)-1]
	typ := map[string]string{budget.ErrorTypeTimeout: "job.timeout", budget.ErrorTypeStalled: "job.stalled",
		budget.ErrorTypeTotalTimeout: "job.total_timeout"}[e.Type]
	if typ == "" {
		return
	}
	data := map[string]any{"job_id": j.ID, "job_type": j.Type, "queue": j.Queue, "attempt": e.Attempt}
	timeoutErrorFields(e, data)
	ev.add(typ, j, e.Time, data)
}

// Replayed logs dead_letter.replayed when a replay rule re-enqueues a dead
// letter (executor.ReplayObserver).
func (ev *Events) Replayed(j executor.Job) {
	ev.add("dead_letter.replayed", j, j.Replay.LastAt, map[string]any{"job_id": j.ID, "queue": j.Queue,
		"replay_count": j.Replay.Count, "replay_rule": j.Replay.Rule})
}

var _ executor.ReplayObserver = (*Events)(nil)
