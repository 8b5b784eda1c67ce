package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	suggestpkg "github.com/retrykit/retrykit/internal/suggest"
)

// Errors of [Parse] (and [Lookup], which is Parse). Each error Parse returns
// matches exactly one of them with errors.Is; a bad setting is also a
// *[SettingError].
var (
	// ErrUnknownSetting: a key that is not a setting of the profile.
	ErrUnknownSetting = errors.New("profile: unknown setting")
	// ErrBadValue: a setting's value is malformed or out of range, or the
	// settings contradict each other.
	ErrBadValue = errors.New("profile: bad value")
	// ErrUnknownVersion: NAME@VERSION names a release the profile does not
	// model.
	ErrUnknownVersion = errors.New("profile: unknown version")
	// ErrSyntax: the text is not NAME[@VERSION][:key=value,...], or is
	// longer than [MaxSpec].
	ErrSyntax = errors.New("profile: syntax")
)

// MaxSpec is the longest profile text [Parse] reads, in bytes, and
// maxSettings the most key=value pairs.
const (
	MaxSpec     = 4096
	maxSettings = 32
	// maxEcho is how much of a bad name or value an error repeats.
	maxEcho = 64
)

// SettingError is the error for one bad key=value pair: an unknown key
// (Err is [ErrUnknownSetting]) or a bad value ([ErrBadValue]).
type SettingError struct {
	Profile string // the profile's plain name
	Key     string // the key as written (cut to 64 bytes)
	Value   string // the value as written (cut to 64 bytes)
	Reason  string // what is wrong, and what is allowed
	Err     error  // ErrUnknownSetting or ErrBadValue
}

// Error returns "profile: NAME: unknown setting "KEY" (REASON)" or
// "profile: NAME: KEY=VALUE: REASON".
func (e *SettingError) Error() string {
	if errors.Is(e.Err, ErrUnknownSetting) {
		return fmt.Sprintf("profile: %s: unknown setting %q (%s)", e.Profile, e.Key, e.Reason)
	}
	return fmt.Sprintf("profile: %s: %s=%s: %s", e.Profile, e.Key, e.Value, e.Reason)
}

// Unwrap returns ErrUnknownSetting or ErrBadValue.
func (e *SettingError) Unwrap() error { return e.Err }

// kind is how a setting's value is written.
type kind int

const (
	kDuration  kind = iota // Go duration text: 2s, 1m30s, 250ms
	kMillis                // whole milliseconds, a bare number (BullMQ delay)
	kSeconds               // whole seconds, a bare number (Celery)
	kInt                   // integer in [lo, hi]
	kFloat                 // finite number in [lo, hi]
	kBool                  // true or false
	kIntBool               // integer in [lo, hi], or true / false (ifTrue, ifFalse)
	kIntNone               // integer in [lo, hi], or None (unlimited: -1)
	kFloatBool             // number in [lo, hi], or true (1) / false (0)
	kWait                  // Active Job's wait: polynomially_longer, or seconds in [lo, hi]
	kEnum                  // one of enum
	kIntList               // whole numbers in [lo, hi] separated by '/' (RQ's interval list), at most maxList
)

// maxList is the most numbers a kIntList takes.
const maxList = 64

// setting is one configuration key of a profile, in the system's own name.
type setting struct {
	key  string
	kind kind
	def  string // the default, written as a user would write it
	help string
	// lo, hi bound numbers (durations in ns); ifTrue, ifFalse are what
	// true and false stand for in a kIntBool.
	lo, hi          float64
	ifTrue, ifFalse int64
	enum            []string
	// clamp: a whole number below lo (down to math.MinInt32) is accepted
	// and read as lo, as the system itself treats it (asynq's MaxRetry(-1)
	// is MaxRetry(0)); the profile's name keeps the number as written.
	clamp bool
}

// value is one parsed setting.
type value struct {
	i    int64         // kInt, kIntBool, kIntNone, kMillis, kSeconds, kBool (0/1)
	f    float64       // kFloat
	d    time.Duration // kDuration, kMillis, kSeconds
	s    string        // kEnum; the text as written for every kind
	list []int64       // kIntList
	user bool          // set by the user, not the default
}

// conf is a profile's full configuration: every setting's value, and the
// failure the delay is for (error class, retry-after hint).
type conf struct {
	vals          map[string]value
	class         string
	retryAfter    time.Duration
	hasRetryAfter bool
}

