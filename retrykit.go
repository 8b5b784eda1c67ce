// Package retrykit is the root of retrykit, an exact implementation of the
// OJS (Open Job Spec) retry policy and a language-agnostic conformance suite
// for it.
//
// The library lives in sub-packages:
//
//   - [github.com/retrykit/retrykit/policy]: the RetryPolicy data model —
//     strict parsing, merge with defaults, validation, durations, decisions;
//   - [github.com/retrykit/retrykit/backoff]: pure delay math (strategies,
//     cap, jitter) with injectable randomness;
//   - [github.com/retrykit/retrykit/errmatch]: non-retryable error matching
//     and classification of Go errors;
//   - [github.com/retrykit/retrykit/conformance]: the runner that checks any
//     implementation, in any language, against the conformance vectors.
//
// This package itself only carries the conformance vectors, embedded in the
// module so that Go users need nothing else on disk. The command
// "retrykit conformance export DIR" writes them out for runners in other
// languages.
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
