package policytest

import (
	"math"
	"strconv"
	"strings"

	"pgregory.net/rapid"
)

// Largest count of each duration unit that fits in math.MaxInt64
// nanoseconds (docs/decisions.md RK-07, RK-11): Y, M (month), D, H, M
// (minute), S.
var unitLimit = [6]uint64{
	292,        // 365 days
	3508,       // 730 hours (3509 months overflow)
	106751,     // 24 hours
	2562047,    // hours
	153722867,  // minutes
	9223372036, // seconds
}

var unitNS = [6]uint64{365 * 24 * 3600e9, 730 * 3600e9, 24 * 3600e9, 3600e9, 60e9, 1e9}

var unitLetter = [6]string{"Y", "M", "D", "H", "M", "S"}

// durationShape is a valid duration string before mutation, with its
// components, so that mutations can reach every part of the grammar.
type durationShape struct {
	digits [6]string // "" = component absent
	frac   string    // fraction digits of the seconds, "" = none
}

func (d *durationShape) String() string {
	var b strings.Builder
	b.WriteByte('P')
	for i := 0; i < 3; i++ {
		if d.digits[i] != "" {
			b.WriteString(d.digits[i])
			b.WriteString(unitLetter[i])
		}
	}
	if d.digits[3] != "" || d.digits[4] != "" || d.digits[5] != "" {
		b.WriteByte('T')
		for i := 3; i < 6; i++ {
			if d.digits[i] == "" {
				continue
			}
			b.WriteString(d.digits[i])
			if i == 5 && d.frac != "" {
				b.WriteByte('.')
				b.WriteString(d.frac)
			}
			b.WriteString(unitLetter[i])
		}
	}
	return b.String()
}

// fits reports whether the shape's length is at most math.MaxInt64 ns,
// computed as ParseDuration's rules say (fraction rounded half up at the
// ninth digit).
func (d *durationShape) fits() bool {
	var total uint64
	for i, s := range d.digits {
		if s == "" {
			continue
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > unitLimit[i]+1 {
			return false
		}
		hi, lo := mul64(n, unitNS[i])
		if hi != 0 || lo > math.MaxInt64-total {
			return false
		}
		total += lo
	}
	if d.frac != "" {
		f := d.frac + "0000000000"
		ns, _ := strconv.ParseUint(f[:9], 10, 64)
		if f[9] >= '5' {
			ns++
		}
		if ns > math.MaxInt64-total {
			return false
		}
	}
	return true
}

func mul64(a, b uint64) (hi, lo uint64) {
	if a == 0 || b == 0 {
		return 0, 0
	}
	p := a * b
	if p/b != a {
		return 1, p
	}
	return 0, p
}

// count draws the digits of one component: mostly small numbers, often
// with leading zeros, and the values at and around the unit's overflow
// limit.
func count(t *rapid.T, unit int) string {
	var n uint64
	switch intRange(0, 5).Draw(t, "count_kind") {
	case 0, 1:
		n = rapid.Uint64Range(0, 60).Draw(t, "count")
	case 2:
		n = rapid.Uint64Range(0, 100000).Draw(t, "count")
	case 3:
		n = unitLimit[unit] - 1 + rapid.Uint64Range(0, 2).Draw(t, "count_at_limit")
	case 4:
		n = rapid.Uint64Range(0, unitLimit[unit]).Draw(t, "count")
	default:
		n = durationPick1.Draw(t, "count")
	}
	s := strconv.FormatUint(n, 10)
	if z := intRange(0, 6).Draw(t, "leading_zeros"); z >= 4 {
		s = strings.Repeat("0", z-3) + s
	}
	return s
}

// fraction draws 1 to 12 fraction digits, biased toward the rounding edges
// at the ninth digit.
func fraction(t *rapid.T) string {
	n := intRange(1, 12).Draw(t, "frac_digits")
	switch intRange(0, 4).Draw(t, "frac_kind") {
	case 0: // arbitrary digits
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + intRange(0, 9).Draw(t, "frac_digit"))
		}
		return string(b)
	case 1: // zeros then one digit: 0.0000000005, 0.000000001, ...
		return strings.Repeat("0", n-1) + strconv.Itoa(intRange(1, 9).Draw(t, "frac_last"))
	case 2: // all nines: carries into the seconds
		return strings.Repeat("9", n)
	case 3: // ...4999 and ...5000 around the half
		if n < 10 {
			return strings.Repeat("5", n)
		}
		return strings.Repeat("0", 8) + durationPick2.Draw(t, "ninth") +
			durationPick3.Draw(t, "rest")
	default:
		return strings.Repeat("0", n)
	}
}

// shape draws a valid duration shape: a non-empty set of components, time
// components more often than date ones.
func shape(t *rapid.T, dateComponents bool) durationShape {
	var d durationShape
	// Bit 0 is the seconds, so the smallest set (1) is "PTnS".
	max := 63
	if !dateComponents {
		max = 7
	}
	set := intRange(1, max).Draw(t, "components")
	// Drawn whatever the set, so that the shrinker can move a count from
	// one unit to another without shifting the draws that follow.
	hasFraction := intRange(0, 2).Draw(t, "has_fraction") > 0
	for bit := 0; bit < 6; bit++ {
		if set&(1<<bit) != 0 {
			unit := 5 - bit
			d.digits[unit] = count(t, unit)
		}
	}
	if d.digits[5] != "" && hasFraction {
		d.frac = fraction(t)
	}
	return d
}

var validDuration = rapid.Custom(drawValidDuration)

