package ojshttp

import (
	"net/http"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
)

// ManifestExtension is the name under which the manifest lists retrykit's
// own extension and, as a top-level object of the same name, describes it.
const ManifestExtension = "x-retrykit"

// ManifestRetryExtensions is the name under which the manifest claims the
// retry extensions of docs/extensions.md; the top-level object of the same
// name lists the features served (retryFeatures), which is what
// `retrykit conformance --server` checks.
const ManifestRetryExtensions = "x-retry-extensions"

// retryFeatures are the features of the retry extensions serve implements:
// per-error-type rules, full/equal/decorrelated jitter, a requested delay
// and snooze on FAIL. The fifth, retry_budget, is queue configuration that
// serve does not take.
var retryFeatures = []string{"error_rules", "jitter_mode", "retry_after", "snooze"}

// manifest is GET /ojs/manifest: it claims only what the server does
// (RK-176). It has the fields of both manifest documents: ojs-conformance
// §4.1 (specversion, conformance_level, conformance_tier, protocols,
// backend, extensions) and ojs-http-binding §21 (ojs_version,
// capabilities, endpoints). extensions is the array-of-strings form both
// documents accept (ojs-conformance §4.2.1's legacy form, the binding's
// string[]), which the official Go SDK requires; it names only
// retrykit's own extension, whose details are the top-level
// "x-retrykit" object. The official capabilities served are the
// capabilities flags.
func (s *Server) manifest(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	endpoints := map[string]string{
		"base_url": "/ojs/v1",
		"manifest": "/ojs/manifest",
		"health":   "/ojs/v1/health",
	}
	if s.cfg.manual != nil {
		endpoints["x-retrykit-clock"] = AdminClockPath
	}
	if s.cfg.reset {
		endpoints["x-retrykit-reset"] = ResetPath
	}
	if s.cfg.events != nil {
		endpoints["events"] = "/ojs/v1/events"
	}
	return http.StatusOK, map[string]any{
		"specversion": ojsVersion,
		"ojs_version": ojsVersion,
		"implementation": map[string]any{
			"name":       "retrykit",
			"version":    moduleVersion(),
			"language":   "go",
			"homepage":   "https://github.com/retrykit/retrykit",
			"repository": "https://github.com/retrykit/retrykit",
		},
		"conformance_level": 1,
		"conformance_tier":  "runtime",
		"protocols":         []string{"http"},
		"backend":           "memory",
		"schema_validation": false,
		// unique_job_strength: unique PUSHes are serialised (RK-152).
		"unique_job_strength": "strong",
		"capabilities": map[string]bool{
			"batch_enqueue":     true,
			"cron_jobs":         false,
			"dead_letter":       true,
			"delayed_jobs":      true,
			"job_ttl":           true,
			"priority_queues":   true,
			"rate_limiting":     true,
			"schema_validation": false,
			"unique_jobs":       true,
			"workflows":         false,
			"pause_resume":      true,
		},
		"extensions":            s.extensions(),
		ManifestRetryExtensions: s.retryExtensions(),
		"endpoints":             endpoints,
		ManifestExtension: map[string]any{
			"manual_clock":    s.cfg.manual != nil,
			"events":          eventsEndpoint(s.cfg.events != nil),
			"reset_endpoint":  resetEndpoint(s.cfg.reset),
			"clock_endpoint":  clockEndpoint(s.cfg.manual != nil),
			"persistence":     "none: a restart loses every job",
			"decisions":       "docs/decisions.md RK-100 to RK-109, RK-152 to RK-159, RK-175 to RK-195, RK-280 to RK-299",
			"max_jobs":        s.cfg.maxJobs,
			"max_body_bytes":  s.cfg.maxBody,
			"max_batch":       s.cfg.maxBatch,
			"max_fetch_count": MaxFetchCount,
			"unsupported":     unsupportedManifest(),
			"rate_limits": map[string]any{
				"window":           "sliding log: fewer than limit starts of the key in (now - period, now] (RK-285)",
				"throttle":         "at least ceil(period / limit) after the key's last start (RK-286)",
				"queue_limits":     "PUT /ojs/v1/admin/queues/{name}/rate-limit",
				"max_window_limit": executor.MaxWindowLimit,
				"max_keys":         executor.MaxRateLimitKeys,
				"headers":          "no X-RateLimit-* headers: serve limits job starts, not requests (RK-289)",
				"not_implemented":  "PUT /ojs/v1/rate-limits/{key} overrides, dynamic limits (rate_limit_until), rate_limit.dynamic_adjusted",
			},
			"worker_directives": "POST /ojs/v1/admin/workers/{id}/quiet or /terminate: the next heartbeat answers that state",
		},
	}, nil
}

func eventsEndpoint(on bool) any {
	if on {
		return map[string]any{"transport": "http-polling", "endpoint": "/ojs/v1/events", "delivery": "at-most-once (bounded log)"}
	}
	return nil
}

func resetEndpoint(on bool) any {
	if on {
		return ResetPath
	}
	return nil
}

func clockEndpoint(on bool) any {
	if on {
		return AdminClockPath
	}
	return nil
}

// extensions is the manifest's extension list: retrykit's own, the
// official ones served and the retry extensions (left out under planted
// fault RetryExtensionsUnclaimed).
func (s *Server) extensions() []string {
	l := []string{ManifestExtension, "urn:ojs:ext:timeouts", "urn:ojs:ext:dead-letter", "urn:ojs:ext:rate-limiting"}
	if s.faults().Has(ojsfault.RetryExtensionsUnclaimed) {
		return l
	}
	return append(l, ManifestRetryExtensions)
}

// retryExtensions is the manifest's x-retry-extensions object, nil when
// the extension is not claimed.
func (s *Server) retryExtensions() any {
	if s.faults().Has(ojsfault.RetryExtensionsUnclaimed) {
		return nil
	}
	return map[string]any{"version": "0.1", "features": retryFeatures, "spec": "docs/extensions.md"}
}
