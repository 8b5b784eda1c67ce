package strictjson

import (
	"errors"
	"time"
)

// ErrOffset is matched by Timestamp's error for a UTC offset outside
// RFC 3339's range (time-numoffset: hours 00 to 23, minutes 00 to 59),
// such as +24:00, which time.Parse accepts.
var ErrOffset = errors.New("UTC offset out of range")

// Timestamp reads an RFC 3339 date-time as time.Parse(time.RFC3339Nano)
// does, and refuses the offsets time.Parse lets through but RFC 3339 §5.6
// does not (+24:00, -24:00, +23:60): the one timestamp rule of every
// input.
func Timestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if n := len(s); n >= 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':' {
		hh := int(s[n-5]-'0')*10 + int(s[n-4]-'0')
		mm := int(s[n-2]-'0')*10 + int(s[n-1]-'0')
		if hh > 23 || mm > 59 {
			return time.Time{}, &time.ParseError{Layout: time.RFC3339Nano, Value: s, LayoutElem: "Z07:00", ValueElem: s[n-6:], Message: ": " + ErrOffset.Error() + " (RFC 3339: hours 00-23, minutes 00-59)"}
		}
	}
	return t, nil
}
