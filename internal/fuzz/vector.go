package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// request, the expected outcome the reference's answer (inclusive jitter
// bounds when opaque is true and the policy has jitter, since no rand was
// sent), and the requirement, section and flags are derived from the
// request. An existing file of that name gets the vector appended with the
// next id (from dur-9001, val-9001, ...). It returns the file path and the
// vector id. dir is checked by loading it with [conformance.Load]; when it
// does not load (for example, it already holds another file of the kind),
// nothing is written and the error says why.
func WriteVector(dir string, d *policytest.Disagreement, seed uint64, opaque bool) (path, id string, err error) {
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
	req := requirement(d)
	flags := append([]string(nil), d.Flags...)
	if strings.HasPrefix(req, "RK-") {
		flags = append(flags, "retrykit:decision")
	}
	if opaque {
		flags = withoutFlag(flags, "float-tolerance")
	}
	for _, f := range flags {
		file.Notes[f] = notes[f]
	}
	if flags == nil {
		flags = []string{}
	}
	desc := fmt.Sprintf("found by retrykit fuzz (seed %d) against %s: %s; expected answer from the retrykit reference",
		seed, "an implementation", oneLine(d.Reason))
	file.Vectors = append(file.Vectors, vector{ID: id, Requirement: req, Section: sections[req],
		Description: desc, Flags: flags, Input: input, Expected: expected})

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&file); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	if _, err := conformance.Load(os.DirFS(dir), nil); err != nil {
		// Leave DIR as it was: a directory that no longer loads (another
		// file of the same kind, say) helps nobody.
		if old != nil {
			_ = os.WriteFile(path, old, 0o644)
		} else {
			_ = os.Remove(path)
		}
		return "", "", fmt.Errorf("fuzz: %s would not load with the vector (it was not written): %w", dir, err)
	}
	return path, id, nil
}

func withoutFlag(flags []string, f string) []string {
	out := flags[:0]
	for _, g := range flags {
		if g != f {
			out = append(out, g)
		}
	}
	return out
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
		if r.Policy != nil {
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
