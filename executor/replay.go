package executor

import (
	"time"

	"github.com/retrykit/retrykit/replay"
)

// Automatic replay (ojs-dead-letter §7). With WithReplayRules (for every
// queue) or WithQueueReplayRules (for one queue, in place of the executor's
// rules), a job that enters the dead letter set is matched against the
// rules (package replay): the first enabled rule that matches it and whose
// max_replays exceeds the job's replay count schedules a replay at
// discarded_at + delay. When it comes due the job is retried as by
// Executor.Retry (attempt 0, error history kept, created_at kept, so a
// total timeout still counts from it) and its Job.Replay state records the
// count, the time and the rule. A dead letter with no rule left stays. A
// manual retry, Delete or retention pruning cancels a planned replay.

// WithReplayRules sets the automatic replay rules of every queue that has
// none of its own (WithQueueReplayRules). nil means none.
func WithReplayRules(rules *replay.Rules) Option {
	return func(cfg *config) { cfg.replay = rules }
}

// WithQueueReplayRules sets the automatic replay rules of one queue ("" is
// DefaultQueue), used in place of those of WithReplayRules for its dead
// letters; nil rules give the queue none.
func WithQueueReplayRules(queue string, rules *replay.Rules) Option {
	return func(cfg *config) {
		if queue == "" {
			queue = DefaultQueue
		}
		if cfg.queueReplay == nil {
			cfg.queueReplay = map[string]*replay.Rules{}
		}
		cfg.queueReplay[queue] = rules
	}
}

// rulesFor returns the replay rules of queue.
func (e *Executor) rulesFor(queue string) *replay.Rules {
	if rs, ok := e.cfg.queueReplay[queue]; ok {
		return rs
	}
	return e.cfg.replay
}

// planReplay schedules the replay of the dead letter j, if a rule replays
// it; called when j has just entered the dead letter set.
func (e *Executor) planReplay(j *job) {
	rs := e.rulesFor(j.q.name)
	if rs == nil || e.jobs[j.id] != j || !j.dead {
		return
	}
	l := replay.Letter{Queue: j.q.name, Type: j.typ.name, DiscardedAt: nsTime(j.finished), Count: int(j.rare().replays),
		ErrorType: j.lastErrorType()}
	r, ok := rs.Next(l)
	if !ok {
		return
	}
	j.more().replayNext = r.Rule
	j.due = timeNs(r.At)
	e.schedule(j)
}

// replayDue replays the dead letter j at at (its replay time).
func (e *Executor) replayDue(j *job, at int64) {
	e.unretire(j)
	j.attempt = 0
	j.finished = never
	r := j.more()
	r.snoozes, r.prevDelay = 0, 0
	r.replays++
	r.replayAt = at
	r.replayRule = r.replayNext
	r.replayNext = ""
	e.makeReady(j, at)
	if g, ok := e.cfg.observer.(guarded); ok {
		if o, ok := g.o.(ReplayObserver); ok {
			func() {
				defer swallow()
				o.Replayed(j.snapshot(e.cfg.history))
			}()
		}
	}
}

// ReplayObserver is an Observer that also hears of automatic replays
// (ojs-dead-letter §11.1 dead_letter.replayed). The executor calls
// Replayed, under its lock as the other callbacks, when a replay rule
// re-enqueues a dead letter; the Job is then available with its new
// Job.Replay state.
type ReplayObserver interface {
	Observer
	Replayed(j Job)
}

// replayState returns j's replay record for a snapshot.
func (j *job) replayState() replay.State {
	r := j.rare()
	if r.replays == 0 {
		return replay.State{}
	}
	return replay.State{Count: int(r.replays), LastAt: nsTime(r.replayAt), Rule: r.replayRule}
}

// ReplayAt returns when the dead letter id is due to be replayed by a rule,
// and the rule's name; ok is false when no replay is planned (the job is not
// a dead letter, or no rule replays it).
func (e *Executor) ReplayAt(id string) (at time.Time, rule string, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	j := e.jobs[id]
	if j == nil || !j.dead || j.hidx < 0 {
		return time.Time{}, "", false
	}
	return nsTime(j.due), j.rare().replayNext, true
}

// ReplayRules returns the automatic replay rules: those of every queue
// (WithReplayRules, nil when none) and the queues with rules of their own
// (WithQueueReplayRules; a copy, keyed by queue name).
func (e *Executor) ReplayRules() (all *replay.Rules, perQueue map[string]*replay.Rules) {
	perQueue = make(map[string]*replay.Rules, len(e.cfg.queueReplay))
	for q, rs := range e.cfg.queueReplay {
		perQueue[q] = rs
	}
	return e.cfg.replay, perQueue
}
