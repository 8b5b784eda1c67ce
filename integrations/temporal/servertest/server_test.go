//go:build !race

// Package servertest_test runs package temporalretry against a real
// Temporal server in process (go.temporal.io/server/temporaltest: SQLite in
// memory, loopback). It is a package of its own so that the unit tests,
// examples and fuzz targets of temporalretry build without the server.
//
// It is not built with -race: the race detector would have to compile the
// whole Temporal server again, instrumented, which costs many minutes on a
// cold CI machine. The interceptor's own concurrency is checked under -race
// by the unit tests (TestConcurrentHandle).

package servertest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/dynamicconfig"
	server "go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
	"github.com/retrykit/retrykit/policy"
)

// timerShift is the history.timerProcessorMaxTimeShift the tests give the
// server so that sub-second delays are honoured (RK-141); the server's
// default is 1s.
const timerShift = 10 * time.Millisecond

// newServer starts a real Temporal server in process (SQLite in memory,
// loopback). shift 0 keeps the server's default timer shift.
func newServer(t *testing.T, shift time.Duration) *temporaltest.TestServer {
	t.Helper()
	dc := dynamicconfig.StaticClient{
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
	}
	if shift > 0 {
		dc[dynamicconfig.TimerProcessorMaxTimeShift.Key()] = []dynamicconfig.ConstrainedValue{{Value: shift}}
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return temporaltest.NewServer(
		temporaltest.WithT(t),
		temporaltest.WithBaseServerOptions(server.WithDynamicConfigClient(dc)),
		temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}),
	)
}

// attemptRec is what one attempt of an activity saw: its number and start
// time as the server gave them, and the worker's clock when it returned.
// For a retry (attempt 2 on), Server holds the server's own record of it,
// read while it ran.
type attemptRec struct {
	Attempt  int32
	Started  time.Time // activity.Info.StartedTime, set by the server
	Returned time.Time
	Server   *serverRecord
}

// serverRecord is the server's record of a retry, from
// DescribeWorkflowExecution's pending activity while the retry runs: when
// the attempt before it completed (LastAttemptCompleteTime), when the retry
// was due (ScheduledTime, which RetryActivity sets to that completion plus
// the delay) and when it started (LastStartedTime). All three are the
// server's clock, so their differences are the delay it granted and how
// late it started the retry, whatever the load on the worker.
type serverRecord struct {
	PrevCompleted, Due, Started time.Time
}

// Granted is the delay the server put between the attempt before and the
// retry.
func (s serverRecord) Granted() time.Duration { return s.Due.Sub(s.PrevCompleted) }

// Late is how long after it was due the retry started; negative is early.
func (s serverRecord) Late() time.Duration { return s.Started.Sub(s.Due) }

// recorder keeps every attempt of every activity, keyed by workflow ID and
// activity ID; with c set, it reads the server's record of each retry.
type recorder struct {
	c  client.Client
	mu sync.Mutex
	m  map[string][]attemptRec
}

func (r *recorder) add(ctx context.Context) int32 {
	info := activity.GetInfo(ctx)
	var srv *serverRecord
	if r.c != nil && info.Attempt > 1 {
		srv = r.serverRecord(ctx, info)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string][]attemptRec{}
	}
	k := info.WorkflowExecution.ID + "/" + info.ActivityID
	r.m[k] = append(r.m[k], attemptRec{Attempt: info.Attempt, Started: info.StartedTime, Returned: time.Now(), Server: srv})
	return info.Attempt
}

// serverRecord reads the running attempt's pending activity from the
// server; nil when the server does not show it as this attempt.
func (r *recorder) serverRecord(ctx context.Context, info activity.Info) *serverRecord {
	d, err := r.c.DescribeWorkflowExecution(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID)
	if err != nil {
		return nil
	}
	for _, p := range d.GetPendingActivities() {
		if p.GetActivityId() == info.ActivityID && p.GetAttempt() == info.Attempt {
			return &serverRecord{PrevCompleted: p.GetLastAttemptCompleteTime().AsTime(), Due: p.GetScheduledTime().AsTime(), Started: p.GetLastStartedTime().AsTime()}
		}
	}
	return nil
}

