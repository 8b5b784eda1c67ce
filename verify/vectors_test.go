package verify_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/verify"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("other", `{"profile": "another", "vectors": []}`)
	write("extra", `{"profile": "extra", "surprise": 1}`)
	write("trailing", `{"profile": "trailing"} {}`)
	write("ok", `{"profile": "ok", "vectors": [{"id": "prof-ok-0001", "kind": "delay", "attempt": 1, "rand": 0.5, "delay_ns": 7}]}`)
	for _, tc := range []struct{ name, want string }{
		{"../escape", "profile name"},
		{"absent", "no such file"},
		{"other", `profile is "another", want "other"`},
		{"extra", `unknown field "surprise"`},
		{"trailing", "data after the JSON object"},
	} {
		_, err := verify.Load(dir, tc.name)
		if !errors.Is(err, verify.ErrVectors) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v, want ErrVectors mentioning %q", tc.name, err, tc.want)
		}
	}
	// The cause is kept, not flattened into the message.
	if _, err := verify.Load(dir, "absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(absent) = %v, want an error matching fs.ErrNotExist", err)
	}
	write("broken", `{"profile": `)
	var syn *json.SyntaxError
	if _, err := verify.Load(dir, "broken"); !errors.As(err, &syn) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Load(broken) = %v, want the decoder's error kept", err)
	}
	if _, err := verify.Load(dir, "extra"); err == nil || !strings.HasPrefix(err.Error(), "verify: ") {
		t.Errorf("Load(extra) = %v, want a message starting with \"verify: \"", err)
	}
	f, err := verify.Load(dir, "ok")
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Of("delay"); len(d) != 1 || d[0].DelayNS != 7 || *d[0].Rand != 0.5 || len(f.Of("bounds")) != 0 {
		t.Errorf("Load(ok) = %+v", f)
	}
}

// Every vector file in testdata/profiles parses.
func TestLoadAll(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range names {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if name == "profile.schema" {
			continue
		}
		f, err := verify.Load(vectorsDir, name)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(f.Vectors) < 5 {
			t.Errorf("%s: %d vectors, want at least 5", name, len(f.Vectors))
		}
		n++
	}
	if n == 0 {
		t.Fatal("no vector files found")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"sidekiq6", "celery", "bullmq", "activejob"} {
		data, err := os.ReadFile(filepath.Join(vectorsDir, name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, name)
	}
	f.Add([]byte(`{"profile":"x"}`), "x")
	f.Add([]byte(`[]`), "x")
	f.Fuzz(func(t *testing.T, data []byte, profile string) {
		file, err := verify.Parse(data, profile)
		if err != nil {
			if !errors.Is(err, verify.ErrVectors) {
				t.Fatalf("error %v does not wrap ErrVectors", err)
			}
			return
		}
		if file.Profile != profile {
			t.Fatalf("parsed profile %q, asked for %q", file.Profile, profile)
		}
	})
}
