package errmatch

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Matcher decides whether an error type is listed in a set of
// non_retryable_errors patterns. See the package documentation for the
// matching rules.
//
// A Matcher is built by [Compile] and is immutable afterwards, so it is safe
// for concurrent use by any number of goroutines. The zero value, and a nil
// *Matcher, hold no patterns and match nothing.
type Matcher struct {
	patterns []string // as given to Compile, duplicates kept

	exact  table // the exact patterns, deduplicated
	prefix table // each prefix pattern without its '*' ("auth.*" -> "auth.")

	exactLens  lenSet // lengths of the exact patterns
	prefixLens lenSet // lengths of the prefix keys, the dot included
	maxPrefix  int    // length of the longest prefix key; 0 when there is none
}

// Limits of Compile. They bound the memory and time a pattern list from an
// untrusted source (a job payload) can cost; real lists are a few entries of
// a few dozen bytes.
const (
	// MaxPatterns is the largest number of entries in one list.
	MaxPatterns = 100_000
	// MaxPatternLen is the longest entry, in bytes.
	MaxPatternLen = 1024
)

// maxListed is how many rejected entries a *CompileError lists; the rest
// are only counted.
const maxListed = 20

// Compile checks patterns and builds a Matcher for them.
//
// The rules, in the order they are checked:
//
//  1. A list of more than [MaxPatterns] entries is rejected as a whole,
//     with an error that matches [ErrTooManyPatterns] and names the limit;
//     no entry is looked at.
//  2. Every entry must be non-empty, at most [MaxPatternLen] bytes long, and
//     not ".*" alone (a wildcard with no namespace in front of it).
//     Compile checks every entry and reports the bad ones at once, as a
//     [*CompileError] listing the first 20 as [*PatternError] values in
//     index order and counting the others; [errors.As] finds the first
//     one, and [errors.Is] with [ErrInvalidPattern], [ErrEmptyPattern],
//     [ErrEmptyPrefix] or [ErrPatternTooLong] tells the conditions apart.
//
// On error the Matcher is nil. Compile costs time and memory linear in the
// total length of the list.
//
// Duplicate entries are allowed; they are kept by [Matcher.Patterns] and
// cost nothing when matching. A nil or empty list gives a Matcher that
// matches nothing. Compile does not keep a reference to the patterns slice.
func Compile(patterns []string) (*Matcher, error) {
	if len(patterns) > MaxPatterns {
		return nil, &limitError{n: len(patterns)}
	}
	var ce *CompileError
	for i, p := range patterns {
		var reason string
		switch {
		case p == "":
			reason = "must not be empty"
		case p == ".*":
			reason = `nothing before ".*": a prefix pattern needs a namespace, as in "auth.*"`
		case len(p) > MaxPatternLen:
			reason = "longer than the limit of " + strconv.Itoa(MaxPatternLen) + " bytes (errmatch.MaxPatternLen): " + strconv.Itoa(len(p)) + " bytes"
		default:
			continue
		}
		if ce == nil {
			ce = &CompileError{}
		}
		if len(ce.Errors) < maxListed {
			ce.Errors = append(ce.Errors, &PatternError{Index: i, Pattern: p, Reason: reason})
		} else {
			ce.Omitted++
		}
	}
	if ce != nil {
		return nil, ce
	}

	if len(patterns) == 0 {
		return &Matcher{}, nil
	}
	m := &Matcher{patterns: slices.Clone(patterns)}
	// Duplicates are dropped from the tables: a short list is searched, a
	// long one goes through a map.
	var seen map[string]bool
	if len(patterns) > smallList {
		seen = make(map[string]bool, len(patterns))
	}
	// exact fills keys from the front, prefix from the back.
	keys := make([]string, len(patterns))
	ne, np := 0, len(keys)
	for i, p := range patterns {
		if seen != nil {
			if seen[p] {
				continue
			}
			seen[p] = true
		} else if slices.Contains(patterns[:i], p) {
			continue
		}
		if strings.HasSuffix(p, ".*") {
			key := p[:len(p)-1] // keep the dot: "auth.*" -> "auth."
			np--
			keys[np] = key
			m.prefixLens.add(len(key))
			m.maxPrefix = max(m.maxPrefix, len(key))
		} else {
			keys[ne] = p
			ne++
			m.exactLens.add(len(p))
		}
	}
	exact, prefix := keys[:ne], keys[np:]
	slots := make([]slot, tableSize(len(exact))+tableSize(len(prefix)))
	m.exact = newTable(exact, slots[:tableSize(len(exact))])
	m.prefix = newTable(prefix, slots[tableSize(len(exact)):])
	return m, nil
}

// smallList is the longest pattern list Compile deduplicates without a map.
const smallList = 16

// Match reports whether errType is matched by at least one pattern: it is
// equal to an exact pattern, or it starts with the prefix of a pattern
// ending in ".*", that prefix's trailing dot included.
//
// Match does not allocate. Its cost depends on the length of errType and on
// the number of dots in it, not on the number of patterns: it reads errType
// once, eight bytes at a time, and does at most one hash-table probe per dot
// and one for the whole string. A nil Matcher matches nothing.
func (m *Matcher) Match(errType string) bool {
	if m == nil {
		return false
	}
	n := len(errType)
	if n == 0 {
		return false // "" is never a valid pattern, and no prefix is empty
	}
	exact := m.exactLens.has(n)
	end := n // how much of errType can still matter
	if !exact {
		end = min(n, m.maxPrefix)
	}

	h := uint64(hashSeed)
	for i := 0; i < end; i += 8 {
		// w holds errType[i:i+8], or the rest of errType zero-extended.
		var w uint64
		switch {
		case n-i >= 8:
			w = load64(errType, i)
		case n >= 8: // loadTail, by hand: the compiler will not inline it
			w = load64(errType, n-8) >> (8 * uint(8-(n-i)))
		default:
			w = loadShort(errType, i)
		}
		if m.maxPrefix > 0 {
			for d := dotMask(w); d != 0; d &= d - 1 {
				j := bits.TrailingZeros64(d) >> 3 // byte index of the dot in w
				k := i + j + 1                    // length of the prefix, dot included
				if k > m.maxPrefix {
					break
				}
				if m.prefixLens.has(k) && m.prefix.lookup(hashFinish(h, w&lowBytes(j+1), k), errType[:k]) {
					return true
				}
			}
		}
		if i+8 >= n {
			return exact && m.exact.lookup(hashFinish(h, w, n), errType)
		}
		h = hashStep(h, w)
	}
	return false
}

