package policytest_test

import (
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
	"pgregory.net/rapid"
)

func TestSmokeReference(t *testing.T) {
	rapid.Check(t, policytest.Differential(conformance.Reference()))
}

func TestSmokePython(t *testing.T) {
	p := protocol.NewProcess([]string{"python3", "../conformance/adapters/python/adapter.py"})
	defer p.Close()
	for _, op := range policytest.Ops {
		t.Run(op, func(t *testing.T) { rapid.Check(t, policytest.Differential(p, op)) })
	}
}
