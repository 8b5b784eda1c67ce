package executor

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// Defaults used by New when no option overrides them.
const (
	// DefaultErrorHistory is how many error entries a job keeps (ojs-retry
	// §10.1 asks for at least 10).
	DefaultErrorHistory = 20
	// DefaultVisibilityTimeout is the reservation period of a fetched job
	// that did not set its own.
	DefaultVisibilityTimeout = 30 * time.Minute
	// DefaultRetentionMaxAge is how long a dead-lettered job is kept
	// (ojs-dead-letter §5.2: P180D).
	DefaultRetentionMaxAge = 180 * 24 * time.Hour
	// DefaultRetentionMaxCount is how many dead-lettered jobs are kept
	// (ojs-dead-letter §5.2).
	DefaultRetentionMaxCount = 10000
	// MaxErrorHistory is the largest error history WithErrorHistory
	// accepts (2^20 entries per job).
	MaxErrorHistory = 1 << 20
	// minErrorHistory is the floor of ojs-retry §10.1 (RET-15).
	minErrorHistory = 10
)

// config holds the executor's knobs; see the With... options.
type config struct {
	clock      Clock
	rand       backoff.Source
	history    int
	maxAge     time.Duration
	maxCount   int
	observer   Observer
	visibility time.Duration
}

func defaultConfig() config {
	return config{
		clock:      RealClock{},
		rand:       nil, // backoff.Random(), resolved in New
		history:    DefaultErrorHistory,
		maxAge:     DefaultRetentionMaxAge,
		maxCount:   DefaultRetentionMaxCount,
		visibility: DefaultVisibilityTimeout,
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
// keeps (default DefaultErrorHistory). Values below 10, the minimum of
// ojs-retry §10.1, are raised to 10; values above MaxErrorHistory are
// lowered to it.
func WithErrorHistory(n int) Option {
	return func(cfg *config) {
		cfg.history = min(max(n, minErrorHistory), MaxErrorHistory)
	}
}

// WithRetention sets the dead-letter retention (ojs-dead-letter §5): a
// dead-lettered job is pruned once it has been in the dead letter set for
// longer than maxAge, and the oldest are pruned while there are more than
// maxCount. A value ≤ 0 keeps that limit's default (P180D, 10000): retention
// is never unbounded.
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

// WithObserver sets the observer that receives lifecycle events (default
// none).
func WithObserver(o Observer) Option {
	return func(cfg *config) { cfg.observer = o }
}

// WithDefaultVisibilityTimeout sets the reservation period for jobs enqueued
// without their own (default DefaultVisibilityTimeout). Values ≤ 0 are ignored.
func WithDefaultVisibilityTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d > 0 {
			cfg.visibility = d
		}
	}
}
