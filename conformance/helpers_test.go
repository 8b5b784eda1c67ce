package conformance_test

import (
	"errors"
	"io/fs"
	"testing/fstest"

	"github.com/retrykit/retrykit/conformance"
)

// mapFS builds an in-memory vector directory.
type mapFS map[string][]byte

func (m mapFS) Open(name string) (fs.File, error) {
	f := fstest.MapFS{}
	for k, v := range m {
		f[k] = &fstest.MapFile{Data: v}
	}
	return f.Open(name)
}

func isInvalidVector(err error) bool { return errors.Is(err, conformance.ErrInvalidVector) }
