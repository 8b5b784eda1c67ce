package retrykit

import (
	"embed"
	"io/fs"
)

//go:embed testdata/vectors
var vectorFiles embed.FS

// Vectors is the conformance suite shipped with this version of retrykit:
// the files of testdata/vectors (KIND.json vector files, their JSON Schema,
// README and generator), at the root of the file system. Load it with
// [github.com/retrykit/retrykit/conformance.Load].
//
// Vectors is read-only and safe for concurrent use.
var Vectors fs.FS = mustSub(vectorFiles, "testdata/vectors")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		// fs.Sub fails only for an invalid path, and dir is a constant.
		return f
	}
	return sub
}