func (r *recorder) get(key string) []attemptRec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]attemptRec(nil), r.m[key]...)
}

// scripted is an activity that behaves at attempt n as script[n-1] (the
// last entry for later attempts): "ok" succeeds, "fail" returns a plain Go
// error, "type:T" an error of OJS type T, "code:C" one with handler code C,
// "big:N:T" an error of OJS type T whose message is N bytes long,
// "after:D:T" an error of OJS type T asking for a retry after D.
func (r *recorder) scripted(ctx context.Context, script []string) (string, error) {
	n := r.add(ctx)
	step := script[min(int(n), len(script))-1]
	switch {
	case step == "ok":
		return fmt.Sprintf("done at %d", n), nil
	case strings.HasPrefix(step, "type:"):
		return "", errmatch.Wrap(fmt.Errorf("typed failure %d", n), strings.TrimPrefix(step, "type:"), "")
	case strings.HasPrefix(step, "code:"):
		return "", errmatch.Wrap(fmt.Errorf("coded failure %d", n), "", errmatch.Code(strings.TrimPrefix(step, "code:")))
	case strings.HasPrefix(step, "after:"):
		ds, typ, _ := strings.Cut(strings.TrimPrefix(step, "after:"), ":")
		d, _ := time.ParseDuration(ds)
		return "", errmatch.WithRetryAfter(errmatch.Wrap(fmt.Errorf("busy %d", n), typ, ""), d)
	case strings.HasPrefix(step, "big:"):
		size, typ, _ := strings.Cut(strings.TrimPrefix(step, "big:"), ":")
		b, _ := strconv.Atoi(size)
		msg := fmt.Sprintf("big failure %d: ", n)
		return "", errmatch.Wrap(errors.New(msg+strings.Repeat("x", max(b-len(msg), 0))), typ, "")
	}
	return "", fmt.Errorf("boom %d", n)
}

// call is one activity a workflow runs: its type, its call policy ("" for
// none) and its script.
type call struct {
	Type   string
	Policy string
	Script []string
	// WorkflowNonRetryable, when set, is a RetryPolicy the workflow gives
	// the activity itself (MaximumAttempts 99 and these error types).
	WorkflowNonRetryable []string
	// Budget, when set, is an OJS time budget (JSON) given to the call
	// with temporalretry.WithBudget.
	Budget string
}

// result is what the workflow saw of one call.
type result struct {
	Value   string
	Err     string
	Outcome temporalretry.Outcome
	HasOut  bool
}

// runCalls runs the calls in parallel and returns what each ended with.
func runCalls(ctx workflow.Context, calls []call) ([]result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	futures := make([]workflow.Future, len(calls))
	for i, c := range calls {
		opts := workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, ActivityID: fmt.Sprint(i)}
		if c.WorkflowNonRetryable != nil {
			opts.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 99, NonRetryableErrorTypes: c.WorkflowNonRetryable}
		}
		cctx := workflow.WithActivityOptions(ctx, opts)
		if c.Policy != "" {
			p, err := policy.Parse([]byte(c.Policy))
			if err != nil {
				return nil, err
			}
			cctx = temporalretry.WithPolicy(cctx, p)
		}
		if c.Budget != "" {
			b, err := budget.Parse([]byte(c.Budget))
			if err != nil {
				return nil, err
			}
			cctx = temporalretry.WithBudget(cctx, b)
		}
		futures[i] = workflow.ExecuteActivity(cctx, c.Type, c.Script)
	}
	out := make([]result, len(calls))
	for i, f := range futures {
		err := f.Get(ctx, &out[i].Value)
		if err != nil {
			out[i].Err = err.Error()
			out[i].Outcome, out[i].HasOut = temporalretry.OutcomeOf(err)
		}
	}
	return out, nil
}

