package backoff

import "strconv"

// Strategy selects the formula that turns an attempt number into a raw delay.
//
// The zero value is [Exponential], the OJS default. A Strategy is a plain
// value and safe to copy and share.
type Strategy uint8

const (
	// Exponential grows the delay geometrically: Initial * Coefficient^(n-1).
	// It is the zero value and the OJS default.
	Exponential Strategy = iota
	// None keeps the delay constant: Initial for every attempt.
	None
	// Linear grows the delay by Initial per attempt: Initial * n.
	Linear
	// Polynomial raises the attempt number to the coefficient:
	// Initial * n^Coefficient (Sidekiq-style with Coefficient 4).
	Polynomial
)

// String returns the OJS name of s: "exponential", "none", "linear" or
// "polynomial". A value outside the four constants prints as "Strategy(N)".
func (s Strategy) String() string {
	switch s {
	case Exponential:
		return "exponential"
	case None:
		return "none"
	case Linear:
		return "linear"
	case Polynomial:
		return "polynomial"
	}
	return "Strategy(" + strconv.Itoa(int(s)) + ")"
}

// valid reports whether s is one of the four defined strategies.
func (s Strategy) valid() bool { return s <= Polynomial }

// ParseStrategy returns the Strategy named name. Only the four exact
// lowercase names "none", "linear", "exponential" and "polynomial" are
// accepted; anything else (including "" and other spellings) is a
// [*ConfigError] for the field Strategy that matches both
// [ErrUnknownStrategy] and [ErrInvalidConfig] with [errors.Is].
func ParseStrategy(name string) (Strategy, error) {
	switch name {
	case "exponential":
		return Exponential, nil
	case "none":
		return None, nil
	case "linear":
		return Linear, nil
	case "polynomial":
		return Polynomial, nil
	}
	return 0, &ConfigError{Field: "Strategy", Value: name, Reason: `must be one of "none", "linear", "exponential", "polynomial"`}
}
