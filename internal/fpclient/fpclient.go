package fpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/fedpro/session"
)

// A Conn is a minimal Federate Protocol client: the session layer's
// framing (package session's Header: size, sequence number, session id,
// last received, message type) and the protobuf messages, for `bench
// fedpro` and the tests of `serve` and of package fedpro, which must see
// the wire as a foreign client does.
//
// On the path of an update it does what an efficient client does and no
// more, so that the benches time the daemon, not this client: messages
// are built in one reused buffer (the fixed callback response encoded
// once), the callbacks the caller does not want kept (keepOnly) are
// only handed to onCallback, nothing is allocated to wake a waiter
// unless one waits, and a callback is answered after onCallback has
// made the calls it triggers (sendCall), as Pitch's client answers once
// the federate's callback returns, those calls and the answer in one
// write; the callbacks that end a pending state (a time advance grant,
// regulation or constraint enabled) are answered before onCallback, so
// that a call it makes finds the state over.
type Conn struct {
	conn net.Conn

	// onCallback, when set before the first callback, gets each callback
	// on the reader goroutine. It may send calls with sendCall or
	// callAsync but must not wait: what is sent on the connection while
	// it runs goes out when it returns.
	onCallback func(*pb.CallbackRequest)
	// holdAcks (OpenHoldingAcks) leaves the callbacks unanswered until
	// AckCallback; otherwise each is answered as it comes.
	holdAcks bool

	mu        sync.Mutex
	wmu       sync.Mutex // one message per write, in sequence order
	wbuf      []byte     // the messages being written (wmu)
	queued    int        // bytes of wbuf held while corked (wmu)
	corked    bool       // messages wait in wbuf until uncork (wmu)
	seq       uint32
	session   uint64
	lastRecv  uint32 // the RTI's newest HLA message
	lastSeq   uint32 // the RTI's newest message of any kind
	waiting   map[uint32]chan *pb.CallResponse
	control   []session.MsgType
	wtyp      session.MsgType                // the type of the message being written (wmu)
	keep      func(*pb.CallbackRequest) bool // nil: keep every callback
	callbacks []*pb.CallbackRequest
	cbSeqs    []uint32      // the sequence numbers of callbacks
	unsettled int           // calls of sendCall not yet answered
	err       error         // the first protocol error seen
	broken    chan struct{} // closed when err is set; made by failed
	changed   chan struct{}
	watched   bool // a waiter holds changed: notify must close it
	done      chan struct{}

	callMu sync.Mutex            // callWait: one call at a time
	reply  chan *pb.CallResponse // callWait's, reused
}

// succeeded is the encoding of the CallbackResponse that answers
// every callback: callbackSucceeded, made once.
var succeeded = func() []byte {
	b, err := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackSucceeded{CallbackSucceeded: &pb.CallbackSucceeded{}}})
	if err != nil {
		panic(err)
	}
	return b
}()

// Dial connects and opens a session; onCallback (may be nil) gets
// the callbacks, which are kept too.
func Dial(addr string, onCallback func(*pb.CallbackRequest)) (*Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Open(conn, onCallback)
}

// Open opens a session on conn (TCP, or TLS).
func Open(conn net.Conn, onCallback func(*pb.CallbackRequest)) (*Conn, error) {
	return open(conn, onCallback, false)
}

// OpenHoldingAcks opens a session on conn that leaves the callbacks
// unanswered until AckCallback (the tests of the hand-over).
func OpenHoldingAcks(conn net.Conn) (*Conn, error) { return open(conn, nil, true) }

