package main

import (
	"os"
	"testing"

	"github.com/meshrti/meshrti/internal/nodetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Cleanup()
	os.Exit(code)
}

// buildNode builds federate-node, once for the tests of this process.
func buildNode(t *testing.T) string {
	t.Helper()
	return nodetest.Build(t)
}

// benchJSON runs the built federate-node with args and a multicast port
// of its own (salt keeps two tests of one process apart) and decodes its
// JSON line into v; it skips under -short.
func benchJSON(t *testing.T, v any, salt int, args ...string) []byte {
	t.Helper()
	return nodetest.JSON(t, v, salt, args...)
}

// benchOutput is benchJSON's run: what the command printed.
func benchOutput(t *testing.T, salt int, args ...string) []byte {
	t.Helper()
	return nodetest.Output(t, salt, args...)
}