// env is a server with workers running the interceptor.
type env struct {
	ts    *temporaltest.TestServer
	c     client.Client
	rec   *recorder
	queue string
}

func newEnv(t *testing.T, ts *temporaltest.TestServer, workers int, rk *temporalretry.Interceptor) *env {
	c := ts.GetDefaultClient()
	e := &env{ts: ts, c: c, rec: &recorder{c: c}, queue: "rk-" + strings.ReplaceAll(t.Name(), "/", "-")}
	for range workers {
		ts.NewWorkerWithOptions(e.queue, func(r worker.Registry) {
			r.RegisterWorkflowWithOptions(runCalls, workflow.RegisterOptions{Name: "runCalls"})
			r.RegisterActivityWithOptions(e.rec.scripted, activity.RegisterOptions{Name: "scripted"})
			// A second function: the SDK keys registrations by function, so
			// registering e.rec.scripted twice would rename the first.
			typed := func(ctx context.Context, script []string) (string, error) { return e.rec.scripted(ctx, script) }
			r.RegisterActivityWithOptions(typed, activity.RegisterOptions{Name: "typed"})
		}, worker.Options{Interceptors: []interceptor.WorkerInterceptor{rk}})
	}
	return e
}

// run starts the workflow id with calls and waits for its results.
func (e *env) run(t *testing.T, id string, calls []call) []result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.queue}, "runCalls", calls)
	if err != nil {
		t.Fatal(err)
	}
	var out []result
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("workflow %s: %v", id, err)
	}
	return out
}

