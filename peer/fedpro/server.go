package fedpro

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/meshrti/meshrti/peer/fedpro/session"
)

// Serve serves the Federate Protocol on l until ctx ends or l fails: a
// session server made with cfg (NewServer) whose sessions are h's. When
// ctx ends it closes the server (every session ends: its federate
// resigns per its directive) and returns nil; h stays open.
//
//	host := fedpro.NewHost(fedpro.Config{Base: base})
//	defer host.Close()
//	l, err := net.Listen("tcp", "127.0.0.1:15164")
//	...
//	err = host.Serve(ctx, l, session.Config{})
func (h *Host) Serve(ctx context.Context, l net.Listener, cfg session.Config) error {
	srv := h.NewServer(cfg)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		srv.Close()
		return err
	case <-ctx.Done():
		srv.Close()
		if err := <-done; !errors.Is(err, session.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// NewServer returns a session server (package session: framing,
// sequence numbers, heartbeats, resume) whose sessions are h's: each
// session the server opens is a Session of h (NewQueuedSession), named
// in the log by its session id. Serve it on as many listeners as wanted
// (TCP and TLS); Close it before h.
func (h *Host) NewServer(cfg session.Config) *session.Server {
	return session.NewServer(cfg, hostHandler{h})
}

// hostHandler adapts a Host to the session layer (session.Handler).
type hostHandler struct{ host *Host }

func (h hostHandler) Open(s *session.Session) (session.SessionHandler, error) {
	fs := h.host.NewQueuedSession(s)
	if fs == nil {
		return nil, fmt.Errorf("%w: the daemon is stopping", session.ErrOutOfResources)
	}
	fs.SetLogName(fmt.Sprintf("session %016x", s.ID()))
	return sessionHandler{fs}, nil
}

// sessionHandler adapts a Session to the session layer
// (session.SessionHandler).
type sessionHandler struct{ s *Session }

func (h sessionHandler) Call(payload []byte) []byte { return h.s.Call(payload) }
func (h sessionHandler) Closed(reason error)        { h.s.Close(reason) }

// Quick (session.QuickCaller): updates and interactions run on the
// connection's reader.
func (h sessionHandler) Quick(payload []byte) bool { return h.s.Quick(payload) }

// CallbackResponse (session.CallbackResponder) ends the pending states
// of the callbacks the client has answered.
func (h sessionHandler) CallbackResponse(seq uint32, payload []byte) {
	h.s.CallbackResponse(seq, payload)
}
