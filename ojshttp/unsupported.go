package ojshttp

import (
	"net/http"
	"strconv"
)

// feature is an OJS feature serve does not implement, with the
// conformance level the binding gives its routes (§2.2) and the manifest
// capability that says so.
type feature struct {
	capability string   // the manifest's capabilities flag, false here
	level      int      // the binding §2.2's level of its routes
	patterns   []string // the ServeMux patterns of its routes, every method
}

// unsupportedFeatures are answered 422 unsupported on every method of
// their routes (the binding §16.3), rather than 404, so that a client
// tells "not implemented here" from "no such job" (RK-284). The manifest
// lists them too.
var unsupportedFeatures = []feature{
	{capability: "cron_jobs", level: 2, patterns: []string{"/ojs/v1/cron", "/ojs/v1/cron/"}},
	{capability: "workflows", level: 3, patterns: []string{"/ojs/v1/workflows", "/ojs/v1/workflows/"}},
	{capability: "schema_validation", level: 0, patterns: []string{"/ojs/v1/schemas", "/ojs/v1/schemas/"}},
}

// unsupportedRoutes mounts the routes of unsupportedFeatures.
func (s *Server) unsupportedRoutes() {
	for _, f := range unsupportedFeatures {
		for _, p := range f.patterns {
			s.handle(p, f.refuse)
		}
	}
}

// refuse answers a request to one of f's routes: 422 unsupported, naming
// the feature, its level and the manifest capability.
func (f feature) refuse(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	return 0, nil, &apiError{status: http.StatusUnprocessableEntity, code: CodeUnsupported,
		message: f.capability + " (conformance level " + strconv.Itoa(f.level) + ") is not implemented by this server: " +
			r.Method + " " + clip(r.URL.Path) + "; its manifest says capabilities." + f.capability + ": false",
		details: map[string]any{"feature": f.capability, "level": f.level, "capability": f.capability}}
}

// unsupportedManifest is the manifest's list of unsupportedFeatures.
func unsupportedManifest() []map[string]any {
	out := make([]map[string]any, len(unsupportedFeatures))
	for i, f := range unsupportedFeatures {
		out[i] = map[string]any{"feature": f.capability, "level": f.level, "routes": f.patterns, "answer": "422 " + CodeUnsupported}
	}
	return out
}
