//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/netns"
	"github.com/meshrti/meshrti/internal/nodetest"
)

// netnsName matches this test's network namespaces: "mrt<pid>-". A
// leftover namespace of a crashed run is recognized by it and removed
// (netns.RemoveStale).
var netnsName = regexp.MustCompile(`^mrt([0-9]+)-`)

// netnsLab builds n node namespaces, each with a veth0 joined to a bridge
// in a namespace of its own, all on 10.213.1.0/24, and returns the node
// namespaces and their addresses. Nothing is created in, or routed to,
// the root namespace. It skips where namespaces cannot be made.
func netnsLab(t *testing.T, n int) (nss, addrs []string) {
	t.Helper()
	return netnsLabIf(t, n, "veth0")
}

// netnsLabIf is netnsLab with the node namespaces' interface named ifname.
func netnsLabIf(t *testing.T, n int, ifname string) (nss, addrs []string) {
	t.Helper()
	prefix, keep, must := netnsSetup(t, "multi-host test", "br")
	br := prefix + "br"
	must("-n", br, "link", "set", "lo", "up")
	if _, err := netns.IP("-n", br, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"); err != nil {
		t.Skipf("cannot create a bridge here: %v", err)
	}
	must("-n", br, "link", "set", "br0", "up")
	for k := 1; k <= n; k++ {
		ns := fmt.Sprintf("%sn%d", prefix, k)
		addr := fmt.Sprintf("10.213.1.%d", 10+k)
		must("netns", "add", ns)
		keep(ns)
		port := fmt.Sprintf("p%d", k)
		if _, err := netns.IP("-n", ns, "link", "add", ifname, "type", "veth", "peer", "name", port, "netns", br); err != nil {
			t.Skipf("cannot create veth pairs here: %v", err)
		}
		must("-n", br, "link", "set", port, "master", "br0")
		must("-n", br, "link", "set", port, "up")
		must("-n", ns, "link", "set", "lo", "up")
		must("-n", ns, "addr", "add", addr+"/24", "dev", ifname)
		must("-n", ns, "link", "set", ifname, "up")
		must("-n", ns, "route", "add", "224.0.0.0/4", "dev", ifname)
		nss = append(nss, ns)
		addrs = append(addrs, addr)
	}
	return nss, addrs
}

// Four federate-node processes, each in its own network namespace (a
// "host"), joined by veth pairs to one bridge, run a time-stepped scenario
// over real UDP multicast (TTL 1 on veth0) and gossip on their namespace
// addresses. One is killed mid-run; the others must declare it lost, go on
// to the final time, and have received every update of each other and of
// the killed one up to the kill.
func TestMultiHostNetns(t *testing.T) {
	const (
		nodes    = 4
		steps    = 30
		killStep = 5
	)
	if testing.Short() {
		t.Skip("builds and runs processes in network namespaces")
	}
	nss, addrs := netnsLab(t, nodes)
	bin := nodetest.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	startAt := time.Now()
	name := func(k int) string { return fmt.Sprintf("N%d", k+1) }
	args := func(k int) []string {
		a := []string{"netns", "exec", nss[k], bin, "node", "-role", "tick", "-name", name(k),
			"-federation", "netns", "-gossip", addrs[k] + ":7946", "-mcast-port", "47470",
			"-iface", "veth0", "-ttl", "1", "-peers", strconv.Itoa(nodes), "-steps", strconv.Itoa(steps),
			"-step-delay", "50ms", "-timeout", "40s"}
		if k == 0 {
			return append(a, "-create")
		}
		return append(a, "-seeds", addrs[0]+":7946")
	}
	procs := []*proc{start(t, ctx, "ip", args(0)...)}
	if got := strings.TrimSpace(procs[0].line(t, "gossip ", 20*time.Second)); got != addrs[0]+":7946" {
		t.Fatalf("first node's gossip address is %s, want %s:7946", got, addrs[0])
	}
	for k := 1; k < nodes; k++ {
		procs = append(procs, start(t, ctx, "ip", args(k)...))
	}
	// Every node has reached killStep: everything up to it was delivered
	// everywhere. Then the last node dies without a word.
	killLastAndCheck(t, procs, steps, killStep, name, 25*time.Second)
	t.Logf("%d namespaces, %d steps, one node killed at step %d: %v", nodes, steps, killStep, time.Since(startAt).Round(time.Millisecond))
}

// killLastAndCheck waits until every node was granted killStep, kills
// the last one without a word, and checks what each survivor reports:
// all steps granted and sent, the victim lost, every update of a
// survivor reflected exactly once in time-stamp order, and the victim's
// updates 1..m with m >= killStep.
func killLastAndCheck(t *testing.T, procs []*proc, steps, killStep int, name func(int) string, wait time.Duration) {
	t.Helper()
	nodes := len(procs)
	for _, p := range procs {
		p.line(t, fmt.Sprintf("granted %d", killStep), wait)
	}
	victim := nodes - 1
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	procs[victim].wait()
	for k := 0; k < victim; k++ {
		var res tickResult
		if err := json.Unmarshal([]byte(procs[k].line(t, "result ", wait)), &res); err != nil {
			t.Fatalf("%s: %v", name(k), err)
		}
		if err := procs[k].wait(); err != nil {
			t.Errorf("%s: %v", name(k), err)
		}
		t.Logf("%s: %+v", name(k), res)
		if res.Time != float64(steps) || res.Grants != steps || res.Sent != steps {
			t.Errorf("%s reached time %v with %d grants, %d sent; want %d each", name(k), res.Time, res.Grants, res.Sent, steps)
		}
		if !slices.Equal(res.Lost, []string{name(victim)}) {
			t.Errorf("%s lost %v, want [%s]", name(k), res.Lost, name(victim))
		}
		if res.OutOfOrder != 0 {
			t.Errorf("%s: %d reflections out of time-stamp order", name(k), res.OutOfOrder)
		}
		for j := 0; j < nodes; j++ {
			if j == k {
				continue
			}
			n, last := res.Reflections[name(j)], res.LastTime[name(j)]
			switch {
			case j != victim && (n != steps || last != float64(steps)):
				t.Errorf("%s reflected %d updates of %s (last at %v), want %d exactly once each", name(k), n, name(j), last, steps)
			case j == victim && (n < killStep || float64(n) != last):
				t.Errorf("%s reflected %d updates of the killed %s (last at %v), want 1..m with m >= %d", name(k), n, name(j), last, killStep)
			}
		}
	}
}

// netnsSetup skips (naming what is missing) unless namespaces can be made
// here, removes stale ones of earlier runs, and creates the first
// namespace, prefix+first. It returns the prefix of this run's
// namespaces, keep, which has a namespace removed when the test ends (the
// first one is kept so already), and must, which runs ip and fails the
// test on an error.
func netnsSetup(t *testing.T, what, first string) (prefix string, keep func(ns string), must func(args ...string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip(what + " needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip(what + " needs the ip binary (iproute2)")
	}
	netns.RemoveStale(netnsName, false)
	prefix = fmt.Sprintf("mrt%d-", os.Getpid())
	if _, err := netns.IP("netns", "add", prefix+first); err != nil {
		t.Skipf("cannot create network namespaces here: %v", err)
	}
	created := []string{prefix + first}
	t.Cleanup(func() {
		for _, ns := range created {
			netns.Remove(ns)
		}
	})
	keep = func(ns string) { created = append(created, ns) }
	must = func(args ...string) {
		t.Helper()
		if _, err := netns.IP(args...); err != nil {
			t.Fatal(err)
		}
	}
	return prefix, keep, must
}
