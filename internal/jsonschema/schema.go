package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// ErrUnsupported is matched (with [errors.Is]) by the error [Compile] returns
// for a keyword, or a form of $ref, that this package does not implement.
var ErrUnsupported = errors.New("unsupported")

// ErrInvalidSchema is matched (with [errors.Is]) by the error [Compile]
// returns for a schema that is not valid JSON or gives a keyword a value of
// the wrong kind, such as a negative minLength or a pattern that does not
// compile.
var ErrInvalidSchema = errors.New("invalid schema")

// A Schema is a compiled schema, ready to validate documents.
//
// The zero value is not useful: obtain a Schema from [Compile]. A Schema is
// immutable, so it is safe to share between goroutines and to use for any
// number of documents.
type Schema struct {
	root *node
}

// node is one compiled schema object. Unset keywords have their zero value,
// except the counts, which are -1 when absent.
type node struct {
	ref       *node
	types     []string
	hasConst  bool
	constant  any
	enum      []any
	hasEnum   bool
	required  []string
	props     map[string]*node
	noExtra   bool  // additionalProperties: false
	extra     *node // additionalProperties: a schema
	items     *node
	minItems  int
	unique    bool
	minProps  int
	minLength int
	pattern   *regexp.Regexp
	minimum   *bound
	maximum   *bound
	exclMax   *bound
}

// bound is a numeric keyword value: exact for comparing, as written for
// messages.
type bound struct {
	r    *big.Rat
	text json.Number
}

var typeNames = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// compiler holds the state of one call to Compile.
type compiler struct {
	defs map[string]*node // root $defs, allocated before they are compiled
}

// Compile parses a schema written in the subset of JSON Schema described in
// the package documentation. It fails, naming the keyword by its JSON
// pointer, if the schema is not valid JSON ([ErrInvalidSchema]), uses a
// keyword or $ref this package does not implement ([ErrUnsupported]), gives
// a keyword a malformed value ([ErrInvalidSchema]) or refers to a missing
// definition ([ErrInvalidSchema]).
func Compile(schema []byte) (*Schema, error) {
	v, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: %w: %v", ErrInvalidSchema, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("#", "a schema must be an object, got %s", typeOf(v))
	}
	c := &compiler{defs: map[string]*node{}}
	if d, ok := obj["$defs"]; ok {
		defs, ok := d.(map[string]any)
		if !ok {
			return nil, invalidf("#/$defs", "must be an object, got %s", typeOf(d))
		}
		for name := range defs {
			c.defs[name] = &node{}
		}
		for _, name := range sortedKeys(defs) {
			if err := c.compileInto(c.defs[name], "#/$defs/"+name, defs[name], false); err != nil {
				return nil, err
			}
		}
	}
	root := &node{}
	if err := c.compileInto(root, "#", obj, true); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

func invalidf(ptr, format string, args ...any) error {
	return fmt.Errorf("jsonschema: %s: %w: %s", ptr, ErrInvalidSchema, fmt.Sprintf(format, args...))
}

func (c *compiler) compile(ptr string, v any) (*node, error) {
	n := &node{}
	return n, c.compileInto(n, ptr, v, false)
}

