package conformance

import "github.com/retrykit/retrykit/conformance/protocol"

// Test-only access for the external tests (package conformance_test).

const (
	KindScenario = kindScenario
	KindValidate = kindValidate
)

var OpFor = opFor

// Filter returns the results of r with status s.
func (r *Report) Filter(s Status) []Result { return r.filter(s) }

// Request returns the protocol request v sends, with ID 0.
func (v *Vector) Request() protocol.Request { return v.request() }

// HasFlag reports whether v carries flag f.
func (v *Vector) HasFlag(f string) bool { return v.hasFlag(f) }