func open(conn net.Conn, onCallback func(*pb.CallbackRequest), holdAcks bool) (*Conn, error) {
	c := &Conn{conn: conn, onCallback: onCallback, holdAcks: holdAcks, waiting: map[uint32]chan *pb.CallResponse{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.read()
	c.Send(session.MsgNewSession, binary.BigEndian.AppendUint32(nil, 1))
	if err := c.WaitControl(session.MsgNewSessionStatus, 10*time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection and waits for the reader.
func (c *Conn) Close() {
	c.conn.Close()
	<-c.done
}

// KeepOnly keeps from now on only the callbacks keep accepts (for
// Callback and callbackSeq); the others go to onCallback alone.
func (c *Conn) KeepOnly(keep func(*pb.CallbackRequest) bool) {
	c.mu.Lock()
	c.keep = keep
	c.mu.Unlock()
}

// Send writes one message in one write and returns its sequence number.
func (c *Conn) Send(typ session.MsgType, body []byte) uint32 { return c.sendThen(typ, body, nil) }

// sendThen is send, calling before (when set) with the message's
// sequence number before it goes out.
func (c *Conn) sendThen(typ session.MsgType, body []byte, before func(seq uint32)) uint32 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(c.begin(typ), body...)
	return c.finish(before, false)
}

// begin starts a message of type typ in the write buffer (wmu held):
// its header, to be completed by finish, after which the caller appends
// the body.
func (c *Conn) begin(typ session.MsgType) []byte {
	c.wtyp = typ
	return session.AppendHeader(c.wbuf[:c.queued], session.Header{Type: typ})
}

// finish numbers the message in the write buffer, fills in its header
// and writes it (wmu held). before, when set, gets its sequence number
// first; settle counts it as a call of sendCall.
func (c *Conn) finish(before func(seq uint32), settle bool) uint32 {
	c.mu.Lock()
	seq := c.number()
	if before != nil {
		before(seq)
	}
	if settle {
		c.unsettled++
	}
	c.mu.Unlock()
	c.flush()
	return seq
}

// number gives the message in the write buffer the next sequence number
// and fills in its header (wmu and mu held).
func (c *Conn) number() uint32 {
	c.seq++
	h := c.wbuf[c.queued:]
	session.AppendHeader(h[:0], session.Header{Size: uint32(len(h)), Seq: c.seq, SessionID: c.session, LastReceived: c.lastRecv, Type: c.wtyp})
	return c.seq
}

// flush writes the write buffer, or while corked holds it (wmu held).
func (c *Conn) flush() {
	if c.corked {
		c.queued = len(c.wbuf)
		return
	}
	c.queued = 0
	if _, err := c.conn.Write(c.wbuf); err != nil {
		c.fail(fmt.Errorf("write: %w", err))
	}
}

// cork holds the messages sent from now on until uncork, which writes
// them together.
func (c *Conn) cork() {
	c.wmu.Lock()
	c.corked = true
	c.wmu.Unlock()
}

// uncork writes what cork held, in one write.
func (c *Conn) uncork() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.corked = false
	if c.queued > 0 {
		c.wbuf = c.wbuf[:c.queued]
		c.flush()
	}
}

// fail records err, the first error wins, and wakes the waiters.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	c.setErr(err)
	c.mu.Unlock()
	c.notify()
}

// setErr records err unless an error is recorded (c.mu held).
func (c *Conn) setErr(err error) {
	if c.err == nil {
		c.err = err
		if c.broken != nil {
			close(c.broken)
		}
	}
}

// Failed returns a channel closed once the connection has an error (a
// Call of sendCall answered with an exception, a protocol error, the
// connection closed), which Err then returns.
func (c *Conn) Failed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = make(chan struct{})
		if c.err != nil {
			close(c.broken)
		}
	}
	return c.broken
}

// Done returns a channel closed once the connection's reader has ended:
// the connection is closed (by Close, or by the server), and every
// callback it read was handed on.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns the connection's first error, or nil.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// notify wakes whoever waits for a change; with nobody waiting it costs
// nothing.
func (c *Conn) notify() {
	c.mu.Lock()
	if c.watched {
		close(c.changed)
		c.changed = make(chan struct{})
		c.watched = false
	}
	c.mu.Unlock()
}

