package asynqretry_test

import (
	"github.com/hibiken/asynq"

	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

// readmeSnippet is the main README's asynq fragment ("Integrations"), line
// for line (TestSnippetsMarked in the root module checks that), so that it
// compiles with this module.
func readmeSnippet(policyJSON []byte, redisOpt asynq.RedisClientOpt, mux *asynq.ServeMux) error {
	var cfg asynq.Config
	rk, err := asynqretry.Parse(policyJSON)
	if err != nil {
		return err
	}
	rk.Install(&cfg) // cfg asynq.Config: sets RetryDelayFunc
	srv := asynq.NewServer(redisOpt, cfg)
	err = srv.Run(rk.Handler(mux))
	return err
}

var _ = readmeSnippet
