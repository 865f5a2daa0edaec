package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// fpConn is a minimal Federate Protocol client: its own framing (the
// 24-byte big-endian header: size, sequence number, session id, last
// received, message type) and the protobuf messages, for `bench fedpro`
// and the tests of `serve`, which must see the wire as a foreign client
// does.
type fpConn struct {
	conn net.Conn

	// onCallback, when set before the first callback, gets each callback
	// on the reader goroutine (it may send calls with callAsync).
	onCallback func(*pb.CallbackRequest)
	// holdAcks, when set before the first callback, leaves the
	// callbacks unanswered until ackCallback (the tests of the
	// hand-over); otherwise each is answered as it comes.
	holdAcks bool

	mu        sync.Mutex
	wmu       sync.Mutex // one message per write, in sequence order
	seq       uint32
	session   uint64
	lastRecv  uint32 // the RTI's newest HLA message
	lastSeq   uint32 // the RTI's newest message of any kind
	waiting   map[uint32]chan *pb.CallResponse
	control   []uint32
	callbacks []*pb.CallbackRequest
	cbSeqs    []uint32 // the sequence numbers of callbacks
	err       error    // the first protocol error seen
	changed   chan struct{}
	done      chan struct{}
}

const (
	fpNewSession       = 1
	fpNewSessionStatus = 2
	fpHeartbeat        = 3
	fpHeartbeatResp    = 4
	fpTerminate        = 5
	fpTerminated       = 6
	fpCallRequest      = 20
	fpCallResponse     = 21
	fpCallbackRequest  = 22
	fpCallbackResponse = 23
)

// dialFedPro connects and opens a session; onCallback (may be nil) gets
// the callbacks, which are kept too.
func dialFedPro(addr string, onCallback func(*pb.CallbackRequest)) (*fpConn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return openFedPro(conn, onCallback)
}

// openFedPro opens a session on conn (TCP, or TLS).
func openFedPro(conn net.Conn, onCallback func(*pb.CallbackRequest)) (*fpConn, error) {
	c := &fpConn{conn: conn, onCallback: onCallback, waiting: map[uint32]chan *pb.CallResponse{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.read()
	c.send(fpNewSession, binary.BigEndian.AppendUint32(nil, 1))
	if err := c.waitControl(fpNewSessionStatus, 10*time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection and waits for the reader.
func (c *fpConn) Close() {
	c.conn.Close()
	<-c.done
}

// send writes one message in one write and returns its sequence number.
func (c *fpConn) send(typ uint32, body []byte) uint32 { return c.sendThen(typ, body, nil) }

// sendThen is send, calling before (when set) with the message's
// sequence number before it goes out.
func (c *fpConn) sendThen(typ uint32, body []byte, before func(seq uint32)) uint32 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	if before != nil {
		before(seq)
	}
	h := make([]byte, 24, 24+len(body))
	binary.BigEndian.PutUint32(h[0:], uint32(24+len(body)))
	binary.BigEndian.PutUint32(h[4:], seq)
	binary.BigEndian.PutUint64(h[8:], c.session)
	binary.BigEndian.PutUint32(h[16:], c.lastRecv)
	binary.BigEndian.PutUint32(h[20:], typ)
	c.mu.Unlock()
	if _, err := c.conn.Write(append(h, body...)); err != nil {
		c.fail(fmt.Errorf("write: %w", err))
	}
	return seq
}

func (c *fpConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.notify()
}

// notify wakes whoever waits for a change.
func (c *fpConn) notify() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *fpConn) read() {
	defer close(c.done)
	defer c.notify()
	r := bufio.NewReader(c.conn)
	for {
		var h [24]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			c.fail(fmt.Errorf("read: %w", err))
			return
		}
		size := binary.BigEndian.Uint32(h[0:])
		seq := binary.BigEndian.Uint32(h[4:])
		sess := binary.BigEndian.Uint64(h[8:])
		typ := binary.BigEndian.Uint32(h[20:])
		if size < 24 || size > 64<<20 {
			c.fail(fmt.Errorf("message size %d", size))
			return
		}
		body := make([]byte, size-24)
		if _, err := io.ReadFull(r, body); err != nil {
			c.fail(fmt.Errorf("read: %w", err))
			return
		}
		c.mu.Lock()
		if seq != c.lastSeq+1 && c.err == nil {
			c.err = fmt.Errorf("message type %d numbered %d after %d", typ, seq, c.lastSeq)
		}
		c.lastSeq = seq
		var cb *pb.CallbackRequest
		switch typ {
		case fpNewSessionStatus:
			c.session = sess
			if len(body) < 4 || binary.BigEndian.Uint32(body) != 0 {
				c.err = fmt.Errorf("new session refused: % x", body)
			}
			c.control = append(c.control, typ)
		case fpCallResponse:
			c.lastRecv = seq
			resp := &pb.CallResponse{}
			if len(body) < 4 || proto.Unmarshal(body[4:], resp) != nil {
				c.err = errors.New("a call response that does not decode")
				break
			}
			if ch := c.waiting[binary.BigEndian.Uint32(body)]; ch != nil {
				delete(c.waiting, binary.BigEndian.Uint32(body))
				ch <- resp
			}
		case fpCallbackRequest:
			c.lastRecv = seq
			cb = &pb.CallbackRequest{}
			if proto.Unmarshal(body, cb) != nil {
				c.err = errors.New("a callback that does not decode")
				cb = nil
				break
			}
			c.callbacks = append(c.callbacks, cb)
			c.cbSeqs = append(c.cbSeqs, seq)
		default:
			c.control = append(c.control, typ)
		}
		handler := c.onCallback
		hold := c.holdAcks
		c.mu.Unlock()
		if cb != nil && hold {
			if handler != nil {
				handler(cb)
			}
		} else if cb != nil {
			ack, _ := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackSucceeded{CallbackSucceeded: &pb.CallbackSucceeded{}}})
			c.send(fpCallbackResponse, append(binary.BigEndian.AppendUint32(nil, seq), ack...))
			if handler != nil {
				handler(cb)
			}
		}
		c.notify()
	}
}

