package executor

import (
	"github.com/retrykit/retrykit/replay"
	"github.com/retrykit/retrykit/retrybudget"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// Defaults used by New when no option overrides them.
const (
	// defaultErrorHistory is how many error entries a job keeps (ojs-retry
	// §10.1 asks for at least 10).
	defaultErrorHistory = 20
	// defaultVisibilityTimeout is the reservation period of a fetched job
	// that did not set its own.
	defaultVisibilityTimeout = 30 * time.Minute
	// defaultRetentionMaxAge is how long a dead-lettered job is kept
	// (ojs-dead-letter §5.2: P180D).
	defaultRetentionMaxAge = 180 * 24 * time.Hour
	// defaultRetentionMaxCount is how many dead-lettered jobs are kept
	// (ojs-dead-letter §5.2).
	defaultRetentionMaxCount = 10000
	// defaultFinishedMaxAge and defaultFinishedMaxCount bound the other
	// finished jobs: a day, and 10000 per queue and state.
	defaultFinishedMaxAge   = 24 * time.Hour
	defaultFinishedMaxCount = 10000
	// defaultFinishedMaxTotal bounds them over all queues together (RK-86),
	// so that many queues cannot multiply the per-queue limit.
	defaultFinishedMaxTotal = 100000
	// maxErrorHistory is the largest error history WithErrorHistory
	// accepts (2^20 entries per job).
	maxErrorHistory = 1 << 20
	// minErrorHistory is the floor of ojs-retry §10.1 (RET-15).
	minErrorHistory = 10
)

// config holds the executor's knobs; see the With... options.
type config struct {
	clock       Clock
	rand        backoff.Source
	history     int
	maxAge      time.Duration // dead letters
	maxCount    int
	finMaxAge   time.Duration // other finished jobs
	finMaxCount int
	finMaxTotal int
	observer    Observer
	visibility  time.Duration
	replay      *replay.Rules                 // WithReplayRules
	queueReplay map[string]*replay.Rules      // WithQueueReplayRules
	budget      retrybudget.Budget            // WithRetryBudget
	queueBudget map[string]retrybudget.Budget // WithQueueRetryBudget
}

func defaultConfig() config {
	return config{
		clock:       RealClock{},
		rand:        nil, // backoff.Random(), resolved in New
		history:     defaultErrorHistory,
		maxAge:      defaultRetentionMaxAge,
		maxCount:    defaultRetentionMaxCount,
		finMaxAge:   defaultFinishedMaxAge,
		finMaxCount: defaultFinishedMaxCount,
		finMaxTotal: defaultFinishedMaxTotal,
		visibility:  defaultVisibilityTimeout,
	}
}

// Option configures an Executor in New. A nil Option is ignored.
type Option func(*config)

// WithClock sets the clock (default RealClock). A nil clock is ignored.
func WithClock(c Clock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithRand sets the randomness jitter draws from (default backoff.Random()).
// The executor consults it only while holding its lock, so a source that is
// not safe for concurrent use, such as a *math/rand/v2.Rand, is fine.
// backoff.Fixed(r) makes every jittered delay exact. A nil source is ignored.
func WithRand(src backoff.Source) Option {
	return func(cfg *config) {
		if src != nil {
			cfg.rand = src
		}
	}
}

// WithErrorHistory sets how many of its most recent error entries each job
// keeps (default 20). Values below 10, the minimum of ojs-retry §10.1, are
// raised to 10; values above 2^20 are lowered to it.
func WithErrorHistory(n int) Option {
	return func(cfg *config) {
		cfg.history = min(max(n, minErrorHistory), maxErrorHistory)
	}
}

// WithRetention sets the dead-letter retention (ojs-dead-letter §5): a
// dead-lettered job is pruned once it has been in the dead letter set for
// longer than maxAge, and the oldest are pruned while there are more than
// maxCount. A value ≤ 0 keeps that limit's default (P180D, 10000): retention
// is never unbounded. The dead letter set is one for the whole executor:
// maxCount counts dead letters of every queue. Other finished jobs follow
// [WithFinishedRetention].
func WithRetention(maxAge time.Duration, maxCount int) Option {
	return func(cfg *config) {
		if maxAge > 0 {
			cfg.maxAge = maxAge
		}
		if maxCount > 0 {
			cfg.maxCount = maxCount
		}
	}
}

// WithFinishedRetention sets the retention of finished jobs that are not
// dead letters (completed, cancelled and plainly discarded): such a job is
// deleted once it has been finished for longer than maxAge, and the oldest
// are deleted while a queue holds more than maxCount of them in one state
// (counted per queue and per state). A value ≤ 0 keeps that limit's default
// (24 hours, 10000): retention is never unbounded, so an executor that runs
// forever holds a bounded number of finished jobs. [Executor.Delete]
// removes one sooner. Over all queues together at most
// [WithFinishedRetentionTotal] such jobs are kept.
func WithFinishedRetention(maxAge time.Duration, maxCount int) Option {
	return func(cfg *config) {
		if maxAge > 0 {
			cfg.finMaxAge = maxAge
		}
		if maxCount > 0 {
			cfg.finMaxCount = maxCount
		}
	}
}

// WithObserver sets the observer that receives lifecycle events (default
// none; nil means none). Panics in its callbacks are recovered (see
// [Observer]).
func WithObserver(o Observer) Option {
	return func(cfg *config) {
		if o == nil {
			cfg.observer = nil
			return
		}
		cfg.observer = guarded{o}
	}
}

// WithDefaultVisibilityTimeout sets the reservation period for jobs enqueued
// without their own (default 30 minutes). Values ≤ 0 are ignored.
func WithDefaultVisibilityTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d > 0 {
			cfg.visibility = d
		}
	}
}

// WithFinishedRetentionTotal bounds the finished jobs that are not dead
// letters over all queues together (default 100000, RK-86): while the
// executor holds more, the one that finished first is deleted, whatever
// its queue. The per-queue limit of [WithFinishedRetention] alone would let
// many queues (a queue per tenant, say) multiply it; this one does not. A
// value ≤ 0 keeps the default.
func WithFinishedRetentionTotal(n int) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.finMaxTotal = n
		}
	}
}
