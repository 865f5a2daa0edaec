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
