//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/netns"
	"github.com/meshrti/meshrti/internal/nodetest"
)

// netnsRoutedLab builds two subnets, 10.214.1.0/24 and 10.214.2.0/24,
// each a bridge in a router namespace that forwards IPv4 between them
// (ip_forward on) and runs no multicast routing, and perSubnet node
// namespaces in each, whose veth0 sits on its subnet's bridge with the
// router as default gateway. It returns the node namespaces and their
// addresses, subnet 1's first. Nothing is created in, or routed to, the
// root namespace. It skips where namespaces cannot be made.
func netnsRoutedLab(t *testing.T, perSubnet int) (nss, addrs []string) {
	t.Helper()
	prefix, keep, must := netnsSetup(t, "routed multi-host test", "rt")
	rt := prefix + "rt"
	must("-n", rt, "link", "set", "lo", "up")
	for s := 1; s <= 2; s++ {
		br := fmt.Sprintf("br%d", s)
		if _, err := netns.IP("-n", rt, "link", "add", br, "type", "bridge", "mcast_snooping", "0"); err != nil {
			t.Skipf("cannot create a bridge here: %v", err)
		}
		must("-n", rt, "addr", "add", fmt.Sprintf("10.214.%d.1/24", s), "dev", br)
		must("-n", rt, "link", "set", br, "up")
	}
	if out, err := exec.Command("ip", "netns", "exec", rt, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
		t.Skipf("cannot turn forwarding on in the router namespace: %v: %s", err, out)
	}
	for s := 1; s <= 2; s++ {
		for k := 1; k <= perSubnet; k++ {
			ns := fmt.Sprintf("%ss%dn%d", prefix, s, k)
			addr := fmt.Sprintf("10.214.%d.%d", s, 10+k)
			must("netns", "add", ns)
			keep(ns)
			port := fmt.Sprintf("s%dp%d", s, k)
			if _, err := netns.IP("-n", ns, "link", "add", "veth0", "type", "veth", "peer", "name", port, "netns", rt); err != nil {
				t.Skipf("cannot create veth pairs here: %v", err)
			}
			must("-n", rt, "link", "set", port, "master", fmt.Sprintf("br%d", s))
			must("-n", rt, "link", "set", port, "up")
			must("-n", ns, "link", "set", "lo", "up")
			must("-n", ns, "addr", "add", addr+"/24", "dev", "veth0")
			must("-n", ns, "link", "set", "veth0", "up")
			must("-n", ns, "route", "add", "default", "via", fmt.Sprintf("10.214.%d.1", s))
			must("-n", ns, "route", "add", "224.0.0.0/4", "dev", "veth0")
			nss = append(nss, ns)
			addrs = append(addrs, addr)
		}
	}
	return nss, addrs
}

// TestMultiHostRouted: four federate-node processes, two in each of two
// subnets joined by a router that forwards unicast and no multicast,
// run a time-stepped scenario. With -transport unicast, and with auto
// (which probes multicast among the four, finds it does not cross the
// router and falls back to unicast), the run completes with every
// update delivered exactly once, in order, although a node of the
// second subnet is killed mid-run. With -transport multicast it cannot:
// gossip crosses the router, the data plane does not, and no node ever
// hears the other subnet's federates.
func TestMultiHostRouted(t *testing.T) {
	const perSubnet = 2
	if testing.Short() {
		t.Skip("builds and runs processes in network namespaces")
	}
	nss, addrs := netnsRoutedLab(t, perSubnet)
	bin := nodetest.Build(t)
	for _, mode := range []string{"unicast", "auto"} {
		t.Run(mode, func(t *testing.T) { runRouted(t, bin, nss, addrs, mode) })
	}
	t.Run("multicast", func(t *testing.T) { runRoutedMulticast(t, bin, nss, addrs) })
}

// routedArgs are the arguments of node k of a routed run.
func routedArgs(bin string, nss, addrs []string, k int, federation, mode string, steps int, timeout time.Duration) []string {
	a := []string{"netns", "exec", nss[k], bin, "node", "-role", "tick", "-name", fmt.Sprintf("N%d", k+1),
		"-federation", federation, "-gossip", addrs[k] + ":7946", "-transport", mode,
		"-iface", "veth0", "-ttl", "2", "-peers", strconv.Itoa(len(nss)), "-steps", strconv.Itoa(steps),
		"-step-delay", "50ms", "-timeout", timeout.String()}
	if k == 0 {
		return append(a, "-create")
	}
	return append(a, "-seeds", addrs[0]+":7946")
}