// activityEvents reads the workflow's history and returns the events of
// activity activityID: scheduled, started (the last attempt's) and the
// closing one.
func (e *env) activityEvents(t *testing.T, wid, activityID string) (sched, started, closed *historypb.HistoryEvent) {
	t.Helper()
	it := e.c.GetWorkflowHistory(context.Background(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var schedID int64
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityId() == activityID {
				sched, schedID = ev, ev.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId() == schedID {
				started = ev
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId() == schedID {
				closed = ev
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId() == schedID {
				closed = ev
			}
		}
	}
	if sched == nil || started == nil || closed == nil {
		t.Fatalf("history of %s: activity %s incomplete: scheduled %v started %v closed %v", wid, activityID, sched != nil, started != nil, closed != nil)
	}
	return sched, started, closed
}

// gaps returns, for each retry, the time from the worker's return of
// attempt n to the server's start of attempt n+1.
func gaps(recs []attemptRec) []time.Duration {
	var out []time.Duration
	for n := 1; n < len(recs); n++ {
		out = append(out, recs[n].Started.Sub(recs[n-1].Returned))
	}
	return out
}

func mustPolicy(t *testing.T, js string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServerDelays runs an activity that always fails, under a call policy
// of sub-second and longer delays with OJS jitter from a fixed draw, and
// checks attempt numbers, the requested delays, the times between attempts,
// the final state and the kept error, from the history and the server's
// own start times.
func TestServerDelays(t *testing.T) {
	ts := newServer(t, timerShift)
	var dlMu sync.Mutex
	var dead []temporalretry.DeadLetter
	// Jitter factor 0.5 + 0.1 = 0.6 on 200ms * 2^(n-1), capped at 1s:
	// 120ms, 240ms, 480ms, 600ms.
	want := []time.Duration{120 * time.Millisecond, 240 * time.Millisecond, 480 * time.Millisecond, 600 * time.Millisecond}
	const js = `{"max_attempts":5,"initial_interval":"PT0.2S","backoff_coefficient":2,"max_interval":"PT1S","jitter":true,"on_exhaustion":"dead_letter"}`
	rk := temporalretry.New(nil, temporalretry.WithSource(backoff.Fixed(0.1)), temporalretry.WithDeadLetter(func(_ context.Context, dl temporalretry.DeadLetter) error {
		dlMu.Lock()
		defer dlMu.Unlock()
		dead = append(dead, dl)
		return nil
	}))
	e := newEnv(t, ts, 1, rk)
	// Two more calls in the same workflow: 30ms twice, and 1.5s once.
	const short = `{"max_attempts":3,"initial_interval":"PT0.03S","backoff_coefficient":1,"jitter":false}`
	const long = `{"max_attempts":2,"initial_interval":"PT1.5S","jitter":false}`
	res := e.run(t, "delays", []call{
		{Type: "scripted", Policy: js, Script: []string{"fail"}},
		{Type: "scripted", Policy: short, Script: []string{"fail"}},
		{Type: "scripted", Policy: long, Script: []string{"fail"}},
	})

	// The workflow saw the final failure with its outcome.
	if o := res[0].Outcome; !res[0].HasOut || o.Action != "dead_letter" || o.Reason != "exhausted" || o.Attempt != 5 {
		t.Errorf("workflow saw %+v (%v): %s", o, res[0].HasOut, res[0].Err)
	}
	if !strings.Contains(res[0].Err, "boom 5") {
		t.Errorf("the handler's last error is not kept: %s", res[0].Err)
	}
	dlMu.Lock()
	if len(dead) != 1 || dead[0].Info.Attempt != 5 || dead[0].Err.Error() != "boom 5" || len(dead[0].Args) != 1 {
		t.Errorf("dead-letter hook calls: %+v", dead)
	}
	dlMu.Unlock()

	recs := e.rec.get("delays/0")
	if len(recs) != 5 {
		t.Fatalf("%d attempts ran, want 5: %+v", len(recs), recs)
	}
	for n, r := range recs {
		if r.Attempt != int32(n+1) {
			t.Errorf("execution %d saw attempt %d", n+1, r.Attempt)
		}
	}

	// History: the RetryPolicy set by the workflow side, the last
	// attempt's number, the delay it asked for after attempt 4, the final
	// failure and its retry state.
	sched, started, closed := e.activityEvents(t, "delays", "0")
	rp := sched.GetActivityTaskScheduledEventAttributes().GetRetryPolicy()
	if rp.GetMaximumAttempts() != 5 || rp.GetInitialInterval().AsDuration() != 200*time.Millisecond || rp.GetMaximumInterval().AsDuration() != time.Second || rp.GetBackoffCoefficient() != 2 {
		t.Errorf("scheduled RetryPolicy %v", rp)
	}
	sa := started.GetActivityTaskStartedEventAttributes()
	if sa.GetAttempt() != 5 {
		t.Errorf("history: last attempt %d, want 5", sa.GetAttempt())
	}
	if got := sa.GetLastFailure().GetApplicationFailureInfo().GetNextRetryDelay().AsDuration(); got != want[3] {
		t.Errorf("history: attempt 4 asked for NextRetryDelay %v, want %v", got, want[3])
	}
	if !started.GetEventTime().AsTime().Equal(recs[4].Started) {
		t.Errorf("history start of attempt 5 %v, the activity saw %v", started.GetEventTime().AsTime(), recs[4].Started)
	}
	fa := closed.GetActivityTaskFailedEventAttributes()
	if fa.GetRetryState() != enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE {
		t.Errorf("history: retry state %v", fa.GetRetryState())
	}
	if f := fa.GetFailure(); f.GetMessage() != "temporalretry: dead_letter (exhausted)" || f.GetCause().GetMessage() != "boom 5" || !f.GetApplicationFailureInfo().GetNonRetryable() {
		t.Errorf("history: final failure %v", f)
	}

	// Times, judged on the server's own records: the delay it granted is
	// the one requested (exactly, but for the microseconds between the two
	// clock reads of one RespondActivityTaskFailed), no retry starts before
	// it is due, and how late each one starts is a figure, reported, not
	// judged: on a loaded machine it is the machine's, not the server's.
	judgeServerDelays(t, "", e.rec.get("delays/0"), want)
	span := started.GetEventTime().AsTime().Sub(sched.GetEventTime().AsTime())
	var sum time.Duration
	for _, w := range want {
		sum += w
	}
	t.Logf("history: scheduled to attempt 5 started %v, requested delays sum to %v", span.Round(time.Millisecond), sum)
	if span < sum {
		t.Errorf("history span %v, shorter than the delays' sum %v: a retry came early", span, sum)
	}

	for _, c := range []struct {
		id   string
		want []time.Duration
	}{
		{"1", []time.Duration{30 * time.Millisecond, 30 * time.Millisecond}},
		{"2", []time.Duration{1500 * time.Millisecond}},
	} {
		recs := e.rec.get("delays/" + c.id)
		_, started, _ := e.activityEvents(t, "delays", c.id)
		sa := started.GetActivityTaskStartedEventAttributes()
		if len(recs) != len(c.want)+1 || sa.GetAttempt() != int32(len(c.want)+1) {
			t.Fatalf("call %s: %d attempts ran, history's last %d, want %d", c.id, len(recs), sa.GetAttempt(), len(c.want)+1)
		}
		if got := sa.GetLastFailure().GetApplicationFailureInfo().GetNextRetryDelay().AsDuration(); got != c.want[len(c.want)-1] {
			t.Errorf("call %s: history's NextRetryDelay %v, want %v", c.id, got, c.want[len(c.want)-1])
		}
		judgeServerDelays(t, "call "+c.id+": ", recs, c.want)
	}
}

// grantSlack bounds the server's two clock reads for one failure: it
// records the completion, then computes the retry's due time from a second
// now() in the same call (respondactivitytaskfailed: RecordLastActivityCompleteTime,
// then RetryActivity). Any wrong delay differs from the requested one by
// far more.
const grantSlack = 20 * time.Millisecond

// judgeServerDelays judges the retries of one activity on the server's
// records: granted delay = the requested one (up to grantSlack), started
// no earlier than due, strictly; and logs each retry's lateness, on the
// server's clock and on the worker's.
func judgeServerDelays(t *testing.T, prefix string, recs []attemptRec, want []time.Duration) {
	t.Helper()
	for n, d := range gaps(recs) {
		r := recs[n+1]
		if r.Server == nil {
			t.Errorf("%sretry after attempt %d: the server did not show it as pending while it ran", prefix, n+1)
			continue
		}
		s := *r.Server
		t.Logf("%sretry after attempt %d: requested %v, granted %v; observed %v late on the server's clock (%v after the worker saw the attempt before return)",
			prefix, n+1, want[n], s.Granted(), s.Late().Round(time.Microsecond), d.Round(time.Millisecond))
		if g := s.Granted(); g < want[n] || g >= want[n]+grantSlack {
			t.Errorf("%sretry after attempt %d: the server granted %v, requested %v", prefix, n+1, g, want[n])
		}
		if s.Late() < 0 {
			t.Errorf("%sretry after attempt %d started %v before it was due (server clock)", prefix, n+1, -s.Late())
		}
		if !s.Started.Equal(r.Started) {
			t.Errorf("%sretry after attempt %d: the server's start %v, the activity's %v", prefix, n+1, s.Started, r.Started)
		}
	}
}

// TestServerDefaultTimerShift is the early-timer probe on a server left at
// its default history.timerProcessorMaxTimeShift of 1s, with four retries
// that ask for NextRetryDelay 300ms. None comes early, but the timer is
// moved past the timer queue's read level, up to 1s ahead (RK-141): at
// least one of the four must come 300ms late or more, where
// TestServerDelays, on a server with a 10ms shift, sees a few ms.
func TestServerDefaultTimerShift(t *testing.T) {
	ts := newServer(t, 0)
	rk := temporalretry.New(nil)
	e := newEnv(t, ts, 1, rk)
	const want = 300 * time.Millisecond
	const js = `{"max_attempts":5,"initial_interval":"PT0.3S","backoff_strategy":"none","jitter":false}`
	res := e.run(t, "probe", []call{{Type: "scripted", Policy: js, Script: []string{"fail"}}})
	if res[0].Outcome.Reason != "exhausted" || res[0].Outcome.Attempt != 5 {
		t.Errorf("%+v", res[0])
	}
	recs := e.rec.get("probe/0")
	if len(recs) != 5 {
		t.Fatalf("%d attempts", len(recs))
	}
	var late time.Duration
	for n, d := range gaps(recs) {
		t.Logf("default timer shift: retry after attempt %d: requested %v, observed %v", n+1, want, d.Round(time.Millisecond))
		if d < want {
			t.Errorf("retry after attempt %d early: %v < %v", n+1, d, want)
		}
		late = max(late, d-want)
	}
	if late < 300*time.Millisecond {
		t.Errorf("with the default timer shift no retry came 300ms late or more (at most %v): the cause of RK-141 has changed", late)
	}
}

// TestServerDecisions checks each way an activity can end, on the server.
func TestServerDecisions(t *testing.T) {
	ts := newServer(t, timerShift)
	def := mustPolicy(t, `{"max_attempts":4,"initial_interval":"PT0.05S","jitter":false,"non_retryable_errors":["validation.bad_input","auth.*"]}`)
	typed := mustPolicy(t, `{"max_attempts":2,"initial_interval":"PT0.05S","jitter":false,"on_exhaustion":"dead_letter"}`)
	rk := temporalretry.New(def, temporalretry.WithActivityPolicy("typed", typed))
	e := newEnv(t, ts, 2, rk)
	calls := []struct {
		call
		value    string // "" when it must fail
		attempts int
		action   string
		reason   string
		state    enumspb.RetryState
	}{
		{call{Type: "scripted", Script: []string{"fail", "fail", "ok"}, WorkflowNonRetryable: []string{"some.type"}}, "done at 3", 3, "", "", 0},
		{call{Type: "scripted", Script: []string{"fail"}}, "", 4, "discard", "exhausted", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "scripted", Script: []string{"fail", "type:validation.bad_input"}}, "", 2, "discard", "non_retryable", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "scripted", Script: []string{"type:auth.token.expired"}}, "", 1, "discard", "non_retryable", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "scripted", Script: []string{"type:authx", "ok"}}, "done at 2", 2, "", "", 0},
		{call{Type: "scripted", Script: []string{"fail", "code:DEAD_LETTER"}}, "", 2, "dead_letter", "handler_code", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "scripted", Script: []string{"code:DISCARD"}}, "", 1, "discard", "handler_code", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "typed", Script: []string{"fail"}}, "", 2, "dead_letter", "exhausted", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "typed", Policy: `{"max_attempts":3,"initial_interval":"PT0.05S","jitter":false}`, Script: []string{"fail"}}, "", 3, "discard", "exhausted", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
		{call{Type: "scripted", Policy: `{"max_attempts":1}`, Script: []string{"fail"}}, "", 1, "discard", "exhausted", enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE},
	}
	var cs []call
	for _, c := range calls {
		cs = append(cs, c.call)
	}
	res := e.run(t, "decisions", cs)
	// MaximumAttempts the workflow side set: the default policy's 4, the
	// type's 2, or the call policy's.
	wantMax := []int32{4, 4, 4, 4, 4, 4, 4, 2, 3, 1}
	for i, c := range calls {
		id := fmt.Sprint(i)
		r := res[i]
		sched, _, _ := e.activityEvents(t, "decisions", id)
		rp := sched.GetActivityTaskScheduledEventAttributes().GetRetryPolicy()
		if rp.GetMaximumAttempts() != wantMax[i] {
			t.Errorf("call %d: scheduled MaximumAttempts %d, want %d", i, rp.GetMaximumAttempts(), wantMax[i])
		}
		if got := fmt.Sprint(rp.GetNonRetryableErrorTypes()); got != fmt.Sprint(c.WorkflowNonRetryable) {
			t.Errorf("call %d: scheduled NonRetryableErrorTypes %s, want the workflow's %v", i, got, c.WorkflowNonRetryable)
		}
		recs := e.rec.get("decisions/" + id)
		if len(recs) != c.attempts {
			t.Errorf("call %d %v: %d attempts ran, want %d", i, c.Script, len(recs), c.attempts)
		}
		_, started, closed := e.activityEvents(t, "decisions", id)
		if got := started.GetActivityTaskStartedEventAttributes().GetAttempt(); got != int32(c.attempts) {
			t.Errorf("call %d: history's last attempt %d, want %d", i, got, c.attempts)
		}
		if c.value != "" {
			if r.Value != c.value || r.Err != "" || closed.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
				t.Errorf("call %d: value %q err %q event %v, want %q", i, r.Value, r.Err, closed.GetEventType(), c.value)
			}
			continue
		}
		if !r.HasOut || r.Outcome.Action != c.action || r.Outcome.Reason != c.reason || r.Outcome.Attempt != c.attempts {
			t.Errorf("call %d %v: outcome %+v (%v), want %s/%s at %d: %s", i, c.Script, r.Outcome, r.HasOut, c.action, c.reason, c.attempts, r.Err)
		}
		fa := closed.GetActivityTaskFailedEventAttributes()
		if fa == nil || fa.GetRetryState() != c.state {
			t.Errorf("call %d: history closes with %v, retry state %v", i, closed.GetEventType(), fa.GetRetryState())
		}
		if wantMsg := "temporalretry: " + c.action + " (" + c.reason + ")"; fa.GetFailure().GetMessage() != wantMsg || !strings.Contains(fa.GetFailure().GetCause().GetMessage(), fmt.Sprint(c.attempts)) {
			t.Errorf("call %d: history failure %q cause %q", i, fa.GetFailure().GetMessage(), fa.GetFailure().GetCause().GetMessage())
		}
	}
}

