package verify_test

import (
	"strings"
	"testing"
)

// debianSystems are the verified systems Debian packages, with the profile
// each one's checks run against.
var debianSystems = []struct{ pkg, profile string }{
	{"python3-celery", "celery"}, {"python3-botocore", "aws"},
	{"ruby-sidekiq", "sidekiq6"}, {"ruby-activejob", "activejob"},
	{"python3-tenacity", "tenacity"}, {"python3-backoff", "backoff"}, {"python3-rq", "rq"},
	{"ruby-delayed-job", "delayed_job"},
}

// TestDebianDrift is the drift watch for Debian's packages: the version the
// Python and Ruby checks ran against (installed by verify/install.sh) must
// be Debian's candidate, the newest release the archive publishes; when
// the archive moves on, the run fails naming both versions so that
// install.sh picks the new one up and the same checks run against it.
func TestDebianDrift(t *testing.T) {
	for _, s := range debianSystems {
		ok, installed := probe("dpkg-query", "-W", "-f=${Version}", s.pkg)
		if !ok || installed == "" {
			missing(t, s.pkg, "not installed")
			continue
		}
		ok, policy := probe("apt-cache", "policy", s.pkg)
		if !ok {
			unreachable(t, "apt-cache", nil)
		}
		candidate := ""
		for _, line := range strings.Split(policy, "\n") {
			if v, found := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); found {
				candidate = strings.TrimSpace(v)
			}
		}
		if candidate == "" || candidate == "(none)" {
			unreachable(t, s.pkg+"'s Debian candidate", nil)
		}
		if candidate != installed {
			t.Errorf("%s (profile %s): checked against Debian %s, but the archive's candidate is %s: run verify/install.sh", s.pkg, s.profile, installed, candidate)
			continue
		}
		t.Logf("%s (profile %s): checked %s, Debian's candidate", s.pkg, s.profile, installed)
	}
}