func runRouted(t *testing.T, bin string, nss, addrs []string, mode string) {
	const (
		steps    = 20
		killStep = 5
	)
	nodes := len(nss)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	startAt := time.Now()
	name := func(k int) string { return fmt.Sprintf("N%d", k+1) }
	federation := "routed-" + mode
	procs := []*proc{start(t, ctx, "ip", routedArgs(bin, nss, addrs, 0, federation, mode, steps, 40*time.Second)...)}
	if mode == "unicast" {
		if got := strings.TrimSpace(procs[0].line(t, "gossip ", 20*time.Second)); got != addrs[0]+":7946" {
			t.Fatalf("first node's gossip address is %s, want %s:7946", got, addrs[0])
		}
	} else {
		// auto probes once the four have joined: the first node is
		// in its join until then, so the others start without waiting
		// for its "gossip" line, once its gossip member listens.
		waitListening(t, nss[0], 7946, 20*time.Second)
	}
	for k := 1; k < nodes; k++ {
		procs = append(procs, start(t, ctx, "ip", routedArgs(bin, nss, addrs, k, federation, mode, steps, 40*time.Second)...))
	}
	for k, p := range procs {
		// auto settled on unicast: multicast does not cross the router.
		if got := p.line(t, "transport ", 30*time.Second); got != "unicast" {
			t.Fatalf("%s uses transport %q, want unicast", name(k), got)
		}
	}
	killLastAndCheck(t, procs, steps, killStep, name, 30*time.Second)
	t.Logf("%s across a router: %d nodes, %d steps, one killed at step %d: %v", mode, nodes, steps, killStep, time.Since(startAt).Round(time.Millisecond))
}

// runRoutedMulticast shows that multicast does not cross the router:
// within a bound, no node gets ready (it never discovers the other
// subnet's federates), and each gives up.
func runRoutedMulticast(t *testing.T, bin string, nss, addrs []string) {
	const bound = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var procs []*proc
	procs = append(procs, start(t, ctx, "ip", routedArgs(bin, nss, addrs, 0, "routed-multicast", "multicast", 5, bound)...))
	procs[0].line(t, "gossip ", 20*time.Second)
	for k := 1; k < len(nss); k++ {
		procs = append(procs, start(t, ctx, "ip", routedArgs(bin, nss, addrs, k, "routed-multicast", "multicast", 5, bound)...))
	}
	for k, p := range procs {
		var joined, ready bool
		var res tickResult
		for l := range p.lines {
			switch {
			case strings.HasPrefix(l, "joined "):
				joined = true
			case strings.HasPrefix(l, "ready "):
				ready = true
			case strings.HasPrefix(l, "result "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "result ")), &res); err != nil {
					t.Fatalf("N%d: %v", k+1, err)
				}
			}
		}
		err := p.wait()
		t.Logf("N%d with multicast: joined %v, ready %v, exit %v, result %+v", k+1, joined, ready, err, res)
		if !joined {
			t.Errorf("N%d did not join: gossip must cross the router", k+1)
		}
		if ready || err == nil || res.Time != 0 {
			t.Errorf("N%d got ready or finished over multicast across a router (exit %v, time %v)", k+1, err, res.Time)
		}
		// Nothing crossed the router on the data plane.
		other := (1 - k/2) * 2
		for j := other; j < other+2; j++ {
			if res.Reflections[fmt.Sprintf("N%d", j+1)] != 0 {
				t.Errorf("N%d reflected updates of N%d across the router", k+1, j+1)
			}
		}
	}
}

// waitListening waits until something listens on TCP port in namespace
// ns (ss(8) asked through ip netns exec); without ss it waits a second.
func waitListening(t *testing.T, ns string, port int, timeout time.Duration) {
	t.Helper()
	if _, err := exec.LookPath("ss"); err != nil {
		time.Sleep(time.Second)
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command("ip", "netns", "exec", ns, "ss", "-Htln", fmt.Sprintf("sport = :%d", port)).Output()
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on port %d in %s after %v", port, ns, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
