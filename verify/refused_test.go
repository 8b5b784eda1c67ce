package verify_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRefusedReleasesAreToldFromUnreachableOnes: the module proxy's and
// npm's definite refusal of a listed release (403, not available) is told
// apart from a registry that cannot be reached, which still fails CI.
func TestRefusedReleasesAreToldFromUnreachableOnes(t *testing.T) {
	refused := errors.New("go mod tidy: exit status 1: github.com/aws/smithy-go@v1.28.10: reading https://proxy.golang.org/github.com/aws/smithy-go/@v/v1.28.10.zip: 403 Forbidden\n\tserver response: This module version is not available.")
	if !notServed(refused) {
		t.Errorf("the proxy's 403 'not available' is not read as a refusal")
	}
	for _, err := range []error{nil, errors.New("dial tcp: lookup proxy.golang.org: no such host"), errors.New("go get: 403 Forbidden")} {
		if notServed(err) {
			t.Errorf("%v read as the proxy refusing a version", err)
		}
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refused.tgz" {
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer hs.Close()
	if got := npmRefuses(hs.URL + "/refused.tgz"); got != "403 Forbidden" {
		t.Errorf("a tarball answered 403: %q, want the refusal", got)
	}
	if got := npmRefuses(hs.URL + "/served.tgz"); got != "" {
		t.Errorf("a tarball served: %q, want no refusal", got)
	}
	if got := npmRefuses("not a url"); got != "" {
		t.Errorf("no URL: %q, want no refusal (npm install says what it can)", got)
	}
}
