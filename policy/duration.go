package policy

import (
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/internal/sat"
)

// ErrInvalidDuration is the errors.Is target for every string ParseDuration
// rejects. The concrete error is a *DurationError.
var ErrInvalidDuration = errors.New("policy: invalid ISO 8601 duration")

// DurationError reports a string that is not an OJS duration. It matches
// ErrInvalidDuration with errors.Is. A DurationError is never mutated after
// it is returned, so it is safe to share between goroutines. The zero value
// describes the empty string with no reason.
type DurationError struct {
	Value  string // the rejected input, verbatim
	Reason string // what is wrong with it, e.g. `"T" must be followed by at least one time component`
}

// Error returns a message such as
// `policy: invalid ISO 8601 duration "PT": "T" must be followed by at least one time component`.
func (e *DurationError) Error() string {
	return "policy: " + e.detail()
}

// detail is the message without the package prefix, used inside FieldError reasons.
func (e *DurationError) detail() string {
	return "invalid ISO 8601 duration " + strconv.Quote(clip(e.Value)) + ": " + e.Reason
}

// Is reports whether target is ErrInvalidDuration, or ErrDurationTooLong
// for a Value longer than MaxDurationLen.
func (e *DurationError) Is(target error) bool {
	return target == ErrInvalidDuration || target == ErrDurationTooLong && len(e.Value) > MaxDurationLen
}

// Nanoseconds per unit. A year is 365 days and a month (M before T) is a
// twelfth of that, 730 hours (docs/decisions.md RK-07).
const (
	nsSecond = uint64(time.Second)
	nsMinute = uint64(time.Minute)
	nsHour   = uint64(time.Hour)
	nsDay    = 24 * nsHour
	nsMonth  = 730 * nsHour
	nsYear   = 365 * nsDay

	maxNs = uint64(math.MaxInt64)
)

// component designators in the only order the grammar allows.
const (
	compYear = iota
	compMonth
	compDay
	compHour
	compMinute
	compSecond
	numComps
)

var compUnit = [numComps]uint64{nsYear, nsMonth, nsDay, nsHour, nsMinute, nsSecond}