func drawValidDuration(t *rapid.T) string {
	d := shape(t, true)
	if !d.fits() {
		t.Skip("policytest: duration past the largest value") // rare: several components at their limits
	}
	return d.String()
}

// ValidDuration generates OJS duration strings that
// [github.com/retrykit/retrykit/policy.ParseDuration] accepts: every
// combination of the six components (years, months and days included; the
// conformance flag "should:date-components" marks those), 0 to 12
// fractional digits on the seconds with the round-half-up edges at the ninth
// digit, leading zeros, and counts at and just below each unit's overflow
// limit. Shrinks toward "PT0S".
func ValidDuration() *rapid.Generator[string] { return validDuration }

// Non-ASCII digits that look or count like ASCII ones.
var foreignDigits = []string{"٣", "３", "۳", "߃", "३", "𝟑"}

var duration = rapid.Custom(drawDuration)

func drawDuration(t *rapid.T) string {
	d := shape(t, true)
	s := d.String()
	switch intRange(0, 15).Draw(t, "mutation") {
	case 0, 1, 2, 3: // valid when it fits, else an overflow (the largest value +1ns and beyond)
		return s
	case 4: // lower case designator
		i := designatorIndex(t, s)
		return s[:i] + strings.ToLower(s[i:i+1]) + s[i+1:]
	case 5: // white space
		i := intRange(0, len(s)).Draw(t, "space_at")
		return s[:i] + durationPick4.Draw(t, "space") + s[i:]
	case 6: // a non-ASCII digit
		i := digitIndex(t, s)
		if i < 0 {
			return s + foreignDigits[0] + "S"
		}
		return s[:i] + pick(t, foreignDigits, "digit") + s[i+1:]
	case 7: // sign
		return durationPick5.Draw(t, "sign") + s
	case 8: // the short invalid forms
		return durationPick6.Draw(t, "short")
	case 9: // a fraction where the grammar has none, or a malformed one
		return durationPick7.Draw(t, "bad_fraction")
	case 10: // weeks
		return durationPick8.Draw(t, "weeks")
	case 11: // components out of order or repeated
		return durationPick9.Draw(t, "order")
	case 12: // far past the largest value
		n := intRange(19, 40).Draw(t, "huge_digits")
		return "PT" + strings.Repeat("9", n) + durationPick10.Draw(t, "unit")
	case 13: // other characters a lenient parser might take
		return durationPick11.Draw(t, "junk")
	case 14: // the largest value and one nanosecond past it
		return durationPick12.Draw(t, "limit")
	default: // a trailing T
		return s + "T"
	}
}

// Duration generates strings near the edges of the OJS duration grammar,
// valid and invalid: everything [ValidDuration] yields, values past the
// largest duration, and mutations that a lenient parser accepts by mistake:
// lower case, white space, non-ASCII digits, signs, weeks, "P", "PT",
// "P1DT", misplaced or malformed fractions, components out of order or
// repeated. Shrinks toward "PT0S".
func Duration() *rapid.Generator[string] { return duration }

func designatorIndex(t *rapid.T, s string) int {
	var idx []int
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			idx = append(idx, i)
		}
	}
	return idx[intRange(0, len(idx)-1).Draw(t, "designator")]
}

func digitIndex(t *rapid.T, s string) int {
	var idx []int
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	return idx[intRange(0, len(idx)-1).Draw(t, "digit_at")]
}

// Generators of fixed choices, built once.
var durationPick1 = rapid.SampledFrom([]uint64{10, 24, 59, 60, 61, 90, 99, 100, 1000, 3600, 86400})
var durationPick2 = rapid.SampledFrom([]string{"0", "1", "9"})
var durationPick3 = rapid.SampledFrom([]string{"4", "5", "49", "50", "499"})
var durationPick4 = rapid.SampledFrom([]string{" ", "\t", "\u00a0", "\n"})
var durationPick5 = rapid.SampledFrom([]string{"-", "+"})
var durationPick6 = rapid.SampledFrom([]string{"", "P", "PT", "P1DT", "T1S", "1S", "PT1", "P1", "PT1H2", "PT0", "P0", "p", "pt1s"})
var durationPick7 = rapid.SampledFrom([]string{"PT1.5M", "PT1.5H", "P1.5D", "PT.5S", "PT1.S", "PT1,5S", "PT1..5S", "PT1.5.5S", "P0.5Y", "PT-1S", "PT1.5", "PT0.S"})
var durationPick8 = rapid.SampledFrom([]string{"P1W", "P2W", "P0W", "P1W1D", "P1WT1S"})
var durationPick9 = rapid.SampledFrom([]string{"PT1S1M", "PT1M1H", "P1D1M", "P1M1Y", "PT1S1S", "P1Y1Y", "PT1H1H", "P1DT1S1M", "PT1M1M", "P1YT1Y"})
var durationPick10 = rapid.SampledFrom([]string{"S", "H", "M"})
var durationPick11 = rapid.SampledFrom([]string{"PT1e3S", "PT1_000S", "PT0x10S", "PT1SX", "XPT1S", "PT1S ", "PTS", "PT+1S", "P1DT1HS", "PT1s", "Pt1S"})
var durationPick12 = rapid.SampledFrom([]string{"PT2562047H47M16.854775807S", "PT2562047H47M16.854775808S", "PT9223372036.854775807S",
	"PT9223372036.854775808S", "PT9223372036.8547758075S", "PT9223372036.8547758074S", "P106751DT23H47M16.854775807S", "P292Y"})
