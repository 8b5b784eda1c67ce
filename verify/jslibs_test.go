package verify_test

import (
	"os"
	"testing"
)

// p-retry and Bee-Queue from npm (verify/node, pinned by its lock file) and
// Delayed::Job from Debian's ruby-delayed-job, through their real code.

// nodeLib finds node and the named npm package in verify/node.
func nodeLib(t *testing.T, pkg string) libDriver {
	t.Helper()
	bin := node(t)
	if _, err := os.Stat("node/node_modules/" + pkg + "/package.json"); err != nil {
		missing(t, "the "+pkg+" npm package", "verify/node/node_modules/"+pkg+" is absent (npm ci in verify/node)")
	}
	return libDriver{dir: "node", argv: []string{bin, "retrylibs_driver.mjs"}}
}

// TestPRetryReal: p-retry's calculateDelay and retry budget, with
// Math.random injected and setTimeout firing at once.
func TestPRetryReal(t *testing.T) {
	checkPRetry(t, nodeLib(t, "p-retry"))
}

// checkPRetry runs p-retry's checks through drv: the pinned release, or
// the one the drift watch installed.
func checkPRetry(t *testing.T, drv libDriver) {
	checkLib(t, "p_retry", "p-retry", drv, map[string]any{}, 10, nil, []pyCase{
		{"p_retry:retries=6,factor=1.5,minTimeout=250,maxTimeout=3000.5,randomize=true", map[string]any{"retries": 6, "factor": 1.5, "minTimeout": 250, "maxTimeout": 3000.5, "randomize": true}},
		{"p_retry:retries=3,minTimeout=0", map[string]any{"retries": 3, "minTimeout": 0}},
		{"p_retry:retries=None,factor=3", map[string]any{"retries": nil, "factor": 3}},
		{"p_retry:retries=12,factor=10,randomize=true", map[string]any{"retries": 12, "factor": 10, "randomize": true}},
	})
}

// TestBeeQueueReal: Bee-Queue's Job#computeDelay with its real strategies.
func TestBeeQueueReal(t *testing.T) {
	checkBeeQueue(t, nodeLib(t, "bee-queue"))
}

// checkBeeQueue runs Bee-Queue's checks through drv.
func checkBeeQueue(t *testing.T, drv libDriver) {
	checkLib(t, "bee_queue", "bee-queue", drv, map[string]any{}, 1, map[string]any{}, []pyCase{
		{"bee_queue:retries=5,strategy=exponential,delay=100", map[string]any{"retries": 5, "strategy": "exponential", "delay": 100}},
		{"bee_queue:retries=3,strategy=fixed,delay=2500", map[string]any{"retries": 3, "strategy": "fixed", "delay": 2500}},
		{"bee_queue:retries=2", map[string]any{"retries": 2}},
	})
}

// TestDelayedJobReal: Delayed::Worker#reschedule and reschedule_at.
func TestDelayedJobReal(t *testing.T) {
	bin := ruby(t, "delayed_job", "ruby-delayed-job")
	checkLib(t, "delayed_job", "delayed_job", libDriver{dir: "ruby", argv: []string{bin, "delayed_job_driver.rb"}}, map[string]any{}, 24, nil, []pyCase{
		{"delayed_job:max_attempts=5,destroy_failed_jobs=false", map[string]any{"max_attempts": 5, "destroy_failed_jobs": false}},
		{"delayed_job:max_attempts=40", map[string]any{"max_attempts": 40}},
		// (attempts += 1) < max_attempts: 0 or below fails the job at its first failure.
		{"delayed_job:max_attempts=0", map[string]any{"max_attempts": 0}},
		{"delayed_job:max_attempts=-3", map[string]any{"max_attempts": -3}},
	})
}

// TestExponentialBackoffReal: exponential-backoff's backOff, with setTimeout
// recording each wait and Math.random injected.
func TestExponentialBackoffReal(t *testing.T) {
	checkExponentialBackoff(t, nodeLib(t, "exponential-backoff"))
}

// checkExponentialBackoff runs exponential-backoff's checks through drv.
func checkExponentialBackoff(t *testing.T, drv libDriver) {
	checkLib(t, "exponential_backoff", "exponential-backoff", drv, map[string]any{}, 9, nil, []pyCase{
		{"exponential_backoff:numOfAttempts=6,startingDelay=500,maxDelay=10000,jitter=full", map[string]any{"numOfAttempts": 6, "startingDelay": 500, "maxDelay": 10000, "jitter": "full"}},
		{"exponential_backoff:timeMultiple=3,delayFirstAttempt=true,numOfAttempts=12", map[string]any{"timeMultiple": 3, "delayFirstAttempt": true, "numOfAttempts": 12}},
		{"exponential_backoff:numOfAttempts=0", map[string]any{"numOfAttempts": 0}},
	})
}
