package replay

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/internal/strictjson"
)

// The meta keys of §7.2.
const (
	MetaCount  = "ojs.replay_count"
	MetaLastAt = "ojs.last_replayed_at"
	MetaRule   = "ojs.replay_rule"
)

// MaxMetaMembers is the most keys ReadMeta and WriteMeta read in a meta
// object.
const MaxMetaMembers = 4096

// ErrInvalidMeta is matched (errors.Is) by every error of ReadMeta and
// WriteMeta; the concrete error is a *MetaError.
var ErrInvalidMeta = errors.New("replay: invalid meta")

// MetaError is a malformed meta object or replay key.
//
// It is never mutated after it is returned; the zero value names no key.
type MetaError struct {
	Field  string // "meta" or "meta.ojs.replay_count" …
	Reason string
}

// Error returns "replay: FIELD: REASON".
func (e *MetaError) Error() string { return "replay: " + e.Field + ": " + e.Reason }

// Is reports whether target is ErrInvalidMeta.
func (e *MetaError) Is(target error) bool { return target == ErrInvalidMeta }

// State is a job's replay record (§7.2).
//
// The zero State is a job never replayed. A State is a plain value.
type State struct {
	Count  int       // ojs.replay_count
	LastAt time.Time // ojs.last_replayed_at; zero when never replayed
	Rule   string    // ojs.replay_rule; "" when never replayed
}

// Replayed returns the state after replay r ran at now: its count and rule,
// and now as the last replay time.
func (s State) Replayed(r Replay, now time.Time) State {
	return State{Count: r.Count, LastAt: now, Rule: r.Rule}
}

// ReadMeta reads the replay keys of a job's meta object (other keys are
// ignored; empty or absent meta is the zero State). ojs.replay_count must
// be an integer from 0 to MaxReplaysLimit, ojs.last_replayed_at an RFC 3339
// time and ojs.replay_rule a string; anything else is an error naming the
// key.
func ReadMeta(meta []byte) (State, error) {
	var s State
	if len(meta) == 0 {
		return s, nil
	}
	members, err := strictjson.Object(meta, MaxMetaMembers)
	if err != nil {
		return s, &MetaError{Field: "meta", Reason: err.Error()}
	}
	for _, m := range members {
		switch m.Key {
		case MetaCount:
			v, reason := strictjson.Int(m.Value, 0, MaxReplaysLimit)
			if reason != "" {
				return State{}, &MetaError{Field: "meta." + MetaCount, Reason: reason}
			}
			s.Count = int(v)
		case MetaLastAt:
			str, ok := strictjson.String(m.Value)
			t, err := strictjson.Timestamp(str)
			if !ok || err != nil || len(str) > 64 {
				return State{}, &MetaError{Field: "meta." + MetaLastAt, Reason: "must be an RFC 3339 time, got " + strictjson.Describe(m.Value)}
			}
			s.LastAt = t
		case MetaRule:
			str, ok := strictjson.String(m.Value)
			if !ok || len(str) > MaxNameLen {
				return State{}, &MetaError{Field: "meta." + MetaRule, Reason: "must be a string of at most " + strconv.Itoa(MaxNameLen) + " bytes, got " + strictjson.Describe(m.Value)}
			}
			s.Rule = str
		}
	}
	return s, nil
}

// WriteMeta returns meta with the three replay keys set to s (appended, or
// replaced where they were), every other key kept in order. Empty meta is
// read as {}.
func WriteMeta(meta []byte, s State) ([]byte, error) {
	var members []strictjson.Member
	if len(meta) > 0 {
		var err error
		if members, err = strictjson.Object(meta, MaxMetaMembers); err != nil {
			return nil, &MetaError{Field: "meta", Reason: err.Error()}
		}
	}
	out := []byte{'{'}
	for _, m := range members {
		if m.Key == MetaCount || m.Key == MetaLastAt || m.Key == MetaRule {
			continue
		}
		k, _ := json.Marshal(m.Key)
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, m.Value...)
		out = append(out, ',')
	}
	out = append(out, `"`+MetaCount+`":`...)
	out = strconv.AppendInt(out, int64(s.Count), 10)
	out = append(out, `,"`+MetaLastAt+`":`...)
	out = strconv.AppendQuote(out, s.LastAt.UTC().Format(time.RFC3339Nano))
	out = append(out, `,"`+MetaRule+`":`...)
	r, _ := json.Marshal(s.Rule)
	out = append(out, r...)
	return append(out, '}'), nil
}
