package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The built federate-node, shared by the tests of this package that run
// a bench's processes: the kinds start children of their own binary.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildNode builds cmd/federate-node once into a temporary directory; it
// skips under -short.
func buildNode(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "meshrti-bench-test")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "federate-node")
		cmd := exec.Command("go", "build", "-o", builtBin, "github.com/meshrti/meshrti/cmd/federate-node")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// benchJSON runs the built federate-node with args (benchOutput) and
// decodes its one JSON line into v; it returns the line.
func benchJSON(t *testing.T, v any, salt int, args ...string) []byte {
	t.Helper()
	out := benchOutput(t, salt, args...)
	if err := json.Unmarshal(bytes.TrimSpace(out), v); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	return out
}

// benchOutput runs the built federate-node with args and a multicast port
// of its own (salt keeps two tests of one process apart) and returns what
// it printed.
func benchOutput(t *testing.T, salt int, args ...string) []byte {
	t.Helper()
	bin := buildNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append(args, "-mcast-port", fmt.Sprint(20000+(os.Getpid()+salt)%20000))
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%v: %v\n%s\nstderr:\n%s", args, err, out, stderr)
	}
	return out
}
