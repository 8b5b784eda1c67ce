package retrykit

import (
	"embed"
	"io/fs"
)

//go:embed testdata/scenarios
var scenarioFiles embed.FS

// Scenarios is the executor scenario suite shipped with this version of
// retrykit: the files of testdata/scenarios (scenario vector files, their
// JSON Schema, README and generator), at the root of the file system. Load
// it with [github.com/retrykit/retrykit/conformance/scenario.Load] and play it
// with [github.com/retrykit/retrykit/conformance/scenario.Play].
//
// Scenarios is read-only and safe for concurrent use.
var Scenarios fs.FS = mustSub(scenarioFiles, "testdata/scenarios")