// compileInto fills n from the schema object v found at JSON pointer ptr.
func (c *compiler) compileInto(n *node, ptr string, v any, isRoot bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return invalidf(ptr, "a schema must be an object, got %s", typeOf(v))
	}
	n.minItems, n.minProps, n.minLength = -1, -1, -1
	for _, k := range sortedKeys(obj) {
		val, at := obj[k], ptr+"/"+k
		var err error
		switch k {
		case "$schema", "$id", "title", "description":
			if _, ok := val.(string); !ok {
				err = invalidf(at, "must be a string, got %s", typeOf(val))
			}
		case "$defs":
			if !isRoot {
				err = fmt.Errorf("jsonschema: %s: %w: $defs below the root", at, ErrUnsupported)
			} // the root's were compiled by Compile
		case "$ref":
			err = c.ref(n, at, val)
		case "type":
			err = n.setTypes(at, val)
		case "const":
			n.hasConst, n.constant = true, val
		case "enum":
			list, ok := val.([]any)
			if !ok {
				return invalidf(at, "must be an array, got %s", typeOf(val))
			}
			n.hasEnum, n.enum = true, list
		case "required":
			n.required, err = stringList(at, val)
		case "properties":
			err = c.properties(n, at, val)
		case "additionalProperties":
			if b, ok := val.(bool); ok {
				n.noExtra = !b
			} else {
				n.extra, err = c.compile(at, val)
			}
		case "items":
			n.items, err = c.compile(at, val)
		case "minItems":
			n.minItems, err = count(at, val)
		case "minProperties":
			n.minProps, err = count(at, val)
		case "minLength":
			n.minLength, err = count(at, val)
		case "uniqueItems":
			b, ok := val.(bool)
			if !ok {
				return invalidf(at, "must be a boolean, got %s", typeOf(val))
			}
			n.unique = b
		case "pattern":
			s, ok := val.(string)
			if !ok {
				return invalidf(at, "must be a string, got %s", typeOf(val))
			}
			if n.pattern, err = regexp.Compile(s); err != nil {
				err = invalidf(at, "%v", err)
			}
		case "minimum":
			n.minimum, err = newBound(at, val)
		case "maximum":
			n.maximum, err = newBound(at, val)
		case "exclusiveMaximum":
			n.exclMax, err = newBound(at, val)
		default:
			err = fmt.Errorf("jsonschema: %s: %w keyword %q", ptr, ErrUnsupported, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) ref(n *node, at string, val any) error {
	s, ok := val.(string)
	if !ok {
		return invalidf(at, "must be a string, got %s", typeOf(val))
	}
	name, found := strings.CutPrefix(s, "#/$defs/")
	if !found || name == "" || strings.ContainsAny(name, "/~%") {
		return fmt.Errorf("jsonschema: %s: %w $ref %q (only #/$defs/<name>)", at, ErrUnsupported, s)
	}
	if n.ref = c.defs[name]; n.ref == nil {
		return invalidf(at, "no definition %q in the root $defs", name)
	}
	return nil
}

func (n *node) setTypes(at string, val any) error {
	list, isList := val.([]any)
	if !isList {
		list = []any{val}
	} else if len(list) == 0 {
		return invalidf(at, "empty list of types")
	}
	for _, t := range list {
		s, _ := t.(string)
		if !slices.Contains(typeNames, s) {
			return invalidf(at, "unknown type %v", t)
		}
		n.types = append(n.types, s)
	}
	return nil
}

func (c *compiler) properties(n *node, at string, val any) error {
	obj, ok := val.(map[string]any)
	if !ok {
		return invalidf(at, "must be an object, got %s", typeOf(val))
	}
	n.props = make(map[string]*node, len(obj))
	for _, k := range sortedKeys(obj) {
		p, err := c.compile(at+"/"+k, obj[k])
		if err != nil {
			return err
		}
		n.props[k] = p
	}
	return nil
}

func stringList(at string, val any) ([]string, error) {
	list, ok := val.([]any)
	if !ok {
		return nil, invalidf(at, "must be an array, got %s", typeOf(val))
	}
	out := make([]string, len(list))
	for i, x := range list {
		if out[i], ok = x.(string); !ok {
			return nil, invalidf(at, "item %d is %s, want string", i, typeOf(x))
		}
	}
	return out, nil
}

func count(at string, val any) (int, error) {
	b, err := newBound(at, val)
	if err != nil {
		return 0, err
	}
	r := b.r
	if !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > math.MaxInt32 {
		return 0, invalidf(at, "must be a non-negative integer, got %s", val)
	}
	return int(r.Num().Int64()), nil
}

func newBound(at string, val any) (*bound, error) {
	n, ok := val.(json.Number)
	if !ok {
		return nil, invalidf(at, "must be a number, got %s", typeOf(val))
	}
	r := rat(n)
	if r == nil {
		return nil, invalidf(at, "number %s out of range", n)
	}
	return &bound{r: r, text: n}, nil
}

// decode parses exactly one JSON value, keeping numbers as json.Number.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// rat converts a number exactly; nil when big.Rat refuses it (an exponent
// beyond its range).
func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// typeOf names the JSON type of a decoded value, "integer" for numbers with
// no fractional part.
func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if r := rat(x); r != nil && r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// equal is JSON equality: numbers by value, arrays item by item, objects
// member by member regardless of order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ry := rat(x), rat(y)
		if rx == nil || ry == nil {
			return x == y
		}
		return rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equal)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	default: // nil, bool, string
		return a == b
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
