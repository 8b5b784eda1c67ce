package replay

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/internal/suggest"
	"github.com/retrykit/retrykit/policy"
)

// Filter selects dead letters; an empty field matches every value (§7.1:
// "same as bulk retry filter", §6.2). Strings compare exactly, case
// included (RK-222).
//
// The zero Filter matches every dead letter. A Filter is a plain value.
type Filter struct {
	ErrorType string    // type of the most recent error; JSON: error_type
	Queue     string    // JSON: queue
	Type      string    // job type; JSON: type
	Since     time.Time // discarded at or after; zero: any time; JSON: since, RFC 3339
}

// Rule is one automatic replay rule (§7.1).
//
// The zero Rule is not valid (it has no name). A Rule is a plain value.
type Rule struct {
	Name       string        // unique among the rules; recorded in ojs.replay_rule
	Filter     Filter        // which dead letters
	Delay      time.Duration // from discarded_at to the replay; >= 0
	MaxReplays int           // the largest ojs.replay_count the rule replays up to; >= 1
	Enabled    bool          // a disabled rule matches nothing
}

// Bounds of a rule list.
const (
	MaxRules        = 64
	MaxNameLen      = 255 // bytes, also for each filter string
	MaxReplaysLimit = 1 << 20
	MaxDocumentSize = 1 << 20
)

// Rules is a validated, ordered, immutable list of rules.
//
// The zero Rules and a nil *Rules hold no rule and replay nothing. Rules
// are safe for concurrent use.
type Rules struct{ rules []Rule }

// ErrInvalidRules is the errors.Is target of every error of New and Parse;
// the concrete error is a *FieldError.
var ErrInvalidRules = errors.New("replay: invalid replay rules")

// FieldError is the first problem found in a rule list.
//
// It is never mutated after it is returned. The zero value names no field.
type FieldError struct {
	Field  string // JSON path: "replay_rules[2].filter.queue", or "" for the document
	Reason string
	Err    error // the cause, or nil (a *policy.DurationError for delay)
}

// Error returns "replay: FIELD: REASON".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return "replay: " + e.Reason
	}
	return "replay: " + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalidRules.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidRules }

// Unwrap returns the cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// New validates rules and returns them as Rules, in the same order:
// at most MaxRules; each name non-empty, valid UTF-8, at most MaxNameLen
// bytes and unique; filter strings valid UTF-8 and at most MaxNameLen
// bytes; Delay >= 0; MaxReplays from 1 to MaxReplaysLimit.
func New(rules []Rule) (*Rules, error) {
	if len(rules) > MaxRules {
		return nil, &FieldError{Field: "replay_rules", Reason: "at most " + strconv.Itoa(MaxRules) + " rules, got " + strconv.Itoa(len(rules))}
	}
	seen := map[string]int{}
	for i, r := range rules {
		at := "replay_rules[" + strconv.Itoa(i) + "]."
		if r.Name == "" {
			return nil, &FieldError{Field: at + "name", Reason: "must be a non-empty string"}
		}
		if reason := checkString(r.Name); reason != "" {
			return nil, &FieldError{Field: at + "name", Reason: reason}
		}
		if j, dup := seen[r.Name]; dup {
			return nil, &FieldError{Field: at + "name", Reason: strconv.Quote(r.Name) + " is already the name of replay_rules[" + strconv.Itoa(j) + "]"}
		}
		seen[r.Name] = i
		for k, s := range []string{r.Filter.ErrorType, r.Filter.Queue, r.Filter.Type} {
			if reason := checkString(s); reason != "" {
				return nil, &FieldError{Field: at + "filter." + filterKeys[k], Reason: reason}
			}
		}
		if r.Delay < 0 {
			return nil, &FieldError{Field: at + "delay", Reason: "must not be negative, got " + r.Delay.String()}
		}
		if r.MaxReplays < 1 || r.MaxReplays > MaxReplaysLimit {
			return nil, &FieldError{Field: at + "max_replays", Reason: "must be an integer from 1 to " + strconv.Itoa(MaxReplaysLimit) + ", got " + strconv.Itoa(r.MaxReplays)}
		}
	}
	return &Rules{rules: append([]Rule(nil), rules...)}, nil
}

func checkString(s string) string {
	if len(s) > MaxNameLen {
		return "at most " + strconv.Itoa(MaxNameLen) + " bytes, got " + strconv.Itoa(len(s))
	}
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	return ""
}

var (
	ruleKeys   = []string{"name", "filter", "delay", "max_replays", "enabled"}
	filterKeys = []string{"error_type", "queue", "type", "since"}
)

