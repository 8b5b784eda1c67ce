package main

import (
	"os"
	"path/filepath"
	"strings"
)

// self is how the follow-up commands a report prints call this program:
// "retrykit" unless main found otherwise (selfCommand). Tests, which run
// the commands in process, keep "retrykit".
var self = "retrykit"

// selfCommand returns how a user runs this program again, from how it was
// started, so that a command a report prints works as printed:
//
//  1. under `go run` (the executable is in a go-build temporary
//     directory): "go run ./cmd/retrykit" when the working directory is
//     the repository's root, where the README runs it, else "go run
//     github.com/retrykit/retrykit/cmd/retrykit" (a module that requires
//     retrykit);
//  2. else "retrykit": installed (go install), or a build the user named
//     and runs by its own path; reports kept for others (the scoreboard's)
//     show the command's own name.
//
// exe is the executable's path and root whether ./cmd/retrykit/main.go
// exists.
func selfCommand(exe string, root bool) string {
	sep := string(filepath.Separator)
	if strings.Contains(exe, sep+"go-build") && filepath.Base(filepath.Dir(exe)) == "exe" {
		if root {
			return "go run ./cmd/retrykit"
		}
		return "go run github.com/retrykit/retrykit/cmd/retrykit"
	}
	return "retrykit"
}

// initSelf sets self from the running process.
func initSelf() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_, statErr := os.Stat(filepath.Join("cmd", "retrykit", "main.go"))
	self = selfCommand(exe, statErr == nil)
}
