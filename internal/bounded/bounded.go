// Package bounded reads suite files (vectors, scenarios, profiles) and
// policy files with a size limit, so that a hostile or mistaken file — a symlink to /dev/zero,
// a multi-gigabyte log named *.json — is refused after limit+1 bytes
// instead of being read until memory runs out. fs.ReadFile has no limit.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// MaxSuiteFile is the size limit of one suite file: far above the largest
// file retrykit ships (about 100 KiB), far below what hurts.
const MaxSuiteFile = 16 << 20

// ErrTooLarge is wrapped by the error ReadFile returns for a file over its
// limit.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads name from fsys like fs.ReadFile, but reads at most
// limit+1 bytes and returns an error wrapping ErrTooLarge (naming the
// limit, not the file: callers prefix the name) for a larger file.
func ReadFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, limit)
}

// Read reads r to its end like io.ReadAll, but reads at most limit+1
// bytes and returns an error wrapping ErrTooLarge for a longer stream.
func Read(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than the limit of %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}
