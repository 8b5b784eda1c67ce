package protocol

import (
	"encoding/json"
	"time"
)

// CaseEpoch is the instant the *_ms fields of a timeout_decide,
// timeout_expiry or replay case count from (PROTOCOL.md 3.10), the same
// as the scenarios' at_ms (PROTOCOL.md 3.7).
var CaseEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// CaseTime returns the instant ms milliseconds after [CaseEpoch].
func CaseTime(ms int64) time.Time { return CaseEpoch.Add(time.Duration(ms) * time.Millisecond) }

// TimeoutCase is the case object of the timeout_decide, timeout_expiry
// and replay requests (PROTOCOL.md 3.10), as the reference and the bug
// models read it from [Request].Case. Each op reads only its own fields;
// a nil pointer is a field the request did not carry.
type TimeoutCase struct {
	Timeouts    json.RawMessage `json:"timeouts"` // the ojs-timeouts object, raw
	Policy      json.RawMessage `json:"policy"`   // the retry policy, raw
	CreatedAtMS *int64          `json:"created_at_ms"`
	NowMS       *int64          `json:"now_ms"`
	SinceMS     *int64          `json:"since_ms"`
	Attempt     int64           `json:"attempt"`
	Rand        *float64        `json:"rand"`
	Error       *CaseError      `json:"error"`
	Kind        string          `json:"kind"`
	Rules       json.RawMessage `json:"rules"` // the replay rules, raw
	Letter      *CaseLetter     `json:"letter"`
	// The failure's inputs of the retry extensions (extension_decide).
	RetryAfterNS *int64 `json:"retry_after_ns"` // a delay the handler asked for
	SnoozeNS     *int64 `json:"snooze_ns"`      // a snooze
	Snoozes      int64  `json:"snoozes"`        // snoozes the job has taken
	PrevDelayNS  int64  `json:"prev_delay_ns"`  // the delay before the failed attempt
}

// CaseError is the failure of a timeout_decide or extension_decide case.
type CaseError struct {
	Type string `json:"type"`
	Code string `json:"code"`
}

// CaseLetter is the dead letter of a replay case.
type CaseLetter struct {
	ErrorType     string          `json:"error_type"`
	Queue         string          `json:"queue"`
	Type          string          `json:"type"`
	DiscardedAtMS *int64          `json:"discarded_at_ms"`
	Meta          json.RawMessage `json:"meta"` // the job's meta object, raw
}