// ParseDuration parses an OJS duration: the ISO 8601 subset of the OJS JSON
// schema (spec §4, §14), enforced exactly:
//
//	P [n Y] [n M] [n D] [ T [n H] [n M] [n[.f] S] ]
//
// The rules, in the order they are checked:
//
//  1. The string starts with an upper-case "P"; there is no sign.
//  2. Each component is one or more ASCII digits followed by its designator.
//     Components appear in the order above, each at most once; date
//     components (Y, M = month, D) come before "T", time components (H,
//     M = minute, S) after it. Weeks ("W"), commas, spaces, lower case and
//     non-ASCII digits are rejected.
//  3. Only seconds may have a fraction, written with "." and at least one
//     digit on each side ("PT0.5S"; not "PT.5S", "PT1.S", "PT1,5S").
//  4. There is at least one component ("P" is invalid) and a "T" is followed
//     by at least one time component ("PT", "P1DT" are invalid).
//
// The value is computed exactly from the decimal digits with integer
// arithmetic, never through a float: Y = 365 days, M (month) = 730 hours,
// D = 24 hours (docs/decisions.md RK-07, RK-11). Fractional seconds past the
// ninth digit are rounded half up to the nanosecond ("PT0.0000000005S" is
// 1ns, "PT0.00000000049S" is 0). A value above math.MaxInt64 nanoseconds
// (PT2562047H47M16.854775807S) is an error, never clamped. "PT0S" is a valid
// duration (whether zero is allowed is up to the field using it).
//
// A string longer than [MaxDurationLen] bytes is rejected before it is
// read (errors.Is [ErrDurationTooLong]). ParseDuration reads its input once,
// in time linear in its length, and does not allocate unless it fails. Its
// results are checked against github.com/sosodev/duration, an independent
// ISO 8601 parser, by the package's property and fuzz tests; that parser
// is not consulted at run time (it works in float64 and its cost grows
// faster than the input).
//
// Every error is a *DurationError and matches ErrInvalidDuration.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > MaxDurationLen {
		return 0, durErr(s, "longer than the limit of "+strconv.Itoa(MaxDurationLen)+
			" bytes (policy.MaxDurationLen): "+strconv.Itoa(len(s))+" bytes")
	}
	ns, err := scanDuration(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// MaxDurationLen is the longest duration string ParseDuration reads, in
// bytes. The longest useful duration, with every component and nine
// fraction digits, is about 60 bytes; the rest of the room is for leading
// zeros and extra fraction digits.
const MaxDurationLen = 256

// ErrDurationTooLong is matched (besides ErrInvalidDuration) by the
// *DurationError for a string longer than MaxDurationLen bytes.
var ErrDurationTooLong = errors.New("policy: duration too long")

func durErr(s, reason string) error {
	return &DurationError{Value: s, Reason: reason}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// badChar describes an unexpected byte at s[i].
func badChar(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == 'W':
		return `weeks ("W") are not supported`
	case r == ',':
		return `unexpected ","; a fraction uses "." and is allowed only on seconds`
	case r == '-' || r == '+':
		return "unexpected sign " + strconv.QuoteRune(r) + "; durations have no sign"
	case r == ' ' || r == '\t' || r == '\n' || r == '\r':
		return "unexpected white space"
	case r >= 'a' && r <= 'z':
		return "unexpected lower-case " + strconv.QuoteRune(r) + "; designators are upper case"
	case r == utf8.RuneError:
		return "invalid UTF-8"
	}
	return "unexpected character " + strconv.QuoteRune(r)
}

// scanDuration enforces the grammar and computes the value, saturating at
// math.MaxUint64. It reads each byte of s once.
func scanDuration(s string) (uint64, error) {
	if s == "" {
		return 0, durErr(s, "empty string")
	}
	if s[0] != 'P' {
		if s[0] == '-' || s[0] == '+' {
			return 0, durErr(s, "durations have no sign")
		}
		return 0, durErr(s, `must start with "P"`)
	}
	i := 1
	next := compYear // the first component still allowed
	inTime := false
	seen := 0
	seenTime := 0
	var total uint64
	for i < len(s) {
		c := s[i]
		if c == 'T' {
			if inTime {
				return 0, durErr(s, `"T" appears more than once`)
			}
			inTime = true
			if next < compHour {
				next = compHour
			}
			i++
			continue
		}
		if !isDigit(c) {
			if c == '.' {
				return 0, durErr(s, `"." must follow at least one digit`)
			}
			if c == 'Y' || c == 'M' || c == 'D' || c == 'H' || c == 'S' {
				return 0, durErr(s, strconv.Quote(string(c))+" must follow a number")
			}
			return 0, durErr(s, badChar(s, i))
		}
		// integer part
		start := i
		var v uint64
		for i < len(s) && isDigit(s[i]) {
			v = sat.Add(sat.Mul(v, 10), uint64(s[i]-'0'))
			i++
		}
		// optional fraction
		fracStart, fracEnd := -1, -1
		if i < len(s) && s[i] == '.' {
			i++
			fracStart = i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			fracEnd = i
			if fracStart == fracEnd {
				return 0, durErr(s, `"." must be followed by at least one digit`)
			}
		}
		if i >= len(s) {
			return 0, durErr(s, "number "+strconv.Quote(s[start:i])+" has no designator")
		}
		d := s[i]
		var comp int
		switch {
		case d == 'Y' && !inTime:
			comp = compYear
		case d == 'M' && !inTime:
			comp = compMonth
		case d == 'D' && !inTime:
			comp = compDay
		case d == 'H' && inTime:
			comp = compHour
		case d == 'M' && inTime:
			comp = compMinute
		case d == 'S' && inTime:
			comp = compSecond
		case d == 'H' || d == 'S':
			return 0, durErr(s, strconv.Quote(string(d))+` is a time component and must follow "T"`)
		case d == 'Y' || d == 'D':
			return 0, durErr(s, strconv.Quote(string(d))+` is a date component and must come before "T"`)
		default:
			return 0, durErr(s, badChar(s, i))
		}
		if fracStart >= 0 && comp != compSecond {
			return 0, durErr(s, "a fraction is allowed only on seconds, not on "+strconv.Quote(string(d)))
		}
		if comp < next {
			if seen&(1<<comp) != 0 {
				return 0, durErr(s, "component "+strconv.Quote(string(d))+" appears more than once")
			}
			return 0, durErr(s, "component "+strconv.Quote(string(d))+" is out of order")
		}
		next = comp + 1
		seen |= 1 << comp
		if inTime {
			seenTime++
		}
		i++
		// Saturated at math.MaxUint64, an overflow stays above maxNs.
		total = sat.Add(total, sat.Mul(v, compUnit[comp]))
		if fracStart >= 0 {
			total = sat.Add(total, fracToNs(s[fracStart:fracEnd]))
		}
	}
	if seen == 0 && !inTime {
		return 0, durErr(s, "must have at least one component")
	}
	if inTime && seenTime == 0 {
		return 0, durErr(s, `"T" must be followed by at least one time component`)
	}
	if total > maxNs {
		return 0, durErr(s, "exceeds the largest duration, PT2562047H47M16.854775807S")
	}
	return total, nil
}

// fracToNs converts the digits after "." to nanoseconds, rounding half up on
// the tenth digit. The result is at most 1e9 (e.g. ".9999999999").
func fracToNs(f string) uint64 {
	var ns uint64
	for k := 0; k < 9; k++ {
		ns *= 10
		if k < len(f) {
			ns += uint64(f[k] - '0')
		}
	}
	if len(f) > 9 && f[9] >= '5' {
		ns++
	}
	return ns
}

// FormatDuration returns the canonical OJS form of d, which ParseDuration
// accepts and maps back to exactly d for every d >= 0.
//
// The largest unit is the hour (days, weeks, months and years are never
// written, since their length is a convention); zero components are left
// out; seconds carry the fraction with trailing zeros removed:
//
//	0                       "PT0S"
//	1ns                     "PT0.000000001S"
//	500ms                   "PT0.5S"
//	90s                     "PT1M30S"
//	90.5s                   "PT1M30.5S"
//	1h30m                   "PT1H30M"
//	36h                     "PT36H"
//	math.MaxInt64 ns        "PT2562047H47M16.854775807S"
//
// A negative d is written as "-" followed by the form of its magnitude
// ("-PT1S"); ParseDuration rejects that, since OJS durations have no sign.
// Policies never hold a negative duration.
func FormatDuration(d time.Duration) string {
	var buf [40]byte
	return string(appendDuration(buf[:0], d))
}

func appendDuration(b []byte, d time.Duration) []byte {
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u // two's complement magnitude, correct for math.MinInt64 too
	}
	b = append(b, 'P', 'T')
	if u == 0 {
		return append(b, '0', 'S')
	}
	h := u / nsHour
	u %= nsHour
	m := u / nsMinute
	u %= nsMinute
	sec := u / nsSecond
	frac := u % nsSecond
	if h > 0 {
		b = strconv.AppendUint(b, h, 10)
		b = append(b, 'H')
	}
	if m > 0 {
		b = strconv.AppendUint(b, m, 10)
		b = append(b, 'M')
	}
	if sec > 0 || frac > 0 {
		b = strconv.AppendUint(b, sec, 10)
		if frac > 0 {
			var digits [9]byte
			n := 9
			for k := 8; k >= 0; k-- {
				digits[k] = byte('0' + frac%10)
				frac /= 10
			}
			for n > 0 && digits[n-1] == '0' {
				n--
			}
			b = append(b, '.')
			b = append(b, digits[:n]...)
		}
		b = append(b, 'S')
	}
	return b
}