// Patterns returns a copy of the patterns the Matcher was compiled from, in
// the order given, duplicates included. It never returns nil: a nil or zero
// Matcher yields an empty slice.
func (m *Matcher) Patterns() []string {
	if m == nil {
		return []string{}
	}
	out := make([]string, len(m.patterns))
	copy(out, m.patterns)
	return out
}

// lenSet is a set of string lengths: exact below 64, and above that an
// over-approximation (every length up to the largest one added).
type lenSet struct {
	small uint64
	max   int
}

func (s *lenSet) add(n int) {
	if n < 64 {
		s.small |= 1 << uint(n)
	}
	s.max = max(s.max, n)
}

func (s *lenSet) has(n int) bool {
	if n < 64 {
		return s.small>>uint(n)&1 != 0
	}
	return n <= s.max
}

// slot is one entry of a table; an empty string marks a free slot (no key is
// ever empty).
type slot struct {
	h uint64
	s string
}

// table is an open-addressing hash set of strings with linear probing, kept
// at most half full so that misses end quickly.
type table struct {
	slots []slot
	mask  uint64
}

// tableSize is the number of slots a table of n keys uses: 0 for none, else
// the smallest power of two, at least 2, that is at least 2n.
func tableSize(n int) int {
	if n == 0 {
		return 0
	}
	size := 2
	for size < 2*n {
		size <<= 1
	}
	return size
}

// newTable builds the table of keys in slots, which must be zeroed and
// tableSize(len(keys)) long.
func newTable(keys []string, slots []slot) table {
	if len(keys) == 0 {
		return table{}
	}
	t := table{slots: slots, mask: uint64(len(slots) - 1)}
	for _, k := range keys {
		h := hashString(k)
		i := h & t.mask
		for t.slots[i].s != "" {
			i = (i + 1) & t.mask
		}
		t.slots[i] = slot{h: h, s: k}
	}
	return t
}

// lookup reports whether s, whose hash is h, is in the table.
func (t *table) lookup(h uint64, s string) bool {
	if len(t.slots) == 0 {
		return false
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.h == h && e.s == s {
			return true
		}
		if e.s == "" {
			return false
		}
	}
}

// The hash reads a string as little-endian 8-byte words. For a string s of
// length n >= 1 whose last (possibly partial) word starts at L = (n-1)&^7:
//
//	hash(s) = hashFinish(fold(hashStep, hashSeed, words of s[:L]), s[L:] zero-extended, n)
//
// so the hash of every prefix ending inside the current word can be finished
// from the running state, which is what lets Match hash errType once.
const (
	hashSeed = 0x243f6a8885a308d3
	hashMul1 = 0x9e3779b97f4a7c15
	hashMul2 = 0xbf58476d1ce4e5b9
	hashMul3 = 0x94d049bb133111eb
)

func hashStep(h, w uint64) uint64 {
	return bits.RotateLeft64((h^w)*hashMul1, 29)
}

func hashFinish(h, tail uint64, n int) uint64 {
	h = hashStep(h, tail) ^ uint64(n)*hashMul3
	h ^= h >> 31
	h *= hashMul2
	h ^= h >> 29
	return h
}

// hashString is the reference form of the hash, used when building tables.
func hashString(s string) uint64 {
	h := uint64(hashSeed)
	if len(s) == 0 {
		return hashFinish(h, 0, 0)
	}
	last := (len(s) - 1) &^ 7
	for i := 0; i < last; i += 8 {
		h = hashStep(h, load64(s, i))
	}
	return hashFinish(h, loadTail(s, last), len(s))
}

// load64 returns s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// loadTail returns s[i:], which must be 1 to 8 bytes long, as a
// little-endian word with the missing high bytes zero.
func loadTail(s string, i int) uint64 {
	if len(s) >= 8 {
		return load64(s, len(s)-8) >> (8 * uint(8-(len(s)-i)))
	}
	return loadShort(s, i)
}

// loadShort is loadTail for strings shorter than 8 bytes.
func loadShort(s string, i int) uint64 {
	var w uint64
	for j := len(s) - 1; j >= i; j-- {
		w = w<<8 | uint64(s[j])
	}
	return w
}

// lowBytes returns a mask of the low b bytes, 1 <= b <= 8.
func lowBytes(b int) uint64 {
	return ^uint64(0) >> (64 - 8*uint(b))
}

// dotMask returns a word with the high bit set in exactly those bytes of w
// that are '.'.
func dotMask(w uint64) uint64 {
	const dots = 0x2e2e2e2e2e2e2e2e
	const low7 = 0x7f7f7f7f7f7f7f7f
	x := w ^ dots          // zero bytes where w has '.'
	y := (x & low7) + low7 // high bit set where the low 7 bits of x are non-zero
	return ^(y | x | low7) // high bit set where x is zero
}
