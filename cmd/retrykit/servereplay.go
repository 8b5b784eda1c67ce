package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/bounded"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/replay"
)

// queueRules is the repeatable --queue-replay-rules QUEUE=FILE flag.
type queueRules []string

func (q *queueRules) String() string     { return strings.Join(*q, ",") }
func (q *queueRules) Set(v string) error { *q = append(*q, v); return nil }

// readRules reads a replay_rules document (ojs-dead-letter §7.1) from path,
// bounded as every file retrykit reads.
func readRules(path string) (*replay.Rules, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := bounded.Read(f, replay.MaxDocumentSize)
	if err != nil {
		return nil, err
	}
	return replay.Parse(data)
}

// replayOptions turns --replay-rules and --queue-replay-rules into executor
// options; the error names the flag and the file.
func replayOptions(all string, perQueue queueRules) ([]executor.Option, error) {
	var opts []executor.Option
	if all != "" {
		rs, err := readRules(all)
		if err != nil {
			return nil, fmt.Errorf("--replay-rules %s: %w", all, err)
		}
		if err := ruleQueues(rs, ""); err != nil {
			return nil, fmt.Errorf("--replay-rules %s: %w", all, err)
		}
		opts = append(opts, executor.WithReplayRules(rs))
	}
	seen := map[string]bool{}
	for _, v := range perQueue {
		q, path, ok := strings.Cut(v, "=")
		if !ok || q == "" || path == "" {
			return nil, fmt.Errorf("--queue-replay-rules: want QUEUE=FILE, got %q", v)
		}
		if err := ojshttp.CheckQueueName(q); err != nil {
			return nil, fmt.Errorf("--queue-replay-rules %s: %w", v, err)
		}
		if seen[q] {
			return nil, fmt.Errorf("--queue-replay-rules: queue %q given twice", q)
		}
		seen[q] = true
		rs, err := readRules(path)
		if err == nil {
			err = ruleQueues(rs, q)
		}
		if err != nil {
			return nil, fmt.Errorf("--queue-replay-rules %s: %w", v, err)
		}
		opts = append(opts, executor.WithQueueReplayRules(q, rs))
	}
	return opts, nil
}

// ruleQueues refuses a rule whose filter.queue no job of the server can be
// in: not a valid queue name, or, in the rules of queue (non-empty), another
// queue than it.
func ruleQueues(rs *replay.Rules, queue string) error {
	for i, r := range rs.Rules() {
		fq := r.Filter.Queue
		if fq == "" {
			continue
		}
		at := "replay_rules[" + strconv.Itoa(i) + "].filter.queue"
		if err := ojshttp.CheckQueueName(fq); err != nil {
			return fmt.Errorf("%s: %w; the rule could never match", at, err)
		}
		if queue != "" && fq != queue {
			return fmt.Errorf("%s: %q in the rules of queue %q; the rule could never match", at, fq, queue)
		}
	}
	return nil
}
