package retrykit_test

import (
	"fmt"
	"io/fs"

	"github.com/retrykit/retrykit"
)

// The embedded vectors are ordinary files: list the vector files.
func ExampleVectors() {
	names, err := fs.Glob(retrykit.Vectors, "*.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range names {
		fmt.Println(n)
	}
	// Output:
	// decide.json
	// delay.json
	// duration.json
	// extension_decide.json
	// match.json
	// replay.json
	// timeout_decide.json
	// timeout_expiry.json
	// validate.json
	// vector.schema.json
}
