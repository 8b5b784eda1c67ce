package conformance

import "strings"

// specBase is where the OJS spec documents are published.
const specBase = "https://github.com/openjobspec/spec/blob/main/spec/"

// specAnchors are the heading anchors of the numbered sections (two
// levels) of the spec documents the requirements cite, as the repository's
// Markdown renderer makes them, from openjobspec/spec 8874b46.
var specAnchors = map[string]map[string]string{
	"ojs-retry": {
		"1": "1-overview", "1.1": "11-design-principles", "1.2": "12-terminology",
		"2": "2-retrypolicy-structure", "2.1": "21-field-definitions", "2.2": "22-field-semantics",
		"3": "3-backoff-strategies", "3.1": "31-none-constant-backoff", "3.2": "32-linear",
		"3.3": "33-exponential-default", "3.4": "34-polynomial-sidekiq-style", "3.5": "35-backoff-cap",
		"4": "4-duration-format", "4.1": "41-format", "4.2": "42-parsing-requirements",
		"5": "5-jitter-specification", "5.1": "51-algorithm", "5.2": "52-jitter-bounds",
		"5.3": "53-example", "6": "6-non-retryable-error-matching", "6.1": "61-error-type-convention",
		"6.2": "62-matching-semantics", "6.3": "63-behavior-on-match",
		"7": "7-handler-error-response-codes", "7.1": "71-response-code-definitions",
		"7.2": "72-precedence", "7.3": "73-error-response-format", "8": "8-default-retry-policy",
		"8.1": "81-partial-override-semantics", "9": "9-interaction-with-visibility-timeout",
		"9.1": "91-retry-delay-vs-visibility-timeout", "9.2": "92-stalled-job-requeue",
		"9.3": "93-heartbeat-extension", "10": "10-retry-state-tracking", "10.1": "101-error-history",
		"11": "11-retry-policy-validation", "11.1": "111-validation-rules", "12": "12-examples",
		"12.1": "121-no-retry", "12.2": "122-simple-retry-default-policy",
		"12.3": "123-aggressive-retry-with-dead-letter", "12.4": "124-custom-non-retryable-errors",
		"12.5": "125-constant-backoff-for-polling", "12.6": "126-no-retry-direct-to-dead-letter",
		"12.7": "127-handler-override-example", "13": "13-prior-art", "13.1": "131-temporal",
		"13.2": "132-sidekiq", "13.3": "133-celery", "13.4": "134-faktory", "13.5": "135-bullmq",
		"13.6": "136-oban", "14": "14-json-schema", "15": "15-conformance-requirements-summary",
		"16": "16-relationship-to-dead-letter-queue",
	},
	"ojs-core": {
		"1": "1-introduction", "1.1": "11-goals", "1.2": "12-scope", "1.3": "13-companion-specifications",
		"2": "2-notational-conventions", "3": "3-terminology", "4": "4-design-principles",
		"5": "5-job-envelope", "5.1": "51-required-attributes", "5.2": "52-optional-attributes",
		"5.3": "53-system-managed-attributes", "5.4": "54-attribute-summary-table",
		"5.5": "55-constraints-on-attribute-values", "5.6": "56-frequently-asked-questions",
		"6": "6-job-lifecycle-state-machine", "6.1": "61-states", "6.2": "62-state-diagram",
		"6.3": "63-formal-state-transition-table", "6.4": "64-valid-state-transitions",
		"6.5": "65-transition-semantics", "7": "7-logical-operations", "7.1": "71-push", "7.2": "72-fetch",
		"7.3": "73-ack", "7.4": "74-fail", "7.5": "75-beat", "7.6": "76-cancel", "7.7": "77-info",
		"8": "8-error-reporting", "8.1": "81-error-object-structure", "8.2": "82-error-example",
		"8.3": "83-error-conventions", "9": "9-middleware", "10": "10-worker-lifecycle",
		"11": "11-extension-points", "11.1": "111-retry-policies",
		"11.2": "112-unique-jobs--deduplication", "11.3": "113-workflows",
		"11.4": "114-cron--periodic-jobs", "11.5": "115-lifecycle-events",
		"11.6": "116-custom-attributes-via-meta", "11.7": "117-rate-limiting-and-concurrency-control",
		"11.8": "118-admin--operator-api", "11.9": "119-extension-lifecycle",
		"11.10": "1110-backend-specific-extensions", "12": "12-prior-art", "13": "13-examples",
		"13.1": "131-minimal-job", "13.2": "132-full-job-with-all-optional-attributes",
		"13.3": "133-job-after-successful-completion", "13.4": "134-job-after-failure-retryable",
		"13.5": "135-job-in-the-dead-letter-queue-discarded", "13.6": "136-scheduled-job",
		"13.7": "137-fail-operation-example", "14": "14-security-considerations",
		"15": "15-acknowledgments",
	},
	"ojs-dead-letter": {
		"1": "1-introduction", "1.1": "11-scope", "2": "2-notational-conventions", "3": "3-terminology",
		"4": "4-dead-letter-semantics", "4.1": "41-entry-conditions", "4.2": "42-discard-vs-dead-letter",
		"5": "5-retention-policies", "5.1": "51-configuration", "5.2": "52-defaults",
		"5.3": "53-per-queue-configuration", "6": "6-manual-retry", "6.1": "61-individual-retry",
		"6.2": "62-bulk-retry", "6.3": "63-retry-with-modifications", "7": "7-automatic-replay",
		"7.1": "71-replay-rules", "7.2": "72-replay-tracking", "8": "8-pruning",
		"8.1": "81-pruning-strategy", "8.2": "82-pruning-and-compliance", "9": "9-dead-letter-inspection",
		"9.1": "91-search-and-filter", "9.2": "92-job-detail", "10": "10-http-binding",
		"10.1": "101-dlq-statistics", "11": "11-observability", "11.1": "111-events",
		"11.2": "112-metrics", "12": "12-conformance-requirements", "13": "13-prior-art",
	},
	"ojs-timeouts": {
		"1": "1-introduction", "1.1": "11-scope", "1.2": "12-companion-specifications",
		"2": "2-notational-conventions", "3": "3-terminology", "4": "4-design-principles",
		"5": "5-timeout-model", "5.1": "51-execution-timeout", "5.2": "52-total-timeout",
		"5.3": "53-enqueue-ttl", "5.4": "54-grace-period", "5.5": "55-heartbeat-timeout",
		"6": "6-timeout-fields", "7": "7-timeout-detection-and-enforcement",
		"7.1": "71-server-side-enforcement", "7.2": "72-worker-side-enforcement",
		"7.3": "73-heartbeat-based-detection", "8": "8-timeout-actions",
		"9": "9-interaction-with-other-extensions", "9.1": "91-retry-policy", "9.2": "92-workflows",
		"9.3": "93-progress", "9.4": "94-graceful-shutdown", "10": "10-http-binding",
		"10.1": "101-enqueue-with-timeouts", "10.2": "102-timeout-error-in-job-response",
		"11": "11-observability", "11.1": "111-events", "11.2": "112-metrics",
		"12": "12-conformance-requirements", "12.1": "121-required", "12.2": "122-recommended",
		"12.3": "123-optional", "13": "13-prior-art", "14": "14-examples",
		"14.1": "141-quick-api-call-with-short-timeout",
		"14.2": "142-long-running-batch-with-total-timeout",
		"14.3": "143-time-sensitive-job-with-enqueue-ttl",
		"14.4": "144-heartbeat-intensive-ml-training-job",
	},
	"ojs-http-binding": {
		"1": "1-notation-and-conventions", "2": "2-protocol-overview",
		"2.1": "21-logical-operation-to-http-mapping", "2.2": "22-additional-endpoints",
		"3": "3-base-path-and-versioning", "3.1": "31-base-path", "3.2": "32-version-negotiation",
		"3.3": "33-compatibility-guarantees", "3.4": "34-deprecation-policy", "4": "4-content-negotiation",
		"4.1": "41-content-type", "4.2": "42-character-encoding", "4.3": "43-accept-header",
		"5": "5-authentication-and-authorization", "5.1": "51-extension-points",
		"5.2": "52-recommendations", "6": "6-request-and-response-format", "6.1": "61-request-bodies",
		"6.2": "62-response-bodies", "6.3": "63-timestamps", "6.4": "64-identifiers",
		"6.5": "65-standard-response-headers", "7": "7-logical-operation-mapping",
		"7.1": "71-push-enqueue", "7.2": "72-push-batch-batch-enqueue", "7.3": "73-fetch-dequeue",
		"7.4": "74-ack-acknowledge-completion", "7.5": "75-fail-report-failure",
		"7.6": "76-beat-heartbeat", "7.7": "77-cancel", "7.8": "78-activate",
		"7.9": "79-info-get-job-details", "8": "8-system-endpoints", "8.1": "81-health-check",
		"9": "9-job-endpoints", "9.1": "91-enqueue-a-job----push", "9.2": "92-batch-enqueue----push-batch",
		"9.3": "93-get-job-details----info", "9.4": "94-cancel-a-job----cancel",
		"9.5": "95-activate-a-job----activate", "10": "10-worker-endpoints",
		"10.1": "101-fetch-jobs----fetch", "10.2": "102-acknowledge-completion----ack",
		"10.3": "103-report-failure----fail", "10.4": "104-worker-heartbeat----beat",
		"11": "11-queue-endpoints", "11.1": "111-list-queues", "11.2": "112-queue-statistics",
		"11.3": "113-pause-queue", "11.4": "114-resume-queue", "12": "12-dead-letter-endpoints",
		"12.1": "121-list-dead-letter-jobs", "12.2": "122-retry-a-dead-letter-job",
		"12.3": "123-discard-a-dead-letter-job", "13": "13-cron-endpoints", "13.1": "131-list-cron-jobs",
		"13.2": "132-register-a-cron-job", "13.3": "133-unregister-a-cron-job",
		"14": "14-workflow-endpoints", "14.1": "141-create-a-workflow", "14.2": "142-get-workflow-status",
		"14.3": "143-cancel-a-workflow", "15": "15-schema-endpoints", "15.1": "151-list-schemas",
		"15.2": "152-register-a-schema", "15.3": "153-get-schema-by-uri", "15.4": "154-delete-a-schema",
		"16": "16-error-handling", "16.1": "161-error-response-format",
		"16.2": "162-http-status-code-mapping", "16.3": "163-standard-error-codes", "17": "17-pagination",
		"17.1": "171-request-parameters", "17.2": "172-response-format", "18": "18-rate-limiting",
		"18.1": "181-rate-limit-headers", "18.2": "182-rate-limit-exceeded-response",
		"18.3": "183-example-normal-response-with-rate-limit-headers", "19": "19-request-id-tracking",
		"19.1": "191-server-generated-request-ids", "19.2": "192-client-provided-request-ids",
		"19.3": "193-request-id-format", "19.4": "194-example-client-provided-request-id",
		"20": "20-cors-considerations", "20.1": "201-browser-access", "20.2": "202-cors-headers",
		"20.3": "203-security-recommendations", "21": "21-conformance-manifest",
		"21.1": "211-manifest-endpoint", "21.2": "212-manifest-fields",
	},
}

