package main

import (
	"errors"
	"strings"
	"testing"
)

// Without DATABASE_URL the example says what it needs and how to get it,
// instead of pgx's connection error.
func TestRunWithoutDatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	if err := run(); !errors.Is(err, errNoDatabase) || !strings.Contains(err.Error(), ".ci/services.sh start") {
		t.Errorf("run() = %v, want errNoDatabase with the set-up command", err)
	}
}

// A server that does not answer is named as such.
func TestRunUnreachableDatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err := run(); err == nil || !strings.Contains(err.Error(), "cannot reach the PostgreSQL server of DATABASE_URL") {
		t.Errorf("run() = %v, want a 'cannot reach' error", err)
	}
}
