package retrykit

import (
	"embed"
	"io/fs"
)

//go:embed testdata/profiles
var profileFiles embed.FS

// Profiles is the profile vector suite shipped with this version of
// retrykit: the files of testdata/profiles (one <profile>.json per profile
// of another system, their JSON Schema and README), at the root of the file
// system. "retrykit conformance --profiles" sends them to an adapter that
// lists profiles in its hello (conformance/PROTOCOL.md section 3.4.1).
//
// Profiles is read-only and safe for concurrent use.
var Profiles fs.FS = mustSub(profileFiles, "testdata/profiles")
