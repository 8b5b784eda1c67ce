package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dryRun runs ojs-servers.sh with --dry-run and the given arguments and
// environment, and returns its settings as a map.
func dryRun(t *testing.T, env []string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"ojs-servers.sh", "--dry-run"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ojs-servers.sh --dry-run %v: %v\n%s", args, err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("unexpected line %q in\n%s", line, out)
		}
		got[k] = v
	}
	return got
}

// TestServerScriptSourceFromArgumentOrEnvironment pins where the server
// benchmark finds ojs-backend-redis: --src first, then $OJS_REDIS_GIT,
// then a cache under the user's home; never a path of one machine.
func TestServerScriptSourceFromArgumentOrEnvironment(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	home := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"default", []string{"HOME=" + home, "XDG_CACHE_HOME=", "OJS_REDIS_GIT="}, nil, filepath.Join(home, ".cache/retrykit/ojs-backend-redis.git")},
		{"cache dir", []string{"XDG_CACHE_HOME=/c", "OJS_REDIS_GIT="}, nil, "/c/retrykit/ojs-backend-redis.git"},
		{"environment", []string{"OJS_REDIS_GIT=/from/env"}, nil, "/from/env"},
		{"argument wins", []string{"OJS_REDIS_GIT=/from/env"}, []string{"--src", "/from/arg"}, "/from/arg"},
		{"argument with =", nil, []string{"--src=/a b"}, "/a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dryRun(t, tc.env, tc.args...)
			if got["source"] != tc.want {
				t.Errorf("source %q, want %q", got["source"], tc.want)
			}
			if got["rounds"] != "3" {
				t.Errorf("rounds %q, want the default 3", got["rounds"])
			}
		})
	}
	if got := dryRun(t, nil, "7"); got["rounds"] != "7" {
		t.Errorf("ROUNDS 7 read as %q", got["rounds"])
	}
	for _, args := range [][]string{{"--src"}, {"--src="}, {"0"}, {"x"}, {"--bogus"}} {
		cmd := exec.Command("bash", append([]string{"ojs-servers.sh", "--dry-run"}, args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage:") {
			t.Errorf("%v: want exit 2 with the usage, got %v\n%s", args, err, out)
		}
	}
	// No absolute path of a particular machine in the script: every path
	// is relative, under $TMPDIR or /tmp, or from the environment.
	b, err := os.ReadFile("ojs-servers.sh")
	if err != nil {
		t.Fatal(err)
	}
	abs := regexp.MustCompile(`(^|[\s=:"'(])/(work|home|root|Users|srv|opt|mnt)/`)
	for i, line := range strings.Split(string(b), "\n") {
		if abs.MatchString(line) {
			t.Errorf("ojs-servers.sh:%d: a machine's absolute path: %s", i+1, line)
		}
	}
}
