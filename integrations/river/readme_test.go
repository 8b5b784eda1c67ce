package riverretry_test

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// readmeSnippet is the main README's River fragment ("Integrations"), line
// for line (TestSnippetsMarked in the root module checks that), so that it
// compiles with this module.
func readmeSnippet(pool *pgxpool.Pool, config *river.Config, policyJSON []byte) error {
	rk, err := riverretry.Parse(policyJSON) // e.g. {"max_attempts":5,"initial_interval":"PT2S"}
	if err != nil {
		return err
	}
	rk.Install(config) // config *river.Config: sets RetryPolicy, adds the plugin
	client, err := river.NewClient(riverpgxv5.New(pool), config)
	var _ *river.Client[pgx.Tx] = client
	return err
}

var _ = readmeSnippet
