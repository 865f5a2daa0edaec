package fedpro_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/fedpro/session"
)

// Host.Serve serves a listener: a client opens a session and connects;
// when the context ends Serve returns nil, the client's connection is
// closed and its session ended.
func TestHostServe(t *testing.T) {
	h := fedpro.NewHost(fedpro.Config{Base: peer.Config{Control: peer.NewMemRegistry().Control("serve")}})
	defer h.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, l, session.Config{}) }()
	c, err := fpclient.Dial(l.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(fpclient.ConnectCall(nil)); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if st := h.Stats(); st.Sessions != 1 {
		t.Fatalf("%d sessions, want 1", st.Sessions)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	select {
	case <-c.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("the client's connection is still open")
	}
	if st := h.Stats(); st.Sessions != 0 {
		t.Errorf("%d sessions after Serve returned, want 0", st.Sessions)
	}
	if _, err := c.Call(&pb.CallRequest{CallRequest: &pb.CallRequest_DisconnectRequest{DisconnectRequest: &pb.DisconnectRequest{}}}); err == nil {
		t.Error("a call after the server closed succeeded")
	}
}

// Host.Serve returns the listener's error when the listener fails.
func TestHostServeListenerFails(t *testing.T) {
	h := fedpro.NewHost(fedpro.Config{})
	defer h.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := h.Serve(context.Background(), l, session.Config{}); err == nil {
		t.Error("Serve on a closed listener returned nil")
	}
}