func (c *Conn) read() {
	defer close(c.done)
	defer c.notify()
	r := bufio.NewReader(c.conn)
	var body []byte
	var settled pb.CallResponse // the answer to a call of sendCall
	for {
		var hb [session.HeaderSize]byte
		if _, err := io.ReadFull(r, hb[:]); err != nil {
			c.fail(fmt.Errorf("read: %w", err))
			return
		}
		h, err := session.ParseHeader(hb[:])
		if err != nil {
			c.fail(err)
			return
		}
		seq, sess, typ := h.Seq, h.SessionID, h.Type
		if h.Size > 64<<20 {
			c.fail(fmt.Errorf("message size %d", h.Size))
			return
		}
		if n := int(h.Size - session.HeaderSize); cap(body) < n {
			body = make([]byte, n)
		} else {
			body = body[:n]
		}
		if _, err := io.ReadFull(r, body); err != nil {
			c.fail(fmt.Errorf("read: %w", err))
			return
		}
		c.mu.Lock()
		if seq != c.lastSeq+1 {
			c.setErr(fmt.Errorf("message type %d numbered %d after %d", typ, seq, c.lastSeq))
		}
		c.lastSeq = seq
		var cb *pb.CallbackRequest
		switch typ {
		case session.MsgNewSessionStatus:
			c.session = sess
			if len(body) < 4 || binary.BigEndian.Uint32(body) != 0 {
				c.setErr(fmt.Errorf("new session refused: % x", body))
			}
			c.control = append(c.control, typ)
		case session.MsgCallResponse:
			c.lastRecv = seq
			if len(body) < 4 {
				c.setErr(errors.New("a call response without the call's number"))
				break
			}
			call := binary.BigEndian.Uint32(body)
			ch := c.waiting[call]
			if ch == nil && c.unsettled > 0 {
				// A call of sendCall: nobody takes the response, but
				// an exception in it is the connection's error.
				c.unsettled--
				settled.Reset()
				if proto.Unmarshal(body[4:], &settled) != nil {
					c.setErr(errors.New("a call response that does not decode"))
				} else if e := settled.GetExceptionData(); e != nil {
					c.setErr(fmt.Errorf("call %d: %s: %s", call, e.GetExceptionName(), e.GetDetails()))
				}
				break
			}
			if ch == nil {
				break // a call nobody waits for
			}
			resp := &pb.CallResponse{}
			if proto.Unmarshal(body[4:], resp) != nil {
				c.setErr(errors.New("a call response that does not decode"))
				break
			}
			delete(c.waiting, call)
			ch <- resp
		case session.MsgCallbackRequest:
			c.lastRecv = seq
			cb = &pb.CallbackRequest{}
			if proto.Unmarshal(body, cb) != nil {
				c.setErr(errors.New("a callback that does not decode"))
				cb = nil
				break
			}
			if c.keep == nil || c.keep(cb) {
				c.callbacks = append(c.callbacks, cb)
				c.cbSeqs = append(c.cbSeqs, seq)
			}
		default:
			c.control = append(c.control, typ)
		}
		handler := c.onCallback
		hold := c.holdAcks
		c.mu.Unlock()
		switch {
		case cb == nil:
		case hold:
			if handler != nil {
				handler(cb)
			}
		case endsPending(cb):
			c.ackSucceeded(seq)
			if handler != nil {
				handler(cb)
			}
		case handler != nil:
			// The calls handler makes go out with the answer, in one
			// write.
			c.cork()
			handler(cb)
			c.ackSucceeded(seq)
			c.uncork()
		default:
			c.ackSucceeded(seq)
		}
		c.notify()
	}
}

// endsPending reports whether cb ends a pending state of the federate's,
// which the daemon holds until the client answers it (docs/fedpro.md).
func endsPending(cb *pb.CallbackRequest) bool {
	return cb.GetTimeAdvanceGrant() != nil || cb.GetTimeRegulationEnabled() != nil || cb.GetTimeConstrainedEnabled() != nil
}

// ackSucceeded answers the callback numbered seq with callbackSucceeded.
func (c *Conn) ackSucceeded(seq uint32) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(binary.BigEndian.AppendUint32(c.begin(session.MsgCallbackResponse), seq), succeeded...)
	c.finish(nil, false)
}

// waitUntil waits until cond (called under the lock) holds, the
// connection fails, or d passes.
func (c *Conn) waitUntil(what string, d time.Duration, cond func() bool) error {
	var deadline *time.Timer
	for {
		c.mu.Lock()
		ok, err := cond(), c.err
		changed := c.changed
		c.watched = c.watched || (!ok && err == nil)
		c.mu.Unlock()
		switch {
		case ok:
			return nil
		case err != nil:
			return err
		}
		if deadline == nil {
			deadline = time.NewTimer(d)
			defer deadline.Stop()
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("no %s in %v", what, d)
		}
	}
}

// WaitControl waits for a control message of type typ.
func (c *Conn) WaitControl(typ session.MsgType, d time.Duration) error {
	return c.waitUntil(fmt.Sprintf("control message %d", typ), d, func() bool {
		for _, x := range c.control {
			if x == typ {
				return true
			}
		}
		return false
	})
}

// SendCall sends a call and does not wait for its response: when it
// comes, an exception in it becomes the connection's error (Err,
// Failed). settled tells when every such call is answered.
func (c *Conn) SendCall(req *pb.CallRequest) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, err := proto.MarshalOptions{}.MarshalAppend(c.begin(session.MsgCallRequest), req)
	if err != nil {
		return err
	}
	c.wbuf = b
	c.finish(nil, true)
	return nil
}

// Settled waits until every call of sendCall is answered, and returns
// the connection's error.
func (c *Conn) Settled(d time.Duration) error {
	return c.waitUntil("call response", d, func() bool { return c.unsettled == 0 })
}

// CallAsync sends a call; its response comes on the returned channel.
func (c *Conn) CallAsync(req *pb.CallRequest) (<-chan *pb.CallResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	ch := make(chan *pb.CallResponse, 1)
	c.sendThen(session.MsgCallRequest, b, func(seq uint32) { c.waiting[seq] = ch })
	return ch, nil
}

