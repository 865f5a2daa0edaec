package nodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// Build builds cmd/federate-node into a temporary directory, once per
// test process, and returns the binary's path; it skips under -short.
// Cleanup removes the directory when the tests are done.
func Build(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "meshrti-federate-node")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "federate-node")
		cmd := exec.Command("go", "build", "-o", built, "github.com/meshrti/meshrti/cmd/federate-node")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return built
}

// Cleanup removes what Build made; a TestMain calls it after the tests.
func Cleanup() {
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
}

// Output runs the built federate-node with args and a multicast port of
// its own (salt keeps two tests of one process apart) and returns what
// it printed on stdout; a failed run fails the test with its stderr.
func Output(t testing.TB, salt int, args ...string) []byte {
	t.Helper()
	bin := Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append(args, "-mcast-port", fmt.Sprint(20000+(os.Getpid()+salt)%20000))
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr // Output keeps it for the error
		}
		t.Fatalf("%v: %v\n%s\nstderr:\n%s", args, err, out, stderr)
	}
	return out
}

// JSON runs the built federate-node as Output does and decodes its one
// line of JSON into v; it returns the line.
func JSON(t testing.TB, v any, salt int, args ...string) []byte {
	t.Helper()
	out := Output(t, salt, args...)
	if err := json.Unmarshal(bytes.TrimSpace(out), v); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	return out
}

// FreeUDPPort returns a UDP port that is free on loopback now.
func FreeUDPPort(t testing.TB) string {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return fmt.Sprint(c.LocalAddr().(*net.UDPAddr).Port)
}
