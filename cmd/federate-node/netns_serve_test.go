//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// The commands of docs/three-hosts.md that TestThreeHosts runs, as the
// page shows them; the test fails when the page no longer does.
const (
	threeHostsVersion = "federate-node version"
	threeHostsServe   = "federate-node serve -gossip 0.0.0.0:7946 -seeds hostA:7946,hostB:7946 -iface eth0 -ttl 1 -profile lan"
	threeHostsMonitor = "federate-node monitor -federation demo -gossip 0.0.0.0:0 -seeds hostA:7946,hostB:7946 -iface eth0 -ttl 1 -profile lan -http 127.0.0.1:8080"
)

// TestThreeHosts walks docs/three-hosts.md in three network namespaces
// standing for hostA, hostB and hostC on one LAN (an eth0 each, one
// bridge, the names in each namespace's /etc/hosts): `serve` as the page
// runs it on each, then a Go Federate Protocol client behind each
// daemon. The three clients create the federation at once: exactly one
// creation succeeds, the others are told it exists, and the three
// federates, joined through their own daemons, hear each other's
// interactions; a monitor joins from hostC. Then the federation is
// destroyed from hostB and created again from hostC.
func TestThreeHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes in network namespaces")
	}
	page, err := os.ReadFile("../../docs/three-hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{threeHostsVersion, threeHostsServe, threeHostsMonitor} {
		if !strings.Contains(string(page), c) {
			t.Errorf("docs/three-hosts.md does not show %q", c)
		}
	}
	nss, addrs := netnsLabIf(t, 3, "eth0")
	hosts := []string{"hostA", "hostB", "hostC"}
	var etcHosts strings.Builder
	for k, a := range addrs {
		fmt.Fprintf(&etcHosts, "%s %s\n", a, hosts[k])
	}
	for _, ns := range nss {
		// ip netns exec mounts /etc/netns/NS/hosts on /etc/hosts.
		dir := filepath.Join("/etc/netns", ns)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot give the namespaces host names: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte("127.0.0.1 localhost\n"+etcHosts.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := nodetest.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	run := func(k int, command string) *proc {
		args := append([]string{"netns", "exec", nss[k], bin}, strings.Fields(command)[1:]...)
		return start(t, ctx, "ip", args...)
	}
	v := run(0, threeHostsVersion)
	v.line(t, "meshrti ", 10*time.Second)
	v.line(t, "wire protocol ", 10*time.Second)
	if err := v.wait(); err != nil {
		t.Fatalf("version: %v", err)
	}
	daemons := make([]*proc, 3)
	for k := range 3 {
		daemons[k] = run(k, threeHostsServe)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for k, d := range daemons {
				t.Logf("%s's daemon logged:\n%s", hosts[k], d.logged(80))
			}
		}
	})
	for k, d := range daemons {
		if got := d.line(t, "gossip ", 20*time.Second); got != addrs[k]+":7946" {
			t.Errorf("%s's daemon gossips at %s, want %s:7946", hosts[k], got, addrs[k])
		}
		want := "hostA:7946"
		if k == 0 {
			want = "this one"
		}
		if got := d.line(t, "founding daemon: ", 5*time.Second); got != want {
			t.Errorf("%s: founding daemon %q, want %q", hosts[k], got, want)
		}
		d.line(t, "serving the Federate Protocol on 127.0.0.1:15164", 5*time.Second)
	}

	// A federate behind each daemon, on its host's loopback.
	clients := make([]*fpClient, 3)
	for k := range 3 {
		conn, err := dialInNetns(nss[k], "127.0.0.1:15164")
		if err != nil {
			t.Fatalf("%s: %v", hosts[k], err)
		}
		c, err := fpclient.Open(conn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		clients[k] = &fpClient{t, c}
		clients[k].ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	createAll := func() []error {
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for k, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[k] = c.Call(serveCreate("demo"))
			}()
		}
		wg.Wait()
		return errs
	}
	created := 0
	for k, err := range createAll() {
		switch {
		case err == nil:
			created++
		case strings.Contains(err.Error(), "FederationExecutionAlreadyExists"):
		default:
			t.Fatalf("create from %s: %v", hosts[k], err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of three simultaneous creations succeeded, want exactly 1", created)
	}
	for k, c := range clients {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
			FederateName: hosts[k], FederateType: "test", FederationName: "demo"}}})
	}
	horn := make([]*pb.InteractionClassHandle, 3)
	for k, c := range clients {
		horn[k] = c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetInteractionClassHandleRequest{GetInteractionClassHandleRequest: &pb.GetInteractionClassHandleRequest{InteractionClassName: "Horn"}}}).GetGetInteractionClassHandleResponse().GetResult()
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeInteractionClassRequest{SubscribeInteractionClassRequest: &pb.SubscribeInteractionClassRequest{InteractionClass: horn[k]}}})
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishInteractionClassRequest{PublishInteractionClassRequest: &pb.PublishInteractionClassRequest{InteractionClass: horn[k]}}})
	}
	heard := func(c *fpClient, from string) bool {
		_, err := c.Conn.Callback("horn of "+from, 50*time.Millisecond, func(cb *pb.CallbackRequest) bool {
			return string(cb.GetReceiveInteraction().GetUserSuppliedTag()) == from
		})
		return err == nil
	}
	// Each sends until every other has heard it: a subscription made a
	// moment ago may not have reached the sender yet.
	deadline := time.Now().Add(30 * time.Second)
	for {
		all := true
		for k, c := range clients {
			for j := range clients {
				if j != k && !heard(c, hosts[j]) {
					all = false
					clients[j].ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{
						InteractionClass: horn[j], ParameterValues: &pb.ParameterHandleValueMap{}, UserSuppliedTag: []byte(hosts[j])}}})
				}
			}
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the federates did not all hear each other within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}

	mon := run(2, threeHostsMonitor)
	mon.line(t, "joined demo as ", 30*time.Second)
	mon.line(t, "monitor on http://127.0.0.1:8080/", 5*time.Second)
	mon.cmd.Process.Signal(os.Interrupt)
	if err := mon.wait(); err != nil {
		t.Errorf("monitor: %v", err)
	}

	for _, c := range clients {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
	}
	clients[1].ok(&pb.CallRequest{CallRequest: &pb.CallRequest_DestroyFederationExecutionRequest{DestroyFederationExecutionRequest: &pb.DestroyFederationExecutionRequest{FederationName: "demo"}}})
	clients[2].ok(serveCreate("demo"))
	for k, d := range daemons {
		d.cmd.Process.Signal(os.Interrupt)
		if err := d.wait(); err != nil {
			t.Errorf("%s's daemon: %v", hosts[k], err)
		}
	}
}

// dialInNetns dials addr over TCP from inside the network namespace ns
// (named as ip netns names it): the socket is made there, and stays
// there whichever thread later uses it.
func dialInNetns(ns, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread enters ns; it is given back to the runtime only once
		// it is back in its own namespace, else it ends with the goroutine.
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer own.Close()
		target, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("entering %s: %w", ns, err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
