package bounded_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/retrykit/retrykit/internal/bounded"
)

func TestReadFile(t *testing.T) {
	fsys := fstest.MapFS{"a.json": {Data: []byte("12345")}}
	if b, err := bounded.ReadFile(fsys, "a.json", 5); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	_, err := bounded.ReadFile(fsys, "a.json", 4)
	if !errors.Is(err, bounded.ErrTooLarge) || !strings.Contains(err.Error(), "file too large: more than the limit of 4 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := bounded.ReadFile(fsys, "b.json", 4); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// An endless file is refused after limit+1 bytes.
func TestReadFileEndless(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := bounded.ReadFile(os.DirFS("/dev"), "zero", 1<<20); !errors.Is(err, bounded.ErrTooLarge) {
			t.Errorf("/dev/zero: %v", err)
		}
	})
	if allocs > 100 {
		t.Errorf("%v allocations reading 1 MiB of /dev/zero", allocs)
	}
}