// specDocs are the documents of the requirement families (see
// [RequirementGroup]); a section that names its document ("ojs-core 6")
// overrides them.
var specDocs = map[string]string{
	"RET": "ojs-retry", "RK": "ojs-retry", "CORE": "ojs-core", "DLQ": "ojs-dead-letter",
	"TMO": "ojs-timeouts", "HTTP": "ojs-http-binding",
}

// SpecURL returns the address of the spec section a requirement cites:
// the document of the section when it names one ("ojs-core 6.1"), else
// the document of the requirement's family (RET and RK: ojs-retry, CORE:
// ojs-core, DLQ: ojs-dead-letter, TMO: ojs-timeouts, HTTP:
// ojs-http-binding), with the anchor of the section's heading when the
// document has that section. It returns "" for a family without a
// document.
func SpecURL(requirement, section string) string {
	doc := specDocs[RequirementGroup(requirement)]
	sec := strings.TrimSpace(section)
	if d, rest, ok := strings.Cut(sec, " "); ok && strings.HasPrefix(d, "ojs-") {
		doc, sec = d, strings.TrimSpace(rest)
	}
	if doc == "" {
		return ""
	}
	url := specBase + doc + ".md"
	if a := specAnchors[doc][strings.TrimPrefix(sec, "§")]; a != "" {
		url += "#" + a
	}
	return url
}

// sectionLabel returns how the reports show a requirement's section:
// "ojs-retry §7.2", or the section as given when it names its document.
func sectionLabel(requirement, section string) string {
	if section == "" {
		return ""
	}
	if d, rest, ok := strings.Cut(section, " "); ok && strings.HasPrefix(d, "ojs-") {
		return d + " §" + rest
	}
	if doc := specDocs[RequirementGroup(requirement)]; doc != "" {
		return doc + " §" + section
	}
	return "§" + section
}
