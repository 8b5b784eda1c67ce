package ojshttp

import (
	"net/http"
	"strconv"
	"strings"
)

// Request OJS-Version (RK-175). The official SDKs send the version of the
// spec documents they were written against: the Go SDK "1.0.0-rc.1", the
// JS SDK "1.0". Every 1.x version is the same major, whose documents this
// server implements, so any of them is processed as 1.0 and the answer's
// OJS-Version header says so. Only another major is refused.

// maxVersionLen bounds the OJS-Version header a request may carry.
const maxVersionLen = 64

// acceptVersion reports whether the OJS-Version request header v names
// major version 1: "1", "1.MINOR" or "1.MINOR.PATCH", each number plain
// decimal digits, optionally followed by a SemVer pre-release ("-rc.1")
// and build ("+build.5") of letters, digits, '-' and '.'. An empty v (no
// header) is accepted. It runs in time linear in len(v).
func acceptVersion(v string) bool {
	if v == "" {
		return true
	}
	if len(v) > maxVersionLen {
		return false
	}
	core, rest := v, ""
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		core, rest = v[:i], v[i:]
	}
	parts := strings.Split(core, ".")
	if len(parts) > 3 || parts[0] != "1" {
		return false
	}
	for _, p := range parts[1:] {
		if !digits(p) {
			return false
		}
	}
	if rest == "" {
		return true
	}
	pre, build := rest, ""
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		pre, build = rest[:i], rest[i:]
	}
	if pre != "" && !idents(pre[1:]) { // pre starts with '-'
		return false
	}
	return build == "" || idents(build[1:])
}

// digits reports whether s is a non-empty run of ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// idents reports whether s is dot-separated non-empty SemVer identifiers
// (letters, digits and '-').
func idents(s string) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// versionError is the answer to a request whose OJS-Version header names
// a version this server cannot process.
func versionError(v string) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, code: CodeUnsupported,
		message: "OJS-Version: " + strconv.Quote(clip(v)) + " is not supported; this server processes every 1.x version (as " + ojsVersion + ")",
		details: map[string]any{"header": "OJS-Version", "supported": "1.x"}}
}
