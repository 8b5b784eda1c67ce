package jsonschema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An Error is one violation found by [Schema.Validate].
//
// The zero value is an empty violation at an empty path; Validate always sets
// both fields.
type Error struct {
	// Path locates the offending value in the document: "$" for the whole
	// document, then ".name" or ["name"] for object members (the bracket
	// form for names that are not identifiers) and [i] for array items.
	Path string
	// Reason says which keyword failed and how, e.g.
	// `missing required property "id"`.
	Reason string
}

// Error returns Path and Reason joined by ": ".
func (e Error) Error() string { return e.Path + ": " + e.Reason }

// Validate decodes doc and returns every violation of s, in the order the
// package documentation describes; nil means doc is valid. A doc that is not
// exactly one JSON value yields a single Error at path "$".
func (s *Schema) Validate(doc []byte) []Error {
	v, err := decode(doc)
	if err != nil {
		return []Error{{Path: "$", Reason: "invalid JSON: " + err.Error()}}
	}
	var errs []Error
	s.root.validate(&errs, "$", v)
	return errs
}

func fail(errs *[]Error, path, format string, args ...any) {
	*errs = append(*errs, Error{Path: path, Reason: fmt.Sprintf(format, args...)})
}

func (n *node) validate(errs *[]Error, path string, v any) {
	if n.ref != nil {
		n.ref.validate(errs, path, v)
	}
	if n.types != nil && !n.hasType(v) {
		want := n.types[0]
		if len(n.types) > 1 {
			want = "one of " + strings.Join(n.types, ", ")
		}
		fail(errs, path, "type %s, want %s", typeOf(v), want)
		return
	}
	if n.hasConst && !equal(n.constant, v) {
		fail(errs, path, "value %s, want const %s", show(v), show(n.constant))
	}
	if n.hasEnum && !n.inEnum(v) {
		fail(errs, path, "value %s not in enum %s", show(v), show(n.enum))
	}
	switch x := v.(type) {
	case string:
		n.validateString(errs, path, x)
	case json.Number:
		n.validateNumber(errs, path, x)
	case []any:
		n.validateArray(errs, path, x)
	case map[string]any:
		n.validateObject(errs, path, x)
	}
}

func (n *node) hasType(v any) bool {
	got := typeOf(v)
	for _, t := range n.types {
		if t == got || (t == "number" && got == "integer") {
			return true
		}
	}
	return false
}

func (n *node) inEnum(v any) bool {
	for _, e := range n.enum {
		if equal(e, v) {
			return true
		}
	}
	return false
}

func (n *node) validateString(errs *[]Error, path, s string) {
	if n.minLength >= 0 && utf8.RuneCountInString(s) < n.minLength {
		fail(errs, path, "string shorter than %d", n.minLength)
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		fail(errs, path, "%q does not match %s", s, n.pattern)
	}
}

func (n *node) validateNumber(errs *[]Error, path string, x json.Number) {
	if n.minimum == nil && n.maximum == nil && n.exclMax == nil {
		return
	}
	r := rat(x)
	if r == nil {
		fail(errs, path, "number %s out of range", x)
		return
	}
	if n.minimum != nil && r.Cmp(n.minimum.r) < 0 {
		fail(errs, path, "%s < minimum %s", x, n.minimum.text)
	}
	if n.maximum != nil && r.Cmp(n.maximum.r) > 0 {
		fail(errs, path, "%s > maximum %s", x, n.maximum.text)
	}
	if n.exclMax != nil && r.Cmp(n.exclMax.r) >= 0 {
		fail(errs, path, "%s ≥ exclusiveMaximum %s", x, n.exclMax.text)
	}
}

func (n *node) validateArray(errs *[]Error, path string, a []any) {
	if n.minItems >= 0 && len(a) < n.minItems {
		fail(errs, path, "%d items, want ≥ %d", len(a), n.minItems)
	}
	if n.unique {
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if equal(a[i], a[j]) {
					fail(errs, path, "items %d and %d are equal", i, j)
				}
			}
		}
	}
	if n.items != nil {
		for i, item := range a {
			n.items.validate(errs, path+"["+strconv.Itoa(i)+"]", item)
		}
	}
}

func (n *node) validateObject(errs *[]Error, path string, o map[string]any) {
	if n.minProps >= 0 && len(o) < n.minProps {
		fail(errs, path, "%d properties, want ≥ %d", len(o), n.minProps)
	}
	for _, r := range n.required {
		if _, ok := o[r]; !ok {
			fail(errs, path, "missing required property %q", r)
		}
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch p, ok := n.props[k]; {
		case ok:
			p.validate(errs, member(path, k), o[k])
		case n.noExtra:
			fail(errs, path, "property %q not allowed", k)
		case n.extra != nil:
			n.extra.validate(errs, member(path, k), o[k])
		}
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// member extends path with an object member name.
func member(path, name string) string {
	if identifier.MatchString(name) {
		return path + "." + name
	}
	return path + "[" + strconv.Quote(name) + "]"
}

// show renders a decoded value as compact JSON for messages.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
