package ojshttp

import (
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Worker directives (ojs-worker-protocol §4.4, §7.5; ojs-admin-api §9),
// RK-154. The server remembers the workers that name themselves in FETCH
// or heartbeat requests, and an operator may tell one to quiet (stop
// fetching) or terminate (finish and exit): the directive is the state of
// that worker's next heartbeat answers. A worker is never moved back from
// terminate.

// maxWorkers bounds the workers remembered; beyond it the one seen least
// recently is forgotten.
const maxWorkers = 10000

// Worker states of the heartbeat answer.
const (
	workerRunning   = "running"
	workerQuiet     = "quiet"
	workerTerminate = "terminate"
)

type workerInfo struct {
	state     string // the directive: running, quiet or terminate
	lastSeen  time.Time
	heartbeat time.Time // last heartbeat, zero if none
}

// workers is the bounded registry of workers; safe for concurrent use.
type workers struct {
	mu sync.Mutex
	m  map[string]*workerInfo
}

func newWorkers() *workers { return &workers{m: map[string]*workerInfo{}} }

// seen records that id made a request at now (a heartbeat if beat) and
// returns the directive for it.
func (ws *workers) seen(id string, now time.Time, beat bool) string {
	if id == "" {
		return workerRunning
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[id]
	if w == nil {
		if len(ws.m) >= maxWorkers {
			ws.evictLocked()
		}
		w = &workerInfo{state: workerRunning}
		ws.m[id] = w
	}
	w.lastSeen = now
	if beat {
		w.heartbeat = now
	}
	return w.state
}

// evictLocked forgets the worker seen least recently; under mu. It is
// linear in the registry, and runs once per new worker beyond maxWorkers.
func (ws *workers) evictLocked() {
	var oldest string
	var at time.Time
	for id, w := range ws.m {
		if oldest == "" || w.lastSeen.Before(at) {
			oldest, at = id, w.lastSeen
		}
	}
	delete(ws.m, oldest)
}

// direct sets the directive of a known worker.
func (ws *workers) direct(id, state string) (string, *apiError) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[id]
	if w == nil {
		return "", &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "worker " + strconv.Quote(clip(id)) + " is unknown: it has sent no FETCH or heartbeat with this worker_id",
			details: map[string]any{"resource_type": "worker", "resource_id": id}}
	}
	if w.state == workerTerminate && state != workerTerminate {
		return "", &apiError{status: http.StatusConflict, code: CodeConflict,
			message: "worker " + strconv.Quote(clip(id)) + " was told to terminate; a worker never goes back from terminate",
			details: map[string]any{"worker_id": id, "current_state": w.state}}
	}
	prev := w.state
	w.state = state
	return prev, nil
}

func (ws *workers) clear() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.m = map[string]*workerInfo{}
}

// list returns the workers sorted by id.
func (ws *workers) list() []map[string]any {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make([]map[string]any, 0, len(ws.m))
	for id, w := range ws.m {
		v := map[string]any{"id": id, "state": w.state, "last_seen_at": stamp(w.lastSeen)}
		if !w.heartbeat.IsZero() {
			v["last_heartbeat_at"] = stamp(w.heartbeat)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	return out
}

// listWorkers is GET /ojs/v1/admin/workers.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	items := s.workers.list()
	sum := map[string]int{"total": len(items), workerRunning: 0, workerQuiet: 0, workerTerminate: 0}
	for _, it := range items {
		sum[it["state"].(string)]++
	}
	return http.StatusOK, map[string]any{"items": items, "summary": sum}, nil
}

// directWorker returns the handler of POST /ojs/v1/admin/workers/{id}/quiet
// (ojs-admin-api §9.3) or .../terminate.
func (s *Server) directWorker(state string) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		if err := readOptionalBody(w, r, s.cfg.maxBody); err != nil {
			return 0, nil, err
		}
		id := r.PathValue("id")
		if len(id) > maxWorkerIDLen {
			return 0, nil, invalid("id", "at most %d bytes, got %d", maxWorkerIDLen, len(id))
		}
		prev, aerr := s.workers.direct(id, state)
		if aerr != nil {
			return 0, nil, aerr
		}
		return http.StatusOK, map[string]any{"worker_id": id, "state": state, "previous_state": prev}, nil
	}
}