func (c conf) v(k string) value {
	v, ok := c.vals[k]
	if !ok {
		panic("profile: internal: no setting " + k)
	}
	return v
}

func (c conf) int(k string) int64          { return c.v(k).i }
func (c conf) float(k string) float64      { return c.v(k).f }
func (c conf) dur(k string) time.Duration  { return c.v(k).d }
func (c conf) bool(k string) bool          { return c.v(k).i != 0 }
func (c conf) str(k string) string         { return c.v(k).s }
func (c conf) list(k string) []int64       { return c.v(k).list }
func (c conf) user(k string) bool          { return c.v(k).user }
func (c conf) with(k string, v value) conf { c.vals = cloneVals(c.vals); c.vals[k] = v; return c }
func cloneVals(m map[string]value) map[string]value {
	out := make(map[string]value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// floatDuration converts a bound to a Duration, saturating: float64(1<<63)
// does not convert (it gave "-2562047h47m16.854775808s" in a message).
func floatDuration(f float64) time.Duration {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(f)
}

// parseValue reads text as the setting s wants it.
func parseValue(s setting, text string) (value, string) {
	v := value{s: text}
	num := func() (int64, string) {
		n, err := strconv.ParseInt(text, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Sprintf("must be between %s and %s", fmtNum(s.lo), fmtNum(s.hi))
		}
		if err != nil {
			return 0, "not an integer"
		}
		if s.clamp && float64(n) < s.lo && n >= math.MinInt32 {
			// The system takes it and treats it as its least value.
			return int64(s.lo), ""
		}
		if float64(n) < s.lo || float64(n) > s.hi {
			if s.clamp {
				return 0, fmt.Sprintf("must be between %s and %s (below %s it counts as %[3]s)", fmtNum(math.MinInt32), fmtNum(s.hi), fmtNum(s.lo))
			}
			return 0, fmt.Sprintf("must be between %s and %s", fmtNum(s.lo), fmtNum(s.hi))
		}
		return n, ""
	}
	switch s.kind {
	case kDuration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return v, "not a duration (write it as 2s, 1m30s or 250ms)"
		}
		if float64(d) < s.lo || float64(d) > s.hi {
			return v, fmt.Sprintf("must be between %v and %v", floatDuration(s.lo), floatDuration(s.hi))
		}
		v.d = d
	case kMillis, kSeconds:
		n, why := num()
		if why != "" {
			return v, why + " (whole " + map[kind]string{kMillis: "milliseconds", kSeconds: "seconds"}[s.kind] + ")"
		}
		v.i = n
		if s.kind == kMillis {
			v.d = time.Duration(n) * time.Millisecond
		} else {
			v.d = time.Duration(n) * time.Second
		}
	case kInt:
		n, why := num()
		if why != "" {
			return v, why
		}
		v.i = n
	case kFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return v, "not a finite number"
		}
		if f < s.lo || f > s.hi {
			return v, fmt.Sprintf("must be between %s and %s", fmtNum(s.lo), fmtNum(s.hi))
		}
		v.f = f
	case kBool:
		switch text {
		case "true", "True":
			v.i = 1
		case "false", "False":
		default:
			return v, "must be true or false"
		}
	case kIntBool:
		switch text {
		case "true", "True":
			v.i = s.ifTrue
		case "false", "False":
			v.i = s.ifFalse
		default:
			n, why := num()
			if why != "" {
				return v, why + ", true or false"
			}
			v.i = n
		}
	case kFloatBool:
		switch text {
		case "true", "True":
			v.f = 1
		case "false", "False":
		default:
			f, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return v, "not a number, true or false"
			}
			if f < s.lo || f > s.hi {
				return v, fmt.Sprintf("must be between %s and %s", fmtNum(s.lo), fmtNum(s.hi))
			}
			v.f = f
		}
	case kWait:
		if text == "polynomially_longer" || text == ":polynomially_longer" {
			v.s = "polynomially_longer"
			break
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < s.lo || f > s.hi {
			return v, fmt.Sprintf("must be polynomially_longer or a number of seconds between %s and %s", fmtNum(s.lo), fmtNum(s.hi))
		}
		v.f = f
	case kIntNone:
		// Each system's own word: Python's None, Ruby's :unlimited, JavaScript's Infinity.
		if text == "None" || text == "none" || text == "unlimited" || text == ":unlimited" || text == "Infinity" {
			v.i = -1
			break
		}
		n, why := num()
		if why != "" {
			return v, why + " or None (unlimited; also unlimited, :unlimited, Infinity)"
		}
		v.i = n
	case kIntList:
		parts := strings.Split(text, "/")
		if len(parts) > maxList {
			return v, fmt.Sprintf("more than %d numbers", maxList)
		}
		for _, p := range parts {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil || float64(n) < s.lo || float64(n) > s.hi {
				return v, fmt.Sprintf("must be whole numbers between %s and %s separated by / (10/30/60)", fmtNum(s.lo), fmtNum(s.hi))
			}
			v.list = append(v.list, n)
		}
	case kEnum:
		for _, e := range s.enum {
			if text == e {
				v.s = e
				return v, ""
			}
		}
		return v, "must be one of " + strings.Join(s.enum, ", ")
	}
	return v, ""
}

