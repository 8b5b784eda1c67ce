package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// File is one profile vector file, testdata/profiles/<profile>.json, as
// described by testdata/profiles/profile.schema.json. The zero File has no
// vectors.
type File struct {
	Profile     string   `json:"profile"`
	System      string   `json:"system"`
	Version     string   `json:"version"`
	Source      string   `json:"source"`
	Docs        string   `json:"docs"`
	Formula     string   `json:"formula"`
	Draw        string   `json:"draw"`
	Defaults    string   `json:"defaults"`
	Settings    string   `json:"settings"`
	Exhaustion  string   `json:"exhaustion"`
	Terminal    string   `json:"terminal"`
	MaxAttempts *int     `json:"max_attempts"`
	Comment     string   `json:"comment"`
	Vectors     []Vector `json:"vectors"`
}

// Vector is one vector of a [File]. Which fields are set depends on Kind:
// "delay" (Attempt, Rand or Rands, DelayNS), "bounds" (Attempt, MinNS, MaxNS),
// "schedule" (Rands, DelaysNS) or "decision" (Attempt, Retry). Rand is nil
// when the vector gives no draw.
type Vector struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Attempt  int       `json:"attempt"`
	Rand     *float64  `json:"rand"`
	Rands    []float64 `json:"rands"`
	DelayNS  int64     `json:"delay_ns"`
	MinNS    int64     `json:"min_ns"`
	MaxNS    int64     `json:"max_ns"`
	DelaysNS []int64   `json:"delays_ns"`
	Retry    bool      `json:"retry"`
	Note     string    `json:"note"`
}

// ErrVectors reports a vector file that cannot be used: unreadable, not the
// expected JSON, or naming another profile.
var ErrVectors = errors.New("verify: bad vector file")

var profileName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Load reads the vector file of the named profile from dir (normally
// "../testdata/profiles" from this module) and parses it with [Parse].
// Errors wrap [ErrVectors] and keep their cause: a missing file also
// matches [io/fs.ErrNotExist], bad JSON is a *json.SyntaxError (errors.As).
func Load(dir, profile string) (*File, error) {
	if !profileName.MatchString(profile) {
		return nil, fmt.Errorf("%w: profile name %q: must match %s", ErrVectors, profile, profileName)
	}
	path := filepath.Join(dir, profile+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVectors, err)
	}
	f, err := Parse(data, profile)
	if err != nil {
		return nil, fmt.Errorf("verify: %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes one vector file whose profile must be the given name.
// Unknown fields and trailing data are rejected, so a file that drifts from
// the schema fails loudly rather than losing vectors; the schema itself is
// enforced by the main module's tests. Errors wrap [ErrVectors] and the
// decoder's error (a *json.SyntaxError or *json.UnmarshalTypeError, for
// errors.As).
func Parse(data []byte, profile string) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVectors, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrVectors)
	}
	if f.Profile != profile {
		return nil, fmt.Errorf("%w: profile is %q, want %q", ErrVectors, f.Profile, profile)
	}
	return &f, nil
}

// Spec is the profile text the file's vectors are for: its settings
// (NAME:key=value,...) when given, else the bare profile name.
func (f *File) Spec() string {
	if f.Settings != "" {
		return f.Settings
	}
	return f.Profile
}

// Of returns the vectors of the given kind, in file order.
func (f *File) Of(kind string) []Vector {
	var out []Vector
	for _, v := range f.Vectors {
		if v.Kind == kind {
			out = append(out, v)
		}
	}
	return out
}
