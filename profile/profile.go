package profile

import (
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// ErrUnknown is matched (errors.Is) by the error [Lookup] returns for a name
// that is not a profile.
var ErrUnknown = errors.New("profile: unknown profile")

// Profile is one system's retry behaviour, under that system's defaults or
// a configuration given to [Parse]: its delay formula, jitter and
// exhaustion rule, reproduced exactly.
//
// A Profile is a small immutable value, safe to copy and to share between
// goroutines. The zero Profile has no name, a delay of 0 for every attempt
// and never retries (MaxAttempts 1).
type Profile struct {
	m *model
}

// model is the definition of one profile. Every field is set once, at
// package initialisation, and never written again.
type model struct {
	name, system, version, source string
	// base is the plain name; release the version the model reproduces,
	// as NAME@VERSION matches it ("1.48.0").
	base, release string
	// settings are the keys Parse accepts; build makes the model under a
	// configuration and conf is this model's. classes are the error
	// classes WithClass accepts (the first is the default).
	settings               []setting
	build                  func(conf) (*model, error)
	conf                   conf
	classes                []string
	summary, formula, draw string
	exhaustion, terminal   string

	// maxAttempts is the total number of attempts (first run included)
	// under the system's defaults; 0 means unbounded.
	maxAttempts int
	// onExhaustion is the Action that stands for the system's terminal
	// outcome when attempts run out.
	onExhaustion policy.Action
	// jitter says whether delay draws from its source at all.
	jitter bool
	// stateful says that the delay after attempt n depends on the delay
	// after attempt n-1 (prev), not on n: decorrelated jitter. delay must
	// then ignore n, so that a schedule that repeats a delay has settled.
	stateful bool
	// delay returns the delay after attempt n >= 1. prev is the delay after
	// attempt n-1 (0 for n = 1); only stateful models read it. Draws are
	// taken with d.next(), each in [0, 1). delay must be non-decreasing
	// in every draw and in prev, so that the draws 0 and maxBelowOne give
	// the exact bounds.
	delay func(n int, prev time.Duration, d draws) time.Duration
}

// Lookup returns the profile with the given name (as [Names] lists them). An
// unknown name gives an error matching [ErrUnknown] that lists the known
// names.
//
// Lookup is [Parse]: it also takes NAME@VERSION and NAME:key=value,...
func Lookup(name string) (Profile, error) { return Parse(name) }

// Names returns the names of all profiles, sorted. The caller owns the
// slice.
func Names() []string {
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = m.name
	}
	return out
}

// All returns every profile, sorted by name. The caller owns the slice.
func All() []Profile {
	out := make([]Profile, len(models))
	for i, m := range models {
		out[i] = Profile{m}
	}
	return out
}

// Name is the profile's name: the system's lowercase name ("sidekiq",
// "aws_go", "decorrelated_jitter"), with @VERSION for an older release and
// :key=value,... for the settings given to [Parse] or [Profile.With], so
// that Parse(p.Name()) is p again (the error class and retry-after hint of
// [Profile.WithClass] and [Profile.WithRetryAfter] are not part of it).
func (p Profile) Name() string { return p.get().name }

// System is the system's own name and the part of it modelled ("AWS SDK
// for Go v2, standard retryer").
func (p Profile) System() string { return p.get().system }

// Version is the version or commit of the source the profile reproduces.
func (p Profile) Version() string { return p.get().version }

// Source is where the formula was read: a source file at a commit, or a
// note saying what stands in for missing public source.
func (p Profile) Source() string { return p.get().source }

// Summary is a one-line description: formula, jitter and exhaustion.
func (p Profile) Summary() string { return singular.Replace(p.get().summary) }

// singular mends the counts the models write with %d where the number is 1
// ("1 attempts" and "at most 1 times" read "1 attempt" and "at most once").
var singular = strings.NewReplacer(" 1 attempts", " 1 attempt", " 1 retries", " 1 retry", "at most 1 times", "at most once")

// Formula is the delay formula as the system computes it, with the attempt
// number it passes (written in terms of attempt, the 1-based number of the
// attempt that just failed).
func (p Profile) Formula() string { return p.get().formula }

// Draw says how a draw r in [0, 1) maps to the system's randomness ("" when
// the system has no jitter).
func (p Profile) Draw() string { return p.get().draw }

// Exhaustion says what counts as running out of attempts.
func (p Profile) Exhaustion() string { return singular.Replace(p.get().exhaustion) }

// Terminal is the system's terminal outcome when attempts run out, in the
// system's own words ("archived", "moved to the morgue").
func (p Profile) Terminal() string { return p.get().terminal }

// MaxAttempts is the total number of attempts, the first run included,
// that the system makes (under its defaults, or as configured); 0 means
// unbounded.
func (p Profile) MaxAttempts() int { return p.get().maxAttempts }

// OnExhaustion is the policy Action that stands for the terminal outcome:
// [policy.DeadLetter] when the system keeps the failed job in a dead set,
// [policy.Discard] when it drops it or hands the error back to the caller.
func (p Profile) OnExhaustion() policy.Action { return p.get().onExhaustion }

