// Scenarios of reservations: a visibility timeout that expires, and
// heartbeats that extend it.

package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// visibility is the reservation of the visibility-timeout and heartbeat
// scenarios.
const visibility = 80 * ms

// scenVisibility lets a two-attempt job's reservation expire twice.
func scenVisibility(ctx context.Context, e *env) {
	const check = "http-visibility-timeout"
	pol := retry{max: 2, initial: 20 * ms, coef: 2, maxIv: time.Second}
	q := e.queue("visibility")
	id, err := e.c.push(ctx, q, "retrykit.live.visibility", pol.wire(e))
	if err != nil {
		e.errored(err, check)
		return
	}
	f, err := e.await(ctx, q, id, time.Time{}, visibility)
	if err != nil {
		e.errored(err, check)
		return
	}
	// The reservation ends visibility after the fetch, on the server's
	// clock; the job may come back at once or after a backoff delay
	// (RK-118), never before.
	reserved := f.at
	if reserved.IsZero() {
		reserved, _, _ = e.c.window(f.ex)
	}
	if j := e.afterExpiry(ctx, id); j != nil && j.State == "discarded" {
		// exhausted by one expiry: the question is how many attempts the
		// job has, not how late it came back
		e.record(servermodel.Obs{Check: check, Kind: servermodel.Redelivery, Policy: pol.wire(e), N: 1})
		e.fail(check, "after one expired reservation of a job with max_attempts 2 the job is discarded: it was not handed out again")
		return
	}
	g, err := e.awaitOpt(ctx, q, id, reserved.Add(visibility), visibility, false)
	if err != nil {
		e.fail(check, "the job did not come back after its reservation expired: %v", err)
		return
	}
	if g.job.Attempt != nil && f.job.Attempt != nil {
		e.record(servermodel.Obs{Check: check, Kind: servermodel.ExpiryCounted, Yes: *g.job.Attempt == *f.job.Attempt+1})
	}
	if g.job.Attempt != nil && f.job.Attempt != nil && *g.job.Attempt != *f.job.Attempt+1 {
		e.fail(check, "the delivery after the expiry has attempt %d, the first had %d: the expiry did not count as an attempt", *g.job.Attempt, *f.job.Attempt)
		return
	}
	// Let the second reservation expire too: with max_attempts 2 the job is
	// then exhausted.
	deadline := time.Now().Add(visibility + e.cfg.lateBound)
	for {
		j, err := e.c.info(ctx, id)
		if err != nil {
			e.errored(err, check)
			return
		}
		if j.State == "discarded" {
			break
		}
		if j.State == "available" || j.State == "scheduled" || j.State == "retryable" {
			if h, _ := e.c.fetch(ctx, q, visibility); h != nil {
				e.record(servermodel.Obs{Check: check, Kind: servermodel.Redelivery, Policy: pol.wire(e), N: 2, Yes: true})
				e.fail(check, "after two expired reservations of a job with max_attempts 2 it was handed out a third time (attempt %s)", intOr(h.job.Attempt))
				return
			}
		}
		if time.Now().After(deadline) {
			e.fail(check, "two reservations of a job with max_attempts 2 expired, yet %v later its state is %q, want discarded", e.cfg.lateBound, j.State)
			return
		}
		select {
		case <-ctx.Done():
			e.errored(ctx.Err(), check)
			return
		case <-time.After(5 * e.cfg.poll):
		}
	}
	e.record(servermodel.Obs{Check: check, Kind: servermodel.Redelivery, Policy: pol.wire(e), N: 2})
	e.pass(check, "")
}

// afterExpiry reads job id (INFO) until it leaves the state active, for
// up to the visibility timeout and the late bound; nil when INFO fails or
// the job is still active.
func (e *env) afterExpiry(ctx context.Context, id string) *job {
	end := time.Now().Add(visibility + e.cfg.lateBound)
	for time.Now().Before(end) {
		j, err := e.c.info(ctx, id)
		if err != nil {
			return nil
		}
		if j.State != "active" {
			return j
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(e.cfg.poll):
		}
	}
	return nil
}

// beatVisibility is the reservation the heartbeat scenario extends, every
// beatVisibility/8.
const beatVisibility = time.Second

// errStalled reports that the checker itself paused for longer than a
// check can tolerate (an overloaded machine), so the check is retried.
var errStalled = errors.New("live: the checker paused too long to judge")

// scenHeartbeat keeps a job reserved by heartbeats for two reservation
// periods while another worker polls its queue. A run in which the
// checker itself paused for half a reservation between heartbeats (an
// overloaded machine) proves nothing and is played again, up to 4 times,
// each with twice the reservation (1 s, 2 s, 4 s, 8 s), so that a machine
// slow enough to stall once is given room rather than the same window.
func scenHeartbeat(ctx context.Context, e *env) {
	const check = "http-heartbeat"
	var err error
	for try := 0; try < 4; try++ {
		if err = playHeartbeat(ctx, e, beatVisibility<<try); !errors.Is(err, errStalled) {
			break
		}
	}
	if err != nil {
		e.errored(err, check)
	}
}

// playHeartbeat plays the heartbeat scenario once; it records a pass or a
// failure and returns an error when nothing could be judged.
func playHeartbeat(ctx context.Context, e *env, visibility time.Duration) error {
	const check = "http-heartbeat"
	q := e.queue("heartbeat")
	id, err := e.c.push(ctx, q, "retrykit.live.heartbeat", retry{max: 3, initial: 20 * ms, coef: 2, maxIv: time.Second}.wire(e))
	if err != nil {
		return err
	}
	if _, err := e.await(ctx, q, id, time.Time{}, visibility); err != nil {
		return err
	}
	lastBeat := time.Now() // when the last extension was sent (or the fetch answered)
	stalled := func() bool { return time.Since(lastBeat) > visibility/2 }
	end := time.Now().Add(2 * visibility)
	for time.Now().Before(end) {
		if time.Since(lastBeat) >= visibility/8 {
			if stalled() {
				return errStalled
			}
			sent := time.Now()
			if err := e.c.heartbeat(ctx, id, visibility); err != nil {
				if stalled() {
					return errStalled
				}
				if j, ierr := e.c.info(ctx, id); ierr == nil {
					err = fmt.Errorf("%w (INFO: state %s, attempt %s)", err, j.State, intOr(j.Attempt))
				}
				e.fail(check, "a heartbeat %v after the previous one: %v", sent.Sub(lastBeat).Round(time.Millisecond), err)
				return nil
			}
			lastBeat = sent
		}
		f, err := e.c.fetch(ctx, q, visibility)
		if err != nil {
			return err
		}
		if f != nil {
			if stalled() {
				return errStalled
			}
			e.fail(check, "the job was handed out again (attempt %s, %v after the last heartbeat) while its worker sent heartbeats every %v extending by %v", intOr(f.job.Attempt), time.Since(lastBeat).Round(time.Millisecond), visibility/8, visibility)
			return nil
		}
		time.Sleep(e.cfg.poll)
	}
	if stalled() {
		return errStalled
	}
	if err := e.c.ack(ctx, id); err != nil {
		e.fail(check, "ACK after %v of heartbeats: %v", 2*visibility, err)
		return nil
	}
	e.pass(check, "")
	return nil
}
