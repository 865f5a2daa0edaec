package bench

import (
	"os"
	"testing"

	"github.com/meshrti/meshrti/internal/nodetest"
)

// The tests that run a bench's processes use the built federate-node
// (nodetest): the kinds start children of their own binary.
func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Cleanup()
	os.Exit(code)
}