func fmtNum(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// defaults returns the configuration of every setting at its default.
func defaults(ss []setting) conf {
	c := conf{vals: make(map[string]value, len(ss))}
	for _, s := range ss {
		v, why := parseValue(s, s.def)
		if why != "" {
			panic("profile: internal: default " + s.key + "=" + s.def + ": " + why)
		}
		c.vals[s.key] = v
	}
	return c
}

// normKey folds a key for matching: lower case, without '_' and '-', so
// that max_attempts finds River's MaxAttempts.
func normKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Parse returns the profile that text names:
//
//	NAME                     the current release's defaults ("aws_go")
//	NAME@VERSION             an older release ("aws_go@1.47", "aws_go@v1.47.7")
//	NAME[@VERSION]:k=v,k=v   configured in the system's own setting names
//	                         ("bullmq:type=exponential,delay=3000,attempts=5")
//
// Keys match case-insensitively and without underscores (max_attempts finds
// River's MaxAttempts); [Profile.Settings] lists them. A setting not given
// keeps the system's default. Durations are Go duration text (2s, 1m30s)
// unless the system counts whole milliseconds or seconds, as BullMQ's delay
// and Celery's retry_backoff_max do.
//
// Errors match [ErrUnknown], [ErrUnknownVersion], [ErrSyntax],
// [ErrUnknownSetting] or [ErrBadValue] (the last two as a *[SettingError]);
// an unknown name or key suggests the closest known one. Parse reads at
// most [MaxSpec] bytes, in time linear in the text.
func Parse(text string) (Profile, error) {
	if len(text) > MaxSpec {
		return Profile{}, fmt.Errorf("%w: profile text of %d bytes, longer than %d", ErrSyntax, len(text), MaxSpec)
	}
	name, settings, hasSettings := strings.Cut(text, ":")
	base, version, hasVersion := strings.Cut(name, "@")
	m, ok := byName[base]
	if !ok {
		return Profile{}, fmt.Errorf("%w %s%s (known: %s)", ErrUnknown, echo(base), suggest(base, Names()), namesText)
	}
	if hasVersion {
		var err error
		if m, err = release(m, version); err != nil {
			return Profile{}, err
		}
	}
	if !hasSettings {
		return Profile{m}, nil
	}
	if strings.Count(settings, ",") >= maxSettings {
		return Profile{}, fmt.Errorf("%w: more than %d settings", ErrSyntax, maxSettings)
	}
	return m.configure(strings.Split(settings, ","))
}

// With returns p with more settings, each "key=value" in the system's own
// names (as after NAME: in [Parse]); a key given again replaces p's value.
// With() is p. Errors are those of Parse.
//
//	p, _ := profile.Lookup("bullmq")
//	p, err := p.With("type=exponential", "delay=3000", "attempts=5")
func (p Profile) With(settings ...string) (Profile, error) {
	if len(settings) == 0 {
		return p, nil
	}
	if len(settings) > maxSettings {
		return Profile{}, fmt.Errorf("%w: more than %d settings", ErrSyntax, maxSettings)
	}
	n := 0
	for _, kv := range settings {
		if n += len(kv); n > MaxSpec {
			return Profile{}, fmt.Errorf("%w: settings of more than %d bytes", ErrSyntax, MaxSpec)
		}
	}
	return p.get().configure(settings)
}

// configure applies key=value pairs to m's configuration.
func (m *model) configure(pairs []string) (Profile, error) {
	if len(m.settings) == 0 {
		return Profile{}, fmt.Errorf("%w: %s has no settings (it models a fixed scheme)", ErrUnknownSetting, m.name)
	}
	c := conf{vals: cloneVals(m.conf.vals), class: m.conf.class, retryAfter: m.conf.retryAfter, hasRetryAfter: m.conf.hasRetryAfter}
	seen := make(map[string]bool)
	for _, pair := range pairs {
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return Profile{}, fmt.Errorf("%w: %s: %s is not key=value", ErrSyntax, m.name, echo(pair))
		}
		s, found := m.setting(k)
		if !found {
			keys := make([]string, len(m.settings))
			for i, s := range m.settings {
				keys[i] = s.key
			}
			reason := "settings: " + strings.Join(keys, ", ")
			if sg := suggest(k, keys); sg != "" {
				reason = strings.TrimPrefix(sg, "; ") + " " + reason
			}
			return Profile{}, &SettingError{Profile: m.name, Key: cut(k), Value: cut(v), Err: ErrUnknownSetting, Reason: reason}
		}
		if seen[s.key] {
			return Profile{}, &SettingError{Profile: m.name, Key: cut(k), Value: cut(v), Err: ErrBadValue, Reason: "given twice"}
		}
		seen[s.key] = true
		val, why := parseValue(s, v)
		if why != "" {
			return Profile{}, &SettingError{Profile: m.name, Key: s.key, Value: cut(v), Err: ErrBadValue, Reason: why}
		}
		val.user = true
		c.vals[s.key] = val
	}
	return m.rebuild(c)
}