// CallWait makes one call and waits for its response, with no timer:
// one call in flight, as the public clients make them (bench fedpro
// -mode throughput); calls of callWait from several goroutines take
// turns. An exception is returned as the response.
func (c *Conn) CallWait(ctx context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if c.reply == nil {
		c.reply = make(chan *pb.CallResponse, 1)
	}
	c.wmu.Lock()
	b, err := proto.MarshalOptions{}.MarshalAppend(c.begin(session.MsgCallRequest), req)
	if err != nil {
		c.wmu.Unlock()
		return nil, err
	}
	c.wbuf = b
	seq := c.finishCall(c.reply)
	c.wmu.Unlock()
	select {
	case resp := <-c.reply:
		return resp, nil
	case <-c.done:
		select {
		case resp := <-c.reply:
			return resp, nil
		default:
		}
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("connection closed: %w", err)
	case <-ctx.Done():
		// The response may still come: it goes to a channel of its
		// own, and reply stays empty for the next call.
		c.mu.Lock()
		if _, ok := c.waiting[seq]; ok {
			c.waiting[seq] = make(chan *pb.CallResponse, 1)
		} else {
			<-c.reply // delivered under c.mu before the entry went
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// finishCall is finish for a call whose response goes to ch.
func (c *Conn) finishCall(ch chan *pb.CallResponse) uint32 {
	c.mu.Lock()
	seq := c.number()
	c.waiting[seq] = ch
	c.mu.Unlock()
	c.flush()
	return seq
}

// Call makes one call and returns its response: an exception is an
// error.
func (c *Conn) Call(req *pb.CallRequest) (*pb.CallResponse, error) {
	ch, err := c.CallAsync(req)
	if err != nil {
		return nil, err
	}
	var resp *pb.CallResponse
	err = c.waitUntil("call response", 30*time.Second, func() bool {
		select {
		case resp = <-ch:
			return true
		default:
			return false
		}
	})
	if err != nil {
		return nil, err
	}
	if e := resp.GetExceptionData(); e != nil {
		return resp, fmt.Errorf("%s: %s", e.GetExceptionName(), e.GetDetails())
	}
	return resp, nil
}

// Callback waits for the first kept callback match accepts.
func (c *Conn) Callback(what string, d time.Duration, match func(*pb.CallbackRequest) bool) (*pb.CallbackRequest, error) {
	var got *pb.CallbackRequest
	err := c.waitUntil(what+" callback", d, func() bool {
		for _, cb := range c.callbacks {
			if match(cb) {
				got = cb
				return true
			}
		}
		return false
	})
	return got, err
}

// CallbackSeq returns the sequence number of a kept callback.
func (c *Conn) CallbackSeq(cb *pb.CallbackRequest) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.callbacks {
		if x == cb {
			return c.cbSeqs[i]
		}
	}
	return 0
}

// AckCallback answers the callback numbered seq (holdAcks): as Pitch's
// clients do, a HLA_CALLBACK_RESPONSE carrying seq and a
// CallbackResponse, or with bare as MAK's client does, a bare header
// numbered seq.
func (c *Conn) AckCallback(seq uint32, bare bool) {
	if !bare {
		c.ackSucceeded(seq)
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = c.begin(session.MsgCallbackResponse)
	h := c.wbuf[c.queued:]
	c.mu.Lock()
	session.AppendHeader(h[:0], session.Header{Size: session.HeaderSize, Seq: seq, SessionID: c.session, LastReceived: c.lastRecv, Type: session.MsgCallbackResponse})
	c.mu.Unlock()
	c.flush()
}

// DialTLS connects to a `serve` TLS listener and opens a session.
// cfg says which servers to trust (RootCAs, ServerName) and, for a
// daemon with -client-ca, the client certificate (Certificates). A
// daemon that refuses the certificate fails the handshake: with TLS 1.3
// the client learns it only at its first read, so the error may come
// from opening the session.
func DialTLS(addr string, cfg *tls.Config, onCallback func(*pb.CallbackRequest)) (*Conn, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	return Open(conn, onCallback)
}

// ConnectCall is the Connect call carrying creds: Connect With
// Credentials, or plain Connect when creds is nil.
func ConnectCall(creds *pb.Credentials) *pb.CallRequest {
	if creds == nil {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}
	}
	return &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithCredentialsRequest{ConnectWithCredentialsRequest: &pb.ConnectWithCredentialsRequest{Credentials: creds}}}
}

// ConnectWithPassword connects the session with HLA 4 plain-text
// password credentials, as Pitch's and MAK's clients send them.
func (c *Conn) ConnectWithPassword(password string) error {
	_, err := c.Call(ConnectCall(fedpro.PlainTextPassword(password)))
	return err
}
