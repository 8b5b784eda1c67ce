package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
)

// firstID is the number of the first vector id WriteVector assigns in a
// file, far from the shipped suite's ids.
const firstID = 9001

// The vector kinds (testdata/vectors/README.md) and their id prefixes.
var idPrefix = map[string]string{"duration": "dur", "validate": "val", "delay": "delay", "match": "match", "decide": "decide"}

// vectorFile and vector are the vector file format (vector.schema.json).
type vectorFile struct {
	SchemaVersion int               `json:"schema_version"`
	SuiteVersion  string            `json:"suite_version"`
	SpecVersion   string            `json:"spec_version"`
	Kind          string            `json:"kind"`
	Notes         map[string]string `json:"notes"`
	Vectors       []vector          `json:"vectors"`
}

type vector struct {
	ID          string          `json:"id"`
	Requirement string          `json:"requirement"`
	Section     string          `json:"section"`
	Description string          `json:"description"`
	Flags       []string        `json:"flags"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
}

// sections of the requirements WriteVector assigns (testdata/vectors/README.md).
var sections = map[string]string{
	"RET-02": "4.2", "RET-04": "3.5", "RET-05": "5.1", "RET-06": "5.3", "RET-08": "7.2", "RET-10": "8.1",
	"RET-16": "11.1", "RET-18": "6.2", "RET-19": "4.2", "RK-07": "4.2", "RK-11": "4.2", "RK-12": "11.1",
	"RK-13": "7.2", "RK-15": "6.2", "RK-16": "3", "RK-17": "3.5",
}

// WriteVector writes d as a conformance vector to dir/fuzz-KIND.json, in
// the format of testdata/vectors (vector.schema.json): the input is d's
// request (a policy with duplicate keys, or one that is not a single JSON
// value, as policy_raw text), the expected outcome the reference's answer
// (inclusive jitter bounds when opaque is true and the policy has jitter,
// since no rand was sent), and the requirement, section and flags those of
// the rule actually broken (see [Explain]): so the vector counts at the level
// (MUST, SHOULD, RK) the shipped suite gives that rule. An existing file of that name gets the vector appended with the
// next id (from dur-9001, val-9001, ...). It returns the file path and the
// vector id. dir is checked by loading it with [conformance.Load]; when it
// does not load (for example, it already holds another file of the kind),
// nothing is written and the error says why.
func WriteVector(dir string, d *policytest.Disagreement, c Cause, seed uint64, opaque bool) (path, id string, err error) {
	kind := "duration"
	if d.Request.Op != protocol.OpParseDuration {
		kind = d.Request.Op
	}
	prefix, ok := idPrefix[kind]
	if !ok {
		return "", "", fmt.Errorf("fuzz: no vector kind for op %q", d.Request.Op)
	}
	// The versions, the kind's note and the flags' notes come from the
	// shipped files.
	notes := map[string]string{}
	var file vectorFile
	for k := range idPrefix {
		data, err := fs.ReadFile(retrykit.Vectors, k+".json")
		if err != nil {
			return "", "", fmt.Errorf("fuzz: embedded vectors: %w", err)
		}
		var f vectorFile
		if err := json.Unmarshal(data, &f); err != nil {
			return "", "", fmt.Errorf("fuzz: embedded vectors: %s: %w", k, err)
		}
		for n, v := range f.Notes {
			if n != "kind" {
				notes[n] = v
			}
		}
		if k == kind {
			file = vectorFile{SchemaVersion: f.SchemaVersion, SuiteVersion: f.SuiteVersion, SpecVersion: f.SpecVersion,
				Kind: kind, Notes: map[string]string{"kind": f.Notes["kind"]}}
		}
	}
	path = filepath.Join(dir, "fuzz-"+kind+".json")
	old, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(old, &file); err != nil {
			return "", "", fmt.Errorf("fuzz: %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	} else {
		old = nil
	}
	n := firstID
	for _, v := range file.Vectors {
		if num, err := strconv.Atoi(strings.TrimPrefix(v.ID, prefix+"-")); err == nil && num >= n {
			n = num + 1
		}
	}
	if n > 9999 {
		return "", "", fmt.Errorf("fuzz: %s holds the largest id already", path)
	}
	id = fmt.Sprintf("%s-%04d", prefix, n)

	input, expected, err := vectorData(d, opaque)
	if err != nil {
		return "", "", err
	}
	req, section, flags := c.Requirement, c.Section, c.Flags
	for _, f := range flags {
		file.Notes[f] = notes[f]
	}
	if flags == nil {
		flags = []string{}
	}
	desc := fmt.Sprintf("found by retrykit fuzz (seed %d) against %s: %s; expected answer from the retrykit reference",
		seed, "an implementation", oneLine(d.Reason))
	file.Vectors = append(file.Vectors, vector{ID: id, Requirement: req, Section: section,
		Description: desc, Flags: flags, Input: input, Expected: expected})

	if err := writeChecked(dir, path, old, &file, "vector", func(fsys fs.FS) error {
		_, err := conformance.Load(fsys, nil)
		return err
	}); err != nil {
		return "", "", err
	}
	return path, id, nil
}

// writeChecked writes file as indented JSON to path in dir and loads dir
// back with load. When it does not load, dir is left as it was (old, the
// file's previous content, is put back, or the new file removed): a
// directory that no longer loads (another file of the same kind, say)
// helps nobody. what names the entry in the error ("vector").
func writeChecked(dir, path string, old []byte, file any, what string, load func(fs.FS) error) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(file); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := load(os.DirFS(dir)); err != nil {
		if old != nil {
			_ = os.WriteFile(path, old, 0o644)
		} else {
			_ = os.Remove(path)
		}
		return fmt.Errorf("fuzz: %s would not load with the %s (it was not written): %w", dir, what, err)
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// vectorData returns the input and expected objects of the vector for d.
func vectorData(d *policytest.Disagreement, opaque bool) (json.RawMessage, json.RawMessage, error) {
	r := d.Request
	in := map[string]any{}
	switch r.Op {
	case protocol.OpParseDuration:
		in["value"] = r.Value
	case protocol.OpMatch:
		in["patterns"] = append([]string{}, r.Patterns...)
		in["error_type"] = r.ErrorType
	case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
		switch {
		case r.Policy == nil:
		case rawPolicy(r.Policy):
			// Duplicate keys or text that is not one JSON value: a vector
			// file keeps it verbatim as a string (README: policy_raw).
			in["policy_raw"] = string(r.Policy)
		default:
			in["policy"] = json.RawMessage(r.Policy)
		}
		if r.Op == protocol.OpValidate {
			break
		}
		in["attempt"] = r.Attempt
		if r.Rand != nil {
			in["rand"] = *r.Rand
		}
		if r.Op == protocol.OpDecide {
			e := map[string]string{"type": "", "code": ""}
			if r.Error != nil {
				e["type"], e["code"] = r.Error.Type, r.Error.Code
			}
			in["error"] = e
		}
	}
	w := d.Want
	exp := map[string]any{}
	switch {
	case w.Error != nil:
		exp["error"] = w.Error.Type
	case w.NS != nil:
		exp["ns"] = *w.NS
	case w.Effective != nil:
		exp["effective"] = w.Effective
	case w.Match != nil:
		exp["match"] = *w.Match
	default:
		if w.Action != "" {
			exp["action"] = w.Action
		}
		if w.DelayNS != nil {
			exp["delay_ns"] = *w.DelayNS
			if opaque && r.Rand == nil {
				if p, err := policy.Parse(r.Policy); err == nil && p.Spec().Jitter {
					lo, hi := p.Backoff().Bounds(int(min(r.Attempt, int64(^uint(0)>>1))))
					delete(exp, "delay_ns")
					exp["min_ns"], exp["max_ns"] = int64(lo), int64(hi)
				}
			}
		}
	}
	inRaw, err := marshalSorted(in)
	if err != nil {
		return nil, nil, err
	}
	expRaw, err := marshalSorted(exp)
	return inRaw, expRaw, err
}

func marshalSorted(m map[string]any) (json.RawMessage, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m[k]); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// requirement picks the requirement a disagreement tests, from the request
// and the reference's answer.
func requirement(d *policytest.Disagreement) string {
	r, w := d.Request, d.Want
	switch r.Op {
	case protocol.OpParseDuration:
		_, frac, _ := strings.Cut(r.Value, ".")
		switch {
		case w.Error == nil && hasFlag(d.Flags, "should:date-components"):
			return "RK-07"
		case len(strings.TrimRight(frac, "S")) > 9 || strings.Count(r.Value, "9") > 10 || strings.Contains(r.Value, "2562047H"):
			return "RK-11"
		case r.Value == "P" || r.Value == "PT" || strings.HasSuffix(r.Value, "T"):
			return "RK-12"
		case w.Error == nil:
			return "RET-02"
		}
		return "RET-19"
	case protocol.OpValidate:
		if w.Error != nil {
			return "RET-16"
		}
		return "RET-10"
	case protocol.OpMatch:
		if w.Error != nil {
			return "RK-15"
		}
		return "RET-18"
	case protocol.OpDelay, protocol.OpDecide:
		switch {
		case w.Error != nil && w.Error.Type == protocol.ErrorPolicyInvalid:
			return "RET-16"
		case w.Error != nil && r.Attempt < 1:
			return "RK-16"
		case w.Error != nil:
			return "RK-13"
		case r.Op == protocol.OpDecide && w.Action != "retry":
			if r.Error != nil && r.Error.Code != "" && r.Error.Code != "RETRY" {
				return "RK-13"
			}
			return "RET-08"
		case r.Attempt > 64:
			return "RK-17"
		}
		if p, err := policy.Parse(r.Policy); err == nil && p.Spec().Jitter {
			if w.DelayNS != nil && *w.DelayNS == int64(p.Spec().MaxInterval) {
				return "RET-06"
			}
			return "RET-05"
		}
		return "RET-04"
	}
	return "RET-04"
}

func hasFlag(flags []string, f string) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}

// rawPolicy reports whether a policy must be written as policy_raw: it is
// not one valid JSON value, or an object in it repeats a key (a vector file
// with duplicate keys inside "policy" reads differently in every parser).
func rawPolicy(p json.RawMessage) bool {
	if !json.Valid(p) {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	return dupKeys(dec) != nil
}

// errDup reports a repeated key.
var errDup = errors.New("duplicate key")

// dupKeys reads one JSON value from dec and returns errDup if an object in
// it repeats a key.
func dupKeys(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				return errDup
			}
			seen[key] = true
			if err := dupKeys(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for dec.More() {
			if err := dupKeys(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// requestOf decodes the request a vector sends from its input.
func requestOf(v *conformance.Vector) (protocol.Request, bool) {
	var in struct {
		Value     string          `json:"value"`
		Policy    json.RawMessage `json:"policy"`
		PolicyRaw *string         `json:"policy_raw"`
		Attempt   int64           `json:"attempt"`
		Rand      *float64        `json:"rand"`
		Patterns  []string        `json:"patterns"`
		ErrorType string          `json:"error_type"`
		Error     *struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(v.Input, &in) != nil {
		return protocol.Request{}, false
	}
	r := protocol.Request{Op: v.Kind, Value: in.Value, Policy: in.Policy, Attempt: in.Attempt, Rand: in.Rand,
		Patterns: in.Patterns, ErrorType: in.ErrorType}
	if v.Kind == "duration" {
		r.Op = protocol.OpParseDuration
	}
	if in.PolicyRaw != nil {
		r.Policy = json.RawMessage(*in.PolicyRaw)
	}
	if in.Error != nil {
		r.Error = &protocol.FailureInput{Type: in.Error.Type, Code: in.Error.Code}
	}
	return r, true
}

// closeness scores how alike two requests are: equal values, policy
// fields, attempts, draws and patterns each add.
func closeness(a, b protocol.Request) int {
	n := 0
	if a.Value == b.Value && a.Value != "" {
		n += 10
	}
	if bytes.Equal(a.Policy, b.Policy) {
		n += 5
	}
	var pa, pb map[string]json.RawMessage
	if json.Unmarshal(a.Policy, &pa) == nil && json.Unmarshal(b.Policy, &pb) == nil {
		for k, v := range pa {
			if w, ok := pb[k]; ok {
				n++
				if bytes.Equal(v, w) {
					n++
				}
			}
		}
	}
	if a.Attempt == b.Attempt {
		n++
	}
	if (a.Rand == nil) == (b.Rand == nil) {
		n++
	}
	if a.ErrorType == b.ErrorType && a.ErrorType != "" {
		n += 3
	}
	if strings.Join(a.Patterns, "\x00") == strings.Join(b.Patterns, "\x00") && a.Patterns != nil {
		n += 3
	}
	return n
}

// sameResponse reports whether two answers agree: both rejections, or the
// same result (an effective policy compared as JSON values).
func sameResponse(a, b protocol.Response) bool {
	if (a.Error != nil) != (b.Error != nil) {
		return false
	}
	if a.Error != nil {
		return true
	}
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if !eq(a.NS, b.NS) || !eq(a.DelayNS, b.DelayNS) || a.Action != b.Action || (a.Match == nil) != (b.Match == nil) ||
		a.Match != nil && *a.Match != *b.Match {
		return false
	}
	if a.Effective == nil || b.Effective == nil {
		return a.Effective == nil && b.Effective == nil
	}
	var x, y map[string]any
	if json.Unmarshal(a.Effective, &x) != nil || json.Unmarshal(b.Effective, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
