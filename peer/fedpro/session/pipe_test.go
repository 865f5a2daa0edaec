package session

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out in-memory connections (net.Pipe), so a Server
// can run inside a synctest bubble, in virtual time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial() (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestResumeWindowDefault checks the default window in virtual time: a
// session dropped for 59 s resumes, one dropped for 60 s is gone.
func TestResumeWindowDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newTestHandler()
		l := newPipeListener()
		srv := NewServer(Config{Logf: t.Logf}, h)
		serveErr := make(chan error, 1)
		go func() { serveErr <- srv.Serve(l) }()

		f := &fed{t: t, seq: 1, lastHLA: tNone, dial: l.dial}
		if err := f.redial(); err != nil {
			t.Fatal(err)
		}
		f.mustOpen()
		ts := h.next(t)
		ts.s.PushCallback([]byte("before"))
		f.expect(tCallbackRequest, 2)

		f.nc.Close()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := srv.Sessions(); n != 1 {
			t.Fatalf("Sessions() = %d after 59 s", n)
		}
		ts.s.PushCallback([]byte("while away"))
		// The resume status takes the next number; the replay keeps the
		// numbers its messages had.
		if m := f.resume(1); m.u32(0) != 0 || m.seq != 4 {
			t.Fatalf("resume after 59 s: %v", m)
		}
		if m := f.expect(tCallbackRequest, 3); string(m.body) != "while away" {
			t.Errorf("replayed %v", m)
		}

		f.nc.Close()
		synctest.Wait() // the server notices the drop at once
		time.Sleep(DefaultResumeWindow - time.Nanosecond)
		synctest.Wait()
		if n := ts.nClose.Load(); n != 0 {
			t.Fatal("session closed before the window passed")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		select {
		case err := <-ts.closed:
			if !errors.Is(err, ErrExpired) {
				t.Fatalf("Closed(%v), want ErrExpired", err)
			}
		default:
			t.Fatal("session not closed when the window passed")
		}
		if m := f.resume(tNone); m.u32(0) != 1 {
			t.Errorf("resume after expiry: %v", m)
		}
		f.nc.Close()
		srv.Close()
		if err := <-serveErr; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve = %v", err)
		}
		// synctest.Test fails if a goroutine of the bubble is left.
	})
}

func TestTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHandler()
	srv := serveOn(t, Config{}, h, l)
	roots := x509.NewCertPool()
	parsed, _ := x509.ParseCertificate(der)
	roots.AddCert(parsed)
	f := &fed{t: t, seq: 1, lastHLA: tNone, dial: func() (net.Conn, error) {
		return tls.Dial("tcp", srv.addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	}}
	if err := f.redial(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.nc.Close() })
	f.mustOpen()
	ts := h.next(t)
	seq := f.mustSend(tCallRequest, []byte("over TLS"))
	if m := f.expect(tCallResponse, 2); m.u32(0) != seq || string(m.body[4:]) != "re:over TLS" {
		t.Errorf("got %v", m)
	}
	// Resume works over TLS too.
	ts.s.PushCallback([]byte("cb"))
	if m := f.resume(1); m.u32(0) != 0 {
		t.Fatalf("resume: %v", m)
	}
	f.expect(tCallbackRequest, 3)
}
