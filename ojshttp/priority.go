package ojshttp

import (
	"encoding/json"
	"strings"

	"github.com/retrykit/retrykit/executor"
)

// maxPriority bounds options.priority: ojs-core §5 asks for at least -100
// to 100, and a server that keeps to that range orders every job a client
// of another server would send.
const maxPriority = 100

// namedPriorities are ojs-core §5's named levels (RECOMMENDED aliases),
// matched without regard to case.
var namedPriorities = map[string]int{
	"high":   executor.PriorityHigh,
	"normal": executor.PriorityNormal,
	"low":    executor.PriorityLow,
}

// parsePriority reads options.priority: an integer from -100 to 100, or
// one of the named levels "high" (10), "normal" (0), "low" (-10). Higher is
// fetched first; the job shows the number (RK-190).
func parsePriority(field string, v json.RawMessage) (int, *apiError) {
	var name string
	if json.Unmarshal(v, &name) == nil {
		if n, ok := namedPriorities[strings.ToLower(name)]; ok {
			return n, nil
		}
		return 0, invalid(field, "must be an integer from %d to %d or one of HIGH, NORMAL, LOW, got %s", -maxPriority, maxPriority, clip(string(v)))
	}
	n, err := intField(v)
	if err != nil || n < -maxPriority || n > maxPriority {
		return 0, invalid(field, "must be an integer from %d to %d or one of HIGH, NORMAL, LOW, got %s", -maxPriority, maxPriority, clip(string(v)))
	}
	return int(n), nil
}