// waitUntil waits until cond (called under the lock) holds, the
// connection fails, or d passes.
func (c *fpConn) waitUntil(what string, d time.Duration, cond func() bool) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok, err, changed := cond(), c.err, c.changed
		c.mu.Unlock()
		switch {
		case ok:
			return nil
		case err != nil:
			return err
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("no %s in %v", what, d)
		}
	}
}

func (c *fpConn) waitControl(typ uint32, d time.Duration) error {
	return c.waitUntil(fmt.Sprintf("control message %d", typ), d, func() bool {
		for _, x := range c.control {
			if x == typ {
				return true
			}
		}
		return false
	})
}

// callAsync sends a call; its response comes on the returned channel.
func (c *fpConn) callAsync(req *pb.CallRequest) (<-chan *pb.CallResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	ch := make(chan *pb.CallResponse, 1)
	c.sendThen(fpCallRequest, b, func(seq uint32) { c.waiting[seq] = ch })
	return ch, nil
}

// callWait makes one call and waits for its response, with no timer:
// one call in flight, as the public clients make them (bench fedpro
// -mode throughput). An exception is returned as the response.
func (c *fpConn) callWait(ctx context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	ch, err := c.callAsync(req)
	if err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-c.done:
		select {
		case resp := <-ch:
			return resp, nil
		default:
		}
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("connection closed: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// call makes one call and returns its response: an exception is an
// error.
func (c *fpConn) call(req *pb.CallRequest) (*pb.CallResponse, error) {
	ch, err := c.callAsync(req)
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

// callback waits for the first kept callback match accepts.
func (c *fpConn) callback(what string, d time.Duration, match func(*pb.CallbackRequest) bool) (*pb.CallbackRequest, error) {
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

// callbackSeq returns the sequence number of a kept callback.
func (c *fpConn) callbackSeq(cb *pb.CallbackRequest) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.callbacks {
		if x == cb {
			return c.cbSeqs[i]
		}
	}
	return 0
}

// ackCallback answers the callback numbered seq (holdAcks): as Pitch's
// clients do, a HLA_CALLBACK_RESPONSE carrying seq and a
// CallbackResponse, or with bare as MAK's client does, a bare header
// numbered seq.
func (c *fpConn) ackCallback(seq uint32, bare bool) {
	if !bare {
		ack, _ := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackSucceeded{CallbackSucceeded: &pb.CallbackSucceeded{}}})
		c.send(fpCallbackResponse, append(binary.BigEndian.AppendUint32(nil, seq), ack...))
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	h := make([]byte, 24)
	binary.BigEndian.PutUint32(h[0:], 24)
	binary.BigEndian.PutUint32(h[4:], seq)
	binary.BigEndian.PutUint64(h[8:], c.session)
	binary.BigEndian.PutUint32(h[16:], c.lastRecv)
	binary.BigEndian.PutUint32(h[20:], fpCallbackResponse)
	c.mu.Unlock()
	if _, err := c.conn.Write(h); err != nil {
		c.fail(fmt.Errorf("write: %w", err))
	}
}
