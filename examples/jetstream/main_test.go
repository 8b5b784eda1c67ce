package main

import (
	"errors"
	"strings"
	"testing"
)

// Without NATS_URL the example says what it needs and how to get it.
func TestRunWithoutServer(t *testing.T) {
	t.Setenv("NATS_URL", "")
	if err := run(); !errors.Is(err, errNoServer) || !strings.Contains(err.Error(), "nats-server -js") {
		t.Errorf("run() = %v, want errNoServer with the set-up command", err)
	}
}

// A server that does not answer is named as such.
func TestRunUnreachableServer(t *testing.T) {
	t.Setenv("NATS_URL", "nats://127.0.0.1:1")
	if err := run(); err == nil || !strings.Contains(err.Error(), "cannot reach the nats-server") {
		t.Errorf("run() = %v, want a 'cannot reach' error", err)
	}
}
