// The dead-letter list read in full, and the cleanup after a run.

package live

import (
	"context"
	"fmt"
	"sync"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// listed reports whether job id of queue q is in the dead-letter queue,
// reading the list in full (deadLetterFind), and judges the list's queue
// filter on the way (http-dead-letter-filter).
func (e *env) listed(ctx context.Context, q, id string) (bool, error) {
	r, err := e.c.deadLetterFind(ctx, q, id)
	if err != nil {
		return false, err
	}
	e.mu.Lock()
	e.dlPages += r.pages
	e.dlSeen = e.dlSeen || r.found[id]
	e.mu.Unlock()
	if r.listed > 0 {
		e.record(servermodel.Obs{Check: "http-dead-letter-filter", Kind: servermodel.DeadLetterFilter, Yes: r.foreign > 0})
		if r.foreign > 0 {
			e.fail("http-dead-letter-filter", "GET /ojs/v1/dead-letter?queue=%s listed %d jobs of other queues among %d read in %d pages: the queue filter is ignored", q, r.foreign, r.listed, r.pages)
		} else {
			e.pass("http-dead-letter-filter", "")
		}
	}
	return r.found[id], nil
}

// cleanup cancels the run's jobs that are still pending and deletes its
// dead letters, and returns the report's statement of what it did and
// what it could not do, each job counted once: dead letters deleted (gone
// from the server); pending jobs cancelled; jobs the server still holds
// as finished or cancelled (finished before the cleanup, or cancelled by
// it: the binding deletes neither); and jobs it could not remove: not
// read (INFO failed) or still pending (the cancel was refused).
func (e *env) cleanup(ctx context.Context) string {
	e.c.mu.Lock()
	ids := append([]string(nil), e.c.pushed...)
	e.c.mu.Unlock()
	if len(ids) == 0 {
		return ""
	}
	var (
		mu                                           sync.Mutex
		cancelled, deleted, finished, pending, unred int
		wg                                           sync.WaitGroup
	)
	work := make(chan string)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				var c, d, f, p, u int
				j, err := e.c.info(ctx, id)
				switch {
				case err != nil:
					u = 1
				case j.State == "discarded" && e.c.deadLetterDelete(ctx, id):
					d = 1
				case j.State == "completed" || j.State == "discarded" || j.State == "cancelled":
					f = 1
				case e.c.cancel(ctx, id):
					c = 1
				default:
					p = 1
				}
				mu.Lock()
				cancelled, deleted, finished, pending, unred = cancelled+c, deleted+d, finished+f, pending+p, unred+u
				mu.Unlock()
			}
		}()
	}
	sent := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		work <- id
		sent++
	}
	close(work)
	wg.Wait()
	unred += len(ids) - sent
	s := fmt.Sprintf("cleanup: of %d jobs the run pushed (queues %s-*): %d dead letters deleted, %d pending jobs cancelled; the server still holds %d as finished or cancelled (%d finished before the cleanup, %d cancelled by it), which the binding cannot delete; could not remove %d (%d not read, %d still pending: cancel refused)",
		len(ids), e.prefix, deleted, cancelled, finished+cancelled, finished, cancelled, unred+pending, unred, pending)
	if ctx.Err() != nil {
		s += "; the cleanup ran out of time"
	}
	return s
}

// judgeDeadLetterFilter asks the dead-letter list for a queue the run
// never used, after the scenarios have dead-lettered jobs of their own: a
// server that honours the queue filter lists nothing, one that ignores it
// lists the run's dead letters (or anyone's). It is judged only when the
// run saw a dead letter of its own.
func (e *env) judgeDeadLetterFilter(ctx context.Context) {
	const check = "http-dead-letter-filter"
	e.mu.Lock()
	seen := e.dlSeen
	e.mu.Unlock()
	if !seen {
		e.notRun(check, "the run saw no dead letter of its own")
		return
	}
	empty := e.queue("unused")
	r, err := e.c.deadLetterFind(ctx, empty)
	if err != nil {
		e.errored(err, check)
		return
	}
	e.record(servermodel.Obs{Check: check, Kind: servermodel.DeadLetterFilter, Yes: r.listed > 0})
	if r.listed > 0 {
		e.fail(check, "GET /ojs/v1/dead-letter?queue=%s (a queue the run never used) listed %d jobs: the queue filter is ignored", empty, r.listed)
		return
	}
	e.pass(check, "")
}