// TestServerHugeErrorIsAnAttempt: an activity error far over Temporal's
// size limits still counts as the attempt it is, with its OJS type kept.
// Before, a 2.5 MB error was replaced by the server with a non-retryable
// "Failure exceeds size limit." (one attempt of three ran), and a 5 MiB
// one could not be sent at all: each attempt ended at its StartToClose
// timeout and the error was lost.
func TestServerHugeErrorIsAnAttempt(t *testing.T) {
	ts := newServer(t, timerShift)
	e := newEnv(t, ts, 1, temporalretry.New(nil))
	pol := `{"max_attempts":3,"initial_interval":"PT0.05S","jitter":false}`
	sizes := []int{2_500_000, 5 << 20}
	var calls []call
	for _, n := range sizes {
		calls = append(calls, call{Type: "scripted", Policy: pol, Script: []string{"big:" + strconv.Itoa(n) + ":external.timeout"}})
	}
	res := e.run(t, "huge", calls)
	for i, n := range sizes {
		id := fmt.Sprint(i)
		r := res[i]
		if recs := e.rec.get("huge/" + id); len(recs) != 3 {
			t.Errorf("%d-byte error: %d attempts ran, want 3", n, len(recs))
		}
		if !r.HasOut || r.Outcome.Action != "discard" || r.Outcome.Reason != "exhausted" || r.Outcome.Attempt != 3 ||
			r.Outcome.ErrorType != "external.timeout" || r.Outcome.CutFrom < n {
			t.Errorf("%d-byte error: outcome %+v (%v), want discard/exhausted at 3 of type external.timeout, cut from %d bytes: %.300s", n, r.Outcome, r.HasOut, n, r.Err)
		}
		_, _, closed := e.activityEvents(t, "huge", id)
		f := closed.GetActivityTaskFailedEventAttributes().GetFailure()
		// The closing failure keeps the OJS type; its cause is the third
		// attempt's error, cut to fit (temporalretry.MaxFailureBytes).
		if cause := f.GetCause().GetMessage(); f.GetApplicationFailureInfo().GetType() != "external.timeout" ||
			!strings.Contains(cause, "big failure 3: xxx") || len(cause) > temporalretry.MaxFailureBytes {
			t.Errorf("%d-byte error: history failure %.200q type %q cause %.200q", n, f.GetMessage(), f.GetApplicationFailureInfo().GetType(), f.GetCause().GetMessage())
		}
	}
}

