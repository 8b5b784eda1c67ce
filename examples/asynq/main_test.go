package main

import (
	"errors"
	"strings"
	"testing"
)

// Without REDIS_ADDR the example says what it needs and how to get it.
func TestRunWithoutRedis(t *testing.T) {
	t.Setenv("REDIS_ADDR", "")
	if err := run(); !errors.Is(err, errNoRedis) || !strings.Contains(err.Error(), ".ci/services.sh start") {
		t.Errorf("run() = %v, want errNoRedis with the set-up command", err)
	}
}

// A server that does not answer is named as such.
func TestRunUnreachableRedis(t *testing.T) {
	t.Setenv("REDIS_ADDR", "127.0.0.1:1")
	if err := run(); err == nil || !strings.Contains(err.Error(), "cannot reach the Redis server") {
		t.Errorf("run() = %v, want a 'cannot reach' error", err)
	}
}