// Parse decodes the replay_rules document of §7.1,
// {"replay_rules": [{"name", "filter", "delay", "max_replays", "enabled"}]},
// and validates it as New does. name, filter, delay (an ISO 8601 duration,
// read by policy.ParseDuration) and max_replays are required; enabled
// defaults to true (RK-221); filter may be {} (every dead letter). Unknown
// keys (with the closest known one suggested), duplicate keys, null, wrong
// types, a filter string that is "" and a document over MaxDocumentSize are
// refused; the error names the first bad field.
func Parse(data []byte) (*Rules, error) {
	if len(data) > MaxDocumentSize {
		return nil, &FieldError{Reason: "document of " + strconv.Itoa(len(data)) + " bytes exceeds " + strconv.Itoa(MaxDocumentSize)}
	}
	top, err := strictjson.Object(data, 8)
	if err != nil {
		fe := err.(*strictjson.FieldError) // Object's only error type
		return nil, &FieldError{Field: fe.Path, Reason: fe.Reason, Err: err}
	}
	var list json.RawMessage
	for _, m := range top {
		if m.Key != "replay_rules" {
			return nil, &FieldError{Field: m.Key, Reason: "unknown field" + suggest.Hint(m.Key, []string{"replay_rules"})}
		}
		list = m.Value
	}
	if list == nil {
		return nil, &FieldError{Field: "replay_rules", Reason: "required"}
	}
	elems, ok := strictjson.Array(list, MaxRules)
	if !ok {
		return nil, &FieldError{Field: "replay_rules", Reason: "must be an array of at most " + strconv.Itoa(MaxRules) + " rules, got " + strictjson.Describe(list)}
	}
	rules := make([]Rule, 0, len(elems))
	for i, e := range elems {
		r, err := parseRule("replay_rules["+strconv.Itoa(i)+"]", e)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return New(rules)
}

func parseRule(at string, raw json.RawMessage) (Rule, error) {
	members, err := strictjson.Object(raw, 16)
	if err != nil {
		return Rule{}, &FieldError{Field: at, Reason: err.Error(), Err: err}
	}
	r := Rule{Enabled: true}
	have := map[string]bool{}
	for _, m := range members {
		f := at + "." + m.Key
		have[m.Key] = true
		switch m.Key {
		case "name":
			s, ok := strictjson.String(m.Value)
			if !ok {
				return Rule{}, &FieldError{Field: f, Reason: "must be a string, got " + strictjson.Describe(m.Value)}
			}
			r.Name = s
		case "filter":
			flt, err := parseFilter(f, m.Value)
			if err != nil {
				return Rule{}, err
			}
			r.Filter = flt
		case "delay":
			s, ok := strictjson.String(m.Value)
			if !ok {
				return Rule{}, &FieldError{Field: f, Reason: "must be an ISO 8601 duration string, got " + strictjson.Describe(m.Value)}
			}
			d, err := policy.ParseDuration(s)
			if err != nil {
				return Rule{}, &FieldError{Field: f, Reason: strings.TrimPrefix(err.Error(), "policy: "), Err: err}
			}
			r.Delay = d
		case "max_replays":
			v, reason := strictjson.Int(m.Value, 1, MaxReplaysLimit)
			if reason != "" {
				return Rule{}, &FieldError{Field: f, Reason: reason}
			}
			r.MaxReplays = int(v)
		case "enabled":
			b, ok := strictjson.Bool(m.Value)
			if !ok {
				return Rule{}, &FieldError{Field: f, Reason: "must be true or false, got " + strictjson.Describe(m.Value)}
			}
			r.Enabled = b
		default:
			return Rule{}, &FieldError{Field: f, Reason: "unknown field" + suggest.Hint(m.Key, ruleKeys)}
		}
	}
	for _, k := range []string{"name", "filter", "delay", "max_replays"} {
		if !have[k] {
			return Rule{}, &FieldError{Field: at + "." + k, Reason: "required"}
		}
	}
	return r, nil
}

func parseFilter(at string, raw json.RawMessage) (Filter, error) {
	members, err := strictjson.Object(raw, 16)
	if err != nil {
		return Filter{}, &FieldError{Field: at, Reason: err.Error(), Err: err}
	}
	var f Filter
	for _, m := range members {
		path := at + "." + m.Key
		s, ok := strictjson.String(m.Value)
		switch m.Key {
		case "error_type", "queue", "type", "since":
		default:
			return Filter{}, &FieldError{Field: path, Reason: "unknown field" + suggest.Hint(m.Key, filterKeys)}
		}
		if !ok || s == "" {
			return Filter{}, &FieldError{Field: path, Reason: "must be a non-empty string, got " + strictjson.Describe(m.Value)}
		}
		switch m.Key {
		case "error_type":
			f.ErrorType = s
		case "queue":
			f.Queue = s
		case "type":
			f.Type = s
		case "since":
			t, err := strictjson.Timestamp(s)
			if err != nil || len(s) > 64 {
				return Filter{}, &FieldError{Field: path, Reason: "must be an RFC 3339 time, got " + strconv.Quote(clip(s)), Err: err}
			}
			f.Since = t
		}
	}
	return f, nil
}

func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	n := 48
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Rules returns a copy of the rules, in order.
func (rs *Rules) Rules() []Rule {
	if rs == nil {
		return nil
	}
	return append([]Rule(nil), rs.rules...)
}

// MarshalJSON writes the §7.1 document; Parse reads it back to equal rules.
func (rs *Rules) MarshalJSON() ([]byte, error) {
	b := []byte(`{"replay_rules":[`)
	for i, r := range rs.Rules() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = strconv.AppendQuote(b, r.Name)
		b = append(b, `,"filter":{`...)
		sep := ""
		for _, kv := range [][2]string{{"error_type", r.Filter.ErrorType}, {"queue", r.Filter.Queue}, {"type", r.Filter.Type}} {
			if kv[1] != "" {
				b = append(b, sep+`"`+kv[0]+`":`...)
				b = appendJSONString(b, kv[1])
				sep = ","
			}
		}
		if !r.Filter.Since.IsZero() {
			b = append(b, sep+`"since":`...)
			b = strconv.AppendQuote(b, r.Filter.Since.Format(time.RFC3339Nano))
		}
		b = append(b, `},"delay":`...)
		b = strconv.AppendQuote(b, policy.FormatDuration(r.Delay))
		b = append(b, `,"max_replays":`...)
		b = strconv.AppendInt(b, int64(r.MaxReplays), 10)
		b = append(b, `,"enabled":`...)
		b = strconv.AppendBool(b, r.Enabled)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

func appendJSONString(b []byte, s string) []byte {
	j, _ := json.Marshal(s) // valid UTF-8 by New
	return append(b, j...)
}