// Jitter reports whether the profile's delay is random.
func (p Profile) Jitter() bool { return p.get().jitter }

// Stateful reports whether a delay depends on the previous delay
// (decorrelated jitter) rather than on the attempt number alone. Use
// [Profile.Schedule] or [Profile.Run] to follow such a profile with varying
// draws.
func (p Profile) Stateful() bool { return p.get().stateful }

// zeroModel is what the zero Profile behaves as.
var zeroModel = &model{
	maxAttempts:  1,
	onExhaustion: policy.Discard,
	delay:        func(int, time.Duration, draws) time.Duration { return 0 },
}

func (p Profile) get() *model {
	if p.m == nil {
		return zeroModel
	}
	return p.m
}

// Delay returns the delay after attempt n (the 1-based number of the
// attempt that just failed; n < 1 is treated as 1), drawing from src as the
// system draws (nil means [backoff.Random]()). For a stateful profile it is
// the n-th delay of a schedule in which every draw equals the one draw
// taken; follow [Profile.Run] for independent draws.
func (p Profile) Delay(n int, src backoff.Source) time.Duration {
	m := p.get()
	d := sourceDraws(src)
	if m.stateful {
		return p.DelayAt(n, d.next())
	}
	return m.delay(max(n, 1), 0, d)
}

// DelayAt is the pure form of [Profile.Delay]: every draw the system takes
// is r (clamped into [0, 1) as [backoff.Fixed] clamps it). For a stateful
// profile it is the n-th delay of the schedule whose draws are all r,
// found in at most a few thousand steps since such a schedule settles.
func (p Profile) DelayAt(n int, r float64) time.Duration {
	m := p.get()
	src := fixedDraws(r)
	n = max(n, 1)
	if !m.stateful {
		return m.delay(n, 0, src)
	}
	var prev time.Duration
	for i := 1; i <= n; i++ {
		d := m.delay(i, prev, src)
		if i > 1 && d == prev {
			break // settled: the rest of the schedule repeats d
		}
		prev = d
	}
	return prev
}

// Bounds returns the smallest and largest delay after attempt n, both
// inclusive and both reached: every delay Delay, DelayAt, Schedule or Run
// gives after attempt n lies in [lo, hi]. Without jitter lo == hi.
func (p Profile) Bounds(n int) (lo, hi time.Duration) {
	return p.DelayAt(n, 0), p.DelayAt(n, maxBelowOne)
}

// Decide returns what the system does after attempt n fails, as
// [policy.Policy.Decide] does for a policy: retry after [Profile.Delay], or,
// when n is the last attempt MaxAttempts allows, the OnExhaustion action
// with [policy.ReasonExhausted]. n < 1 is treated as 1.
func (p Profile) Decide(n int, src backoff.Source) policy.Decision {
	if d, done := p.exhausted(n); done {
		return d
	}
	return policy.Decision{Action: policy.Retry, Delay: p.Delay(n, src), Reason: policy.ReasonRetry}
}

// DecideAt is the pure form of [Profile.Decide], with the draw r given.
func (p Profile) DecideAt(n int, r float64) policy.Decision {
	if d, done := p.exhausted(n); done {
		return d
	}
	return policy.Decision{Action: policy.Retry, Delay: p.DelayAt(n, r), Reason: policy.ReasonRetry}
}

func (p Profile) exhausted(n int) (policy.Decision, bool) {
	m := p.get()
	if m.maxAttempts > 0 && max(n, 1) >= m.maxAttempts {
		return policy.Decision{Action: m.onExhaustion, Reason: policy.ReasonExhausted}, true
	}
	return policy.Decision{}, false
}

// models holds every profile, sorted by name; byName indexes it.
var (
	models    = sortedModels()
	byName    = indexModels(models)
	namesText = joinNames(models)
)

func sortedModels() []*model {
	ms := []*model{
		ojsModel(), configured(jitterSettings, fullJitterModel), configured(jitterSettings, equalJitterModel),
		configured(jitterSettings, decorrelatedJitterModel),
		configured(riverSettings, riverModel), configured(asynqSettings, asynqModel),
		configured(faktorySettings, faktoryModel), configured(temporalSettings, temporalModel),
		configured(gaxSettings, gaxModel), configured(awsSettings, awsModel),
		configured(awsGoSettings, awsGoModel, ClassOrdinary, ClassThrottling),
		configured(grpcConnectSettings, grpcConnectModel), configured(grpcRetrySettings, grpcRetryModel),
		configured(obanSettings, obanModel), configured(sidekiqSettings, sidekiq6Model),
	}
	ms = append(ms, peerModels()...)
	ms = append(ms, golibModels()...)
	ms = append(ms, pyModels()...)
	ms = append(ms, jsModels()...)
	for _, m := range ms {
		m.base = m.name
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	return ms
}

func indexModels(ms []*model) map[string]*model {
	idx := make(map[string]*model, len(ms))
	for _, m := range ms {
		idx[m.name] = m
	}
	return idx
}

func joinNames(ms []*model) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ", "
		}
		s += m.name
	}
	return s
}
