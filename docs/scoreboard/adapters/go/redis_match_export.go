//go:build ignore

// Copied into internal/redis of the ojs-backend-redis copy the adapter is
// built in (without this build line; docs/scoreboard/BUILD.md), so that
// ojs_backend_redis.go can call the unexported matcher of the FAIL handler.
// It adds a name, nothing else.
package redis

// MatchesPattern is matchesPattern (helpers.go), the matcher Backend.Nack
// applies to each non_retryable_errors entry.
func MatchesPattern(s, pattern string) bool { return matchesPattern(s, pattern) }