// TestServerLoad runs 1 000 activities over four workers: a third fail
// twice then succeed, a tenth are non-retryable at once, the rest succeed
// at once. Every one must reach its terminal state with the expected
// number of attempts, and none may run after it.
func TestServerLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ts := newServer(t, timerShift)
	rk := temporalretry.New(mustPolicy(t, `{"max_attempts":5,"initial_interval":"PT0.05S","jitter":true,"non_retryable_errors":["load.*"]}`))
	e := newEnv(t, ts, 4, rk)
	const workflows, perWorkflow = 20, 50
	type expect struct {
		ok       bool
		attempts int
	}
	plan := func(i int) (call, expect) {
		switch {
		case i%10 == 0:
			return call{Type: "scripted", Script: []string{"type:load.bad"}}, expect{false, 1}
		case i%3 == 0:
			return call{Type: "scripted", Script: []string{"fail", "fail", "ok"}}, expect{true, 3}
		}
		return call{Type: "scripted", Script: []string{"ok"}}, expect{true, 1}
	}
	start := time.Now()
	var wg sync.WaitGroup
	results := make([][]result, workflows)
	for w := range workflows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cs []call
			for j := range perWorkflow {
				c, _ := plan(w*perWorkflow + j)
				cs = append(cs, c)
			}
			results[w] = e.run(t, fmt.Sprintf("load-%d", w), cs)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var completed, failed, executions int
	for w := range workflows {
		if len(results[w]) != perWorkflow {
			t.Fatalf("workflow %d returned %d results", w, len(results[w]))
		}
		for j, r := range results[w] {
			_, want := plan(w*perWorkflow + j)
			recs := e.rec.get(fmt.Sprintf("load-%d/%d", w, j))
			executions += len(recs)
			if len(recs) != want.attempts {
				t.Errorf("load-%d/%d: %d executions, want %d", w, j, len(recs), want.attempts)
			}
			switch {
			case want.ok && r.Value == fmt.Sprintf("done at %d", want.attempts) && r.Err == "":
				completed++
			case !want.ok && r.Outcome.Reason == "non_retryable" && r.Outcome.Attempt == 1:
				failed++
			default:
				t.Errorf("load-%d/%d: %+v, want %+v", w, j, r, want)
			}
		}
	}
	// Nothing ran after its terminal state: no attempt recorded once the
	// workflows returned (checked again after a pause).
	time.Sleep(300 * time.Millisecond)
	var after int
	for w := range workflows {
		for j := range perWorkflow {
			after += len(e.rec.get(fmt.Sprintf("load-%d/%d", w, j)))
		}
	}
	t.Logf("load: %d activities, %d completed, %d failed for good, %d executions, in %v", workflows*perWorkflow, completed, failed, executions, elapsed.Round(time.Millisecond))
	if completed+failed != workflows*perWorkflow || after != executions {
		t.Errorf("completed %d + failed %d of %d; executions %d then %d", completed, failed, workflows*perWorkflow, executions, after)
	}
}
