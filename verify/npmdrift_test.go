package verify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The npm side of the drift watch (TestDrift is the Go side): each npm
// package verify/node pins is compared with npm's newest release; when they
// differ, the newest is installed into a temporary directory and run
// through the same checks as the pinned one. RETRYKIT_DRIFT_<PROFILE>=VERSION
// (for example RETRYKIT_DRIFT_P_RETRY=8.0.0) checks that version instead;
// TestDriftCatchesPRetry8 does it on every run to prove the watch fails.

// npmRelease is a release of an npm package the drift watch checks beside
// the pinned one.
type npmRelease struct {
	pkg     string // the npm package, e.g. "p-retry"
	pinned  string // the version verify/node's lock file installed
	version string // the version checked here
	prefix  string // the npm --prefix it was installed into: prefix/node_modules/pkg
}

// dir is the installed package's directory.
func (r npmRelease) dir() string { return filepath.Join(r.prefix, "node_modules", r.pkg) }

// who names the release in mismatch messages: the system, the version
// probed and the pinned one.
func (r npmRelease) who() string {
	return fmt.Sprintf("%s %s (npm, probed; pinned %s)", r.pkg, r.version, r.pinned)
}

// npmVersion matches the versions RETRYKIT_DRIFT_<PROFILE> may name: a
// plain semver, no range, tag or URL.
var npmVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// npmPinned is the version of pkg that npm ci installed in verify/node.
func npmPinned(t *testing.T, pkg string) string {
	t.Helper()
	var meta struct{ Version string }
	data, err := os.ReadFile(filepath.Join("node", "node_modules", pkg, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil || meta.Version == "" {
		missing(t, "the "+pkg+" npm package", fmt.Sprintf("verify/node/node_modules/%s/package.json: %v", pkg, err))
	}
	return meta.Version
}

// npmDrift picks the release of pkg (profile prof) the drift watch checks:
// RETRYKIT_DRIFT_<PROF> when set, else npm's latest, which is checked only
// when it differs from the pinned one or RETRYKIT_DRIFT_ALL=1. ok is false
// (and the reason logged) when the pinned checks already cover it; else
// the release is installed (npmInstall). npm's registry unreachable fails
// under CI=true and skips otherwise.
func npmDrift(t *testing.T, prof, pkg string) (r npmRelease, ok bool) {
	t.Helper()
	pinned := npmPinned(t, pkg)
	env := "RETRYKIT_DRIFT_" + strings.ToUpper(prof)
	v := os.Getenv(env)
	if v != "" && !npmVersion.MatchString(v) {
		t.Fatalf("%s=%q: not an npm version such as 8.0.0", env, v)
	}
	if v == "" {
		reached, out := probe("npm", "view", pkg+"@latest", "version")
		v = strings.TrimSpace(out)
		if !reached || !npmVersion.MatchString(v) {
			unreachable(t, "npm's registry", fmt.Errorf("npm view %s@latest version: %s", pkg, tail(out, 500)))
		}
		if v == pinned && os.Getenv("RETRYKIT_DRIFT_ALL") != "1" {
			t.Logf("%s: pinned %s, newest %s: the pinned checks cover it", pkg, pinned, v)
			return npmRelease{}, false
		}
		// the registry may list a release it refuses to hand out (403):
		// a definite answer, so the pinned checks cover what can be had
		if out, err := exec.Command("npm", "view", pkg+"@"+v, "dist.tarball").CombinedOutput(); err == nil {
			if refused := npmRefuses(strings.TrimSpace(string(out))); refused != "" {
				t.Logf("%s: newest %s is listed, but the registry refuses its tarball (%s): the pinned %s checks cover what can be had", pkg, v, refused, pinned)
				return npmRelease{}, false
			}
		}
	}
	return npmInstall(t, pkg, pinned, v), true
}

// npmRefuses fetches the tarball at url and returns the refusal ("403
// Forbidden") when the registry answers 403 or 404, or "" otherwise (a
// tarball served, or no answer: npm install then says what it can).
func npmRefuses(url string) string {
	if !strings.HasPrefix(url, "http") {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound {
		return resp.Status
	}
	return ""
}

// npmInstall installs pkg@version with npm into a fresh temporary directory
// and checks that version is what landed there; flags are more npm flags.
// The release unreachable fails under CI=true and skips otherwise.
func npmInstall(t *testing.T, pkg, pinned, version string, flags ...string) npmRelease {
	t.Helper()
	r := npmRelease{pkg: pkg, pinned: pinned, version: version, prefix: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", r.prefix, "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"}, flags...)
	start := time.Now()
	out, err := exec.CommandContext(ctx, "npm", append(args, pkg+"@"+version)...).CombinedOutput()
	if err != nil {
		unreachable(t, pkg+"@"+version+" from npm", fmt.Errorf("npm install: %v: %s", err, tail(string(out), 1000)))
	}
	var meta struct{ Version string }
	data, err := os.ReadFile(filepath.Join(r.dir(), "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil {
		t.Fatalf("npm install %s@%s left no readable package.json: %v", pkg, version, err)
	}
	if meta.Version != version {
		t.Fatalf("npm install %s@%s installed %s", pkg, version, meta.Version)
	}
	t.Logf("npm install %s@%s: %v", pkg, version, time.Since(start).Round(time.Millisecond))
	return r
}

// npmWatch is an npm package under the watch: its profile, and check, the
// checks its pinned tests run, given the release to run them against.
type npmWatch struct {
	profile, pkg string
	check        func(t *testing.T, r npmRelease)
}

// npmWatched are the npm packages verify/node pins.
var npmWatched = []npmWatch{
	{"bullmq", "bullmq", func(t *testing.T, r npmRelease) {
		bin := node(t)
		checkBullMQ(t, bin, r.dir(), r.who())
		checkBullMQConfigured(t, bin, r.dir(), r.who())
	}},
	{"p_retry", "p-retry", retryLibRelease(checkPRetry)},
	{"bee_queue", "bee-queue", retryLibRelease(checkBeeQueue)},
	{"exponential_backoff", "exponential-backoff", retryLibRelease(checkExponentialBackoff)},
	// pg-boss runs on a throwaway PostgreSQL cluster of the check's own.
	{"pg_boss", "pg-boss", func(t *testing.T, r npmRelease) {
		bin, url := pgBossEnv(t)
		checkPgBoss(t, bin, url, r.dir())
	}},
	{"graphile_worker", "graphile-worker", func(t *testing.T, r npmRelease) {
		checkGraphileWorker(t, r.prefix, r.version, r.who())
	}},
}

// retryLibRelease runs check, the checks of a library retrylibs_driver.mjs
// drives, against release r (RETRYLIBS_DIR points the driver at it).
func retryLibRelease(check func(t *testing.T, drv libDriver)) func(t *testing.T, r npmRelease) {
	return func(t *testing.T, r npmRelease) {
		drv := nodeLib(t, r.pkg)
		drv.env = []string{"RETRYLIBS_DIR=" + r.prefix}
		drv.who = r.who()
		check(t, drv)
	}
}

// TestNpmDrift checks npm's newest bullmq, p-retry, bee-queue,
// exponential-backoff, pg-boss and graphile-worker beside the pinned ones:
// when one differs from its pinned release it is installed into a temporary
// directory and run through the vectors, the defaults and every configured
// case of its pinned tests (TestBullMQReal and TestBullMQConfigured,
// TestPRetryReal, TestBeeQueueReal, TestExponentialBackoffReal,
// TestPgBossReal, TestGraphileWorkerReal).
func TestNpmDrift(t *testing.T) {
	for _, w := range npmWatched {
		t.Run(w.profile, func(t *testing.T) {
			r, ok := npmDrift(t, w.profile, w.pkg)
			if !ok {
				return
			}
			w.check(t, r)
			t.Logf("%s: pinned %s, probed %s (%s)", w.pkg, r.pinned, r.version, r.dir())
		})
	}
}

// TestDriftCatchesPRetry8 points the watch at p-retry 8.0.0, whose
// calculateDelay (index.js) caps with min(timeout, maxTimeout): no
// Math.ceil of the cap and no 2^31 - 1 ms maximumDelay, both added in 9.0.0
// and followed by the profile. The watch must fail for p_retry and name
// the configured cases where they differ: maxTimeout 3000.5 at attempt 6
// with r = 0.6180339887 (round(1.6180339887 * 250 * 1.5^5) = 3072, capped
// at 3000.5 ms by 8.0.0 and at ceil(3000.5) = 3001 ms by the profile), and
// factor 10 at attempt 8 with r = 0 (1000 * 10^7 = 10^10 ms uncapped by
// 8.0.0, 2^31 - 1 ms by the profile). The watch runs in a child process of
// this test binary, so its failure is observed rather than suffered.
func TestDriftCatchesPRetry8(t *testing.T) {
	nodeLib(t, "p-retry")
	pinned := npmPinned(t, "p-retry")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestNpmDrift$/^p_retry$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "RETRYKIT_DRIFT_P_RETRY=8.0.0")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if strings.Contains(out, "drift watch: ") && strings.Contains(out, "not reachable") {
		unreachable(t, "p-retry@8.0.0 from npm", fmt.Errorf("%s", tail(out, 1000)))
	}
	if err == nil {
		t.Fatalf("the drift watch passed p-retry 8.0.0 for the profile p_retry; it must fail:\n%s", tail(out, 3000))
	}
	who := "p-retry 8.0.0 (npm, probed; pinned " + pinned + ")"
	for _, want := range []string{
		"p_retry:retries=6,factor=1.5,minTimeout=250,maxTimeout=3000.5,randomize=true: attempt 6, r=0.6180339887: " + who +
			" gives 3.0005s (3000500000 ns), the profile 3.001s (3001000000 ns)",
		"p_retry:retries=12,factor=10,randomize=true: attempt 8, r=0: " + who +
			" gives 2777h46m40s (10000000000000000 ns), the profile 596h31m23.647s (2147483647000000 ns)",
		"--- FAIL: TestNpmDrift/p_retry ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the drift watch's output on p-retry 8.0.0 lacks %q:\n%s", want, tail(out, 3000))
		}
	}
	// The defaults did not change in 8.0.0: the bare profile still passes.
	if !strings.Contains(out, "--- PASS: TestNpmDrift/p_retry/profile_delays ") {
		t.Errorf("p-retry 8.0.0's defaults fail the bare profile p_retry; they should pass:\n%s", tail(out, 3000))
	}
	n := strings.Count(out, ": "+who+" gives ")
	t.Logf("as intended, the watch fails p-retry 8.0.0 with %d delay mismatches", n)
}

// TestNpmDriftPassesPinnedReleases is the watch's control: each pinned
// release, installed afresh by npm into a temporary directory, must pass
// the watch's checks. A failure of the watch then means a release changed,
// not that its install path or its checks are broken (they run only when
// npm's latest moves on, so nothing else would notice). The five installs
// run side by side, and --prefer-offline takes what npm ci already
// fetched for them from npm's cache (missing data is still fetched); the
// watch itself asks the registry afresh.
func TestNpmDriftPassesPinnedReleases(t *testing.T) {
	for _, w := range npmWatched {
		t.Run(w.profile, func(t *testing.T) {
			t.Parallel()
			pinned := npmPinned(t, w.pkg)
			w.check(t, npmInstall(t, w.pkg, pinned, pinned, "--prefer-offline"))
		})
	}
}
