package policy

import (
	"strconv"
	"unicode/utf8"

	"github.com/retrykit/retrykit/backoff"
)

// MarshalJSON writes the policy in canonical form: all eight fields, always in
// this order, with no white space (then the extension fields of
// docs/extensions.md that are set, see appendExtension):
//
//	{"max_attempts":3,"initial_interval":"PT1S","backoff_coefficient":2.0,
//	 "max_interval":"PT5M","jitter":true,"non_retryable_errors":[],
//	 "on_exhaustion":"discard","backoff_strategy":"exponential"}
//
// Durations are written with FormatDuration (hours at most, never days,
// weeks or months), and the coefficient with the shortest decimal that
// parses back to the same float64, ".0" added to integral values. Parse of
// the output gives a Policy Equal to p. A nil or zero Policy is written as
// the default policy. MarshalJSON never fails on a Policy built by this
// package.
func (p *Policy) MarshalJSON() ([]byte, error) {
	return p.appendJSON(make([]byte, 0, 256)), nil
}

// appendJSON appends the canonical JSON form of p (see MarshalJSON) to b.
func (p *Policy) appendJSON(b []byte) []byte {
	s := &p.get().spec
	b = append(b, `{"max_attempts":`...)
	b = appendInt(b, s.MaxAttempts)
	b = append(b, `,"initial_interval":"`...)
	b = appendDuration(b, s.InitialInterval)
	b = append(b, `","backoff_coefficient":`...)
	b = appendFloat(b, s.BackoffCoefficient)
	b = append(b, `,"max_interval":"`...)
	b = appendDuration(b, s.MaxInterval)
	b = append(b, `","jitter":`...)
	if s.Jitter {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"non_retryable_errors":[`...)
	for i, pat := range s.NonRetryableErrors {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, pat)
	}
	b = append(b, `],"on_exhaustion":"`...)
	b = append(b, s.OnExhaustion.String()...)
	b = append(b, `","backoff_strategy":"`...)
	b = append(b, s.Strategy.String()...)
	b = append(b, '"')
	b = appendExtension(b, s)
	return append(b, '}')
}

// appendExtension appends the extension fields of s that differ from their
// zero values (docs/extensions.md), each after a comma, in the order
// jitter_mode, error_rules, max_retry_after, max_snoozes, max_snooze. A
// policy without them is written exactly as OJS 1.0 writes it. Each error
// rule is written with all its fields, so that a reader inherits nothing.
func appendExtension(b []byte, s *Spec) []byte {
	if s.JitterMode != backoff.Proportional {
		b = append(b, `,"jitter_mode":"`...)
		b = append(b, s.JitterMode.String()...)
		b = append(b, '"')
	}
	if len(s.ErrorRules) > 0 {
		b = append(b, `,"error_rules":[`...)
		for i := range s.ErrorRules {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRule(b, &s.ErrorRules[i])
		}
		b = append(b, ']')
	}
	if s.MaxRetryAfter != 0 {
		b = append(b, `,"max_retry_after":"`...)
		b = appendDuration(b, s.MaxRetryAfter)
		b = append(b, '"')
	}
	if s.MaxSnoozes != 0 {
		b = append(b, `,"max_snoozes":`...)
		b = appendInt(b, s.MaxSnoozes)
	}
	if s.MaxSnooze != 0 {
		b = append(b, `,"max_snooze":"`...)
		b = appendDuration(b, s.MaxSnooze)
		b = append(b, '"')
	}
	return b
}

func appendRule(b []byte, r *ErrorRule) []byte {
	b = append(b, `{"match":[`...)
	for i, pat := range r.Match {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, pat)
	}
	b = append(b, `],"max_attempts":`...)
	b = appendInt(b, r.MaxAttempts)
	b = append(b, `,"initial_interval":"`...)
	b = appendDuration(b, r.InitialInterval)
	b = append(b, `","backoff_coefficient":`...)
	b = appendFloat(b, r.BackoffCoefficient)
	b = append(b, `,"max_interval":"`...)
	b = appendDuration(b, r.MaxInterval)
	b = append(b, `","jitter":`...)
	b = strconv.AppendBool(b, r.Jitter)
	b = append(b, `,"jitter_mode":"`...)
	b = append(b, r.JitterMode.String()...)
	b = append(b, `","backoff_strategy":"`...)
	b = append(b, r.Strategy.String()...)
	b = append(b, '"')
	if r.MaxRetryAfter != 0 {
		b = append(b, `,"max_retry_after":"`...)
		b = appendDuration(b, r.MaxRetryAfter)
		b = append(b, '"')
	}
	return append(b, '}')
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		b = append(b, '-')
		return appendUint(b, uint64(-int64(n)))
	}
	return appendUint(b, uint64(n))
}

func appendUint(b []byte, n uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, buf[i:]...)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Control characters, '"' and '\\'
// are escaped, as are U+2028 and U+2029 (for JavaScript consumers); invalid
// UTF-8 (which New rejects in patterns) would be written as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