// setting finds the setting a user's key names.
func (m *model) setting(k string) (setting, bool) {
	nk := normKey(k)
	for _, s := range m.settings {
		if s.key == k || normKey(s.key) == nk {
			return s, true
		}
	}
	return setting{}, false
}

// rebuild makes the model of m's system under configuration c.
func (m *model) rebuild(c conf) (Profile, error) {
	nm, err := m.build(c)
	if err != nil {
		return Profile{}, err
	}
	nm.base, nm.release, nm.settings, nm.build, nm.conf, nm.classes = m.base, m.release, m.settings, m.build, c, m.classes
	// The plain name, or an older release's NAME@VERSION; then the settings.
	nm.name, _, _ = strings.Cut(m.name, ":")
	var parts []string
	for _, s := range m.settings {
		if v := c.vals[s.key]; v.user {
			parts = append(parts, s.key+"="+v.s)
		}
	}
	if len(parts) > 0 {
		nm.name += ":" + strings.Join(parts, ",")
	}
	return Profile{nm}, nil
}

// badValue is the error a build returns when settings contradict each
// other or a value is outside what the system accepts.
func badValue(m, key string, c conf, reason string) error {
	return &SettingError{Profile: m, Key: key, Value: cut(c.v(key).s), Err: ErrBadValue, Reason: reason}
}

// cut shortens s to maxEcho bytes for an error message.
func cut(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:maxEcho] + "…"
}

// echo quotes a user's name for an error, cut to maxEcho bytes and with
// its full length when cut.
func echo(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:maxEcho], len(s))
}

// suggest returns `; did you mean "x"?` for the candidate closest to s
// (internal/suggest: case and underscores folded, at most a third of its
// length away), or "". Names longer than 64 bytes are not compared, so
// the cost is bounded.
func suggest(s string, candidates []string) string {
	best, ok := suggestpkg.Closest(s, candidates)
	if !ok {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// Setting describes one configuration key of a profile.
type Setting struct {
	Key     string // the system's own name for it ("retry_backoff_max")
	Default string // the system's default, as it would be written
	Value   string // the value in this profile
	Help    string // what it does, and its unit
}

// Settings lists the keys [Parse] accepts after NAME:, in the system's
// own names, with their defaults and this profile's values. A profile
// without settings (a fixed scheme) returns none.
func (p Profile) Settings() []Setting {
	m := p.get()
	out := make([]Setting, len(m.settings))
	for i, s := range m.settings {
		out[i] = Setting{Key: s.key, Default: s.def, Value: m.conf.vals[s.key].s, Help: s.help}
	}
	return out
}
