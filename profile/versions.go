package profile

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// configured builds the default model of a configurable system: every
// setting at the system's default, and the first of classes (if any) as
// the error class.
func configured(ss []setting, build func(conf) (*model, error), classes ...string) *model {
	c := defaults(ss)
	if len(classes) > 0 {
		c.class = classes[0]
	}
	m, err := build(c)
	if err != nil {
		panic("profile: internal: defaults of " + fmt.Sprint(ss) + ": " + err.Error())
	}
	m.settings, m.build, m.conf, m.classes = ss, build, c, classes
	return m
}

// olderModels are the older releases NAME@VERSION reaches, by plain name.
// Each is listed by [Versions]; its own Name carries the @VERSION.
var olderModels = map[string][]*model{
	"aws_go":  {withBase(configured(awsGo147Settings, awsGo147Model), "aws_go")},
	"sidekiq": {byNameOrPanic("sidekiq6")},
}

func withBase(m *model, base string) *model {
	m.base = base
	return m
}

func byNameOrPanic(name string) *model {
	m, ok := byName[name]
	if !ok {
		panic("profile: internal: no profile " + name)
	}
	return m
}

// release returns the model of m's system at version v: the current one
// when v names m's release, else an older one. v matches a release that
// equals it or starts with it and a dot ("1.47" and "v1.47.7" both name
// 1.47.7).
func release(m *model, v string) (*model, error) {
	v = strings.TrimPrefix(v, "v")
	matches := func(rel string) bool { return v != "" && (rel == v || strings.HasPrefix(rel, v+".")) }
	if matches(m.release) {
		return m, nil
	}
	known := []string{m.release}
	for _, o := range olderModels[m.base] {
		if matches(o.release) {
			return o, nil
		}
		known = append(known, o.release)
	}
	return nil, fmt.Errorf("%w: %s@%s (releases modelled: %s)", ErrUnknownVersion, m.base, cut(v), strings.Join(known, ", "))
}

// Versions returns the NAME@VERSION names of the older releases that the
// profiles also model, sorted (the plain names are the current releases,
// listed by [Names]).
func Versions() []string {
	var out []string
	for base, ms := range olderModels {
		for _, m := range ms {
			out = append(out, base+"@"+m.release)
		}
	}
	slices.Sort(out)
	return out
}

// Release is the release of the system that the profile reproduces
// ("1.48.0"): what NAME@VERSION matches.
func (p Profile) Release() string { return p.get().release }

// Classes returns the error classes whose delays differ in this profile,
// the default first ("ordinary", "throttling" for aws_go); nil when every
// error is treated alike.
func (p Profile) Classes() []string { return slices.Clone(p.get().classes) }

// Class is the error class the profile's delays are for ("" when the
// system treats every error alike).
func (p Profile) Class() string { return p.get().conf.class }

// WithClass returns the profile for errors of the given class, one of
// [Profile.Classes]. A profile without classes accepts only "".
func (p Profile) WithClass(class string) (Profile, error) {
	m := p.get()
	if class == m.conf.class {
		return p, nil
	}
	if !slices.Contains(m.classes, class) {
		have := "it treats every error alike"
		if len(m.classes) > 0 {
			have = "classes: " + strings.Join(m.classes, ", ")
		}
		return Profile{}, fmt.Errorf("%w: %s: error class %s%s (%s)", ErrBadValue, m.name, echo(class), suggest(class, m.classes), have)
	}
	c := m.conf
	c.class = class
	return m.rebuild(c)
}

// WithRetryAfter returns the profile for a failure whose response carried
// a retry-after hint of d, for the systems that read one (aws_go: the
// x-amz-retry-after header, which moves the delay into [t, t + 5s] around
// the computed delay t). A negative d, or a profile that ignores such
// hints, is an error matching [ErrBadValue].
func (p Profile) WithRetryAfter(d time.Duration) (Profile, error) {
	m := p.get()
	if m.build == nil || !slices.Contains(retryAfterReaders, m.base) || strings.HasPrefix(m.name, m.base+"@") {
		return Profile{}, fmt.Errorf("%w: %s: reads no retry-after hint", ErrBadValue, m.name)
	}
	if d < 0 {
		return Profile{}, fmt.Errorf("%w: %s: retry-after %v: must not be negative", ErrBadValue, m.name, d)
	}
	c := m.conf
	c.retryAfter, c.hasRetryAfter = d, true
	return m.rebuild(c)
}

// retryAfterReaders are the profiles whose delay honours a retry-after
// hint.
var retryAfterReaders = []string{"aws_go", "retryablehttp"}

// RetryAfter returns the retry-after hint the profile's delays are for,
// and whether one was given.
func (p Profile) RetryAfter() (time.Duration, bool) {
	c := p.get().conf
	return c.retryAfter, c.hasRetryAfter
}
