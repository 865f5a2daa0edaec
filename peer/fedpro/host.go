package fedpro

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/metrics"
	"github.com/meshrti/meshrti/peer/transport"
)

// Config configures a Host.
type Config struct {
	// Base is the configuration every session's federate starts from:
	// the control plane (Gossip: seeds, bind address), the data plane
	// (Multicast: interface, group range, port), the federation key,
	// SaveDir, TickInterval. A call sets Federation, FederateName,
	// FederateType, FOMModules and Create; Metrics is the session's own.
	Base peer.Config
	// CallTimeout bounds a call that waits on the federation (create,
	// destroy, list, join, resign); default 30 s.
	CallTimeout time.Duration
	// ReadFOM reads a FOM module given by URL or path; nil: readFOM
	// (files, file:// URLs, and http(s) URLs).
	ReadFOM func(ctx context.Context, url string) ([]byte, error)
	// NewControl and NewTransport, when set, make the control plane and
	// the data-plane transport of each create, destroy, list and join
	// (each takes ownership of what it is given); nil uses Base's
	// Control and Transport, which are nil for the daemon: gossip and
	// multicast, made per call.
	NewControl   func() peer.ControlPlane
	NewTransport func() transport.Transport
	// Logf, when set, is told of joins and resignations (with the hosted
	// federate's gossip address, which other daemons and embedded
	// federates may join through).
	Logf func(format string, args ...any)
	// Federations, when set, reports federation executions the Host
	// knows of beside its sessions' (serve: the founding daemon's
	// anchored federations); listFederationExecutions reports them too.
	// It must not block.
	Federations func() []peer.FederationExecutionInformation
	// Authenticate, when set, checks the credentials of every Connect
	// (auth.go): nil for a connect without them. An error refuses the
	// connect with the exception it wraps (hla.ErrUnauthorized,
	// hla.ErrInvalidCredentials); nil lets it go on. It may be called
	// from several sessions at once. Nil: every connect is accepted.
	Authenticate Authenticator
}

func (h *Host) logf(format string, args ...any) {
	if h.cfg.Logf != nil {
		h.cfg.Logf(format, args...)
	}
}

// base returns the configuration of a call about federation: Base with
// a fresh control plane and transport when the Config makes them, and,
// for the gossip control plane, the gossip addresses of the Host's
// federates in that federation added to the seeds (with gossip a
// federation is the cluster its federates form: a second session of
// the daemon joins the first one's).
func (h *Host) base(federation string) peer.Config {
	c := &h.cfg
	b := c.Base
	if c.NewControl != nil {
		b.Control = c.NewControl()
	}
	if c.NewTransport != nil {
		b.Transport = c.NewTransport()
	}
	if b.Control == nil {
		b.Gossip.Seeds = append(slices.Clone(b.Gossip.Seeds), h.seeds(federation)...)
	}
	return b
}

// seeds returns the gossip addresses of the Host's federates in
// federation.
func (h *Host) seeds(federation string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for f, in := range h.joined() {
		if in == federation {
			if a, ok := f.GossipAddr(); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// joined yields the federate of each of the Host's sessions that has
// one, with the federation it joined. The caller holds h.mu.
func (h *Host) joined() iter.Seq2[*peer.Federate, string] {
	return func(yield func(*peer.Federate, string) bool) {
		for s := range h.sessions {
			s.mu.Lock()
			f, in := s.fed, s.federation
			s.mu.Unlock()
			if f != nil && !yield(f, in) {
				return
			}
		}
	}
}

// Federations lists, sorted, the federations the Host's federates are
// joined to.
func (h *Host) Federations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, in := range h.joined() {
		if !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	slices.Sort(out)
	return out
}

// JoinConfig is the configuration for another federate of this process
// to join federation beside the Host's (serve's monitor): Base, with a
// control plane and transport of its own when the Config makes them and
// the gossip addresses of the Host's federates in federation as seeds.
func (h *Host) JoinConfig(federation string) peer.Config {
	cfg := h.base(federation)
	cfg.Federation = federation
	return cfg
}

// left keeps federation, whose federate just left, as created when no
// cluster is left for it.
func (h *Host) left(federation string) {
	if !h.gossipAlone(federation) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cfg, ok := h.joinedWith[federation]; ok {
		h.created[federation] = cfg
	}
}

// gossipAlone reports whether a call about federation would open a
// gossip cluster of its own: the gossip control plane, no seeds
// configured, and none of the Host's federates in it.
func (h *Host) gossipAlone(federation string) bool {
	return h.cfg.Base.Control == nil && h.cfg.NewControl == nil && len(h.cfg.Base.Gossip.Seeds) == 0 && len(h.seeds(federation)) == 0
}

// Host hosts the federates of Federate Protocol sessions: one Session,
// and at most one federate, per client session.
type Host struct {
	cfg   Config
	stats hostStats

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
	// created are federations created through this Host while it had
	// no cluster for them (gossipAlone): a gossip cluster of one would
	// vanish with its node, so the first join creates them. A
	// federation whose last federate left, with no cluster left for it,
	// goes back here: an RTI keeps an empty federation until it is
	// destroyed. joinedWith are the modules and time representation of
	// the federations joined, for that.
	created    map[string]peer.Config
	joinedWith map[string]peer.Config
}

// hostStats counts what the Host's sessions did; the daemon's metrics.
type hostStats struct {
	sessions    atomic.Int64  // open now
	opened      atomic.Uint64 // ever
	calls       atomic.Uint64
	exceptions  atomic.Uint64 // calls answered with an exception
	unsupported atomic.Uint64 // calls meshrti does not serve
	callbacks   atomic.Uint64
	pushFailed  atomic.Uint64 // callbacks the session layer refused (session gone)
}

// Stats is a snapshot of a Host's counters.
type Stats struct {
	Sessions                                                  int64
	Opened, Calls, Exceptions, Unsupported, Callbacks, Failed uint64
}

// NewHost returns a Host.
func NewHost(cfg Config) *Host {
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.ReadFOM == nil {
		cfg.ReadFOM = readFOM
	}
	return &Host{cfg: cfg, sessions: make(map[*Session]struct{}), created: make(map[string]peer.Config), joinedWith: make(map[string]peer.Config)}
}

// Stats returns the Host's counters.
func (h *Host) Stats() Stats {
	return Stats{
		Sessions: h.stats.sessions.Load(), Opened: h.stats.opened.Load(), Calls: h.stats.calls.Load(),
		Exceptions: h.stats.exceptions.Load(), Unsupported: h.stats.unsupported.Load(),
		Callbacks: h.stats.callbacks.Load(), Failed: h.stats.pushFailed.Load(),
	}
}

// NewSession opens a session whose callbacks go out through push (an
// encoded pb.CallbackRequest each; push must not block on the client).
// After Close it returns nil.
func (h *Host) NewSession(push func(callback []byte) error) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.newSession(&Session{host: h, push: push})
}

// NewAcknowledgedSession is NewSession for a session layer that tells
// the Session of the client's callback responses (CallbackResponse):
// push returns the sequence number of the callback it queued. A
// callback that ends a pending state of the federate's (a
// TimeAdvanceGrant ends the time advancing state, TimeRegulationEnabled
// and TimeConstrainedEnabled the pending enable) ends it only when the
// client has responded to it, or to a later callback: until then the
// federate is still in that state (a TimeAdvanceRequest answers
// InTimeAdvancingState). With NewSession it ends as the callback is
// pushed.
func (h *Host) NewAcknowledgedSession(push func(callback []byte) (uint32, error)) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	plain := func(b []byte) error { _, err := push(b); return err } // callbacks that end no state
	return h.newSession(&Session{host: h, push: plain, pushSeq: push})
}

// CallbackQueue is a session layer that writes callbacks in batches
// (package session's Session is one). Neither method may wait for the
// client.
type CallbackQueue interface {
	// QueueCallback numbers and queues an encoded pb.CallbackRequest,
	// without writing it, and returns its sequence number.
	QueueCallback(callback []byte) (uint32, error)
	// Flush writes what is queued.
	Flush()
}

// NewQueuedSession is NewAcknowledgedSession for a session layer that
// writes callbacks in batches: the Session queues the callback of every
// event its federate has ready and flushes when none is left (or after
// flushBytes), so that a burst of callbacks shares its writes; a
// callback that answers a call goes out with the call's response.
func (h *Host) NewQueuedSession(q CallbackQueue) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	plain := func(b []byte) error {
		_, err := q.QueueCallback(b)
		q.Flush()
		return err
	}
	return h.newSession(&Session{host: h, push: plain, pushSeq: q.QueueCallback, flush: q.Flush})
}

// flushBytes is how many bytes of callbacks the pump queues, at most,
// before it flushes (NewQueuedSession).
const flushBytes = 64 << 10

// newSession registers s. Under h.mu.
func (h *Host) newSession(s *Session) *Session {
	s.metrics = metrics.NewRegistry()
	h.sessions[s] = struct{}{}
	h.stats.sessions.Add(1)
	h.stats.opened.Add(1)
	return s
}

// Close closes every session (their federates resign per their
// directive) and refuses new ones.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	ss := make([]*Session, 0, len(h.sessions))
	for s := range h.sessions {
		ss = append(ss, s)
	}
	h.mu.Unlock()
	for _, s := range ss {
		s.Close(errors.New("fedpro: the daemon stops"))
	}
}

// Session is one client session: its connection state and its federate.
// Call is made by the session layer, one call at a time; the callbacks go
// out from the Session's own goroutine.
type Session struct {
	host    *Host
	push    func([]byte) error
	pushSeq func([]byte) (uint32, error) // instead of push: NewAcknowledgedSession
	flush   func()                       // writes what pushSeq queued: NewQueuedSession
	metrics *metrics.Registry            // the federate's metrics (the latest's); under mu

	// The callbacks pushed that end a pending state, until the client
	// responds to them (NewAcknowledgedSession). ackMu is held across
	// pushing one and recording it, so that its response cannot come
	// first.
	ackMu   sync.Mutex
	unacked []unacked

	mu         sync.Mutex
	connected  bool
	fed        *peer.Federate
	federation string             // fed's
	stop       context.CancelFunc // stops the callback pump
	pumpDone   chan struct{}
	closed     bool

	logName string // SetLogName's: names the session in auth.go's log lines

	// evolved: the client serves the 1516e API (its connect said
	// API.version=IEEE 1516-2010): exceptions go by their 1516e names.
	evolved atomic.Bool
}

// Call serves one encoded CallRequest and returns the encoded
// CallResponse (an exception when the call fails or is not served).
func (s *Session) Call(payload []byte) []byte {
	s.host.stats.calls.Add(1)
	resp, encoded := s.fastUpdate(payload)
	if resp == nil && encoded == nil {
		resp, encoded = s.fastInteraction(payload)
	}
	if resp == nil && encoded == nil {
		resp, encoded = s.dispatch(payload)
	}
	if encoded != nil {
		return encoded
	}
	if e := resp.GetExceptionData(); e != nil {
		s.host.stats.exceptions.Add(1)
		if s.evolved.Load() {
			if n, ok := evolvedNames[e.ExceptionName]; ok {
				e.ExceptionName = n
			}
		}
	}
	b, err := proto.Marshal(resp)
	if err != nil { // cannot happen: the messages are the schema's
		b, _ = proto.Marshal(exception(fmt.Errorf("%w: encode the response: %w", peer.ErrRTIinternalError, err)))
	}
	return b
}

// Close ends the session: its federate resigns with its automatic resign
// directive and closes, and the callback pump stops. Close is
// idempotent.
func (s *Session) Close(reason error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	f := s.fed
	s.fed = nil
	s.mu.Unlock()
	if f != nil {
		s.leave(f)
	}
	s.host.mu.Lock()
	if _, ok := s.host.sessions[s]; ok {
		delete(s.host.sessions, s)
		s.host.stats.sessions.Add(-1)
	}
	s.host.mu.Unlock()
}

// leave resigns f with its automatic resign directive, closes it and
// waits for the callback pump.
func (s *Session) leave(f *peer.Federate) {
	ctx, cancel := context.WithTimeout(context.Background(), s.host.cfg.CallTimeout)
	defer cancel()
	if a, err := f.GetAutomaticResignDirective(); err == nil {
		if err := f.ResignFederationExecution(ctx, a); err == nil { // a lost federation is left anyway
			s.host.logf("%q resigned from federation %q (%v, its automatic resign directive)", f.Name(), s.federation, a)
		}
	}
	f.Close()
	s.host.left(s.federation)
	s.mu.Lock()
	stop, done := s.stop, s.pumpDone
	s.stop, s.pumpDone = nil, nil
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// federate returns the session's federate, or the exception a call gets
// when it has joined none.
func (s *Session) federate() (*peer.Federate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.connected:
		return nil, fmt.Errorf("%w: connect first", peer.ErrNotConnected)
	case s.fed == nil:
		return nil, fmt.Errorf("%w: join a federation first", peer.ErrFederateNotExecutionMember)
	}
	return s.fed, nil
}

// joined makes f the session's federate and starts the callback pump.
func (s *Session) joined(f *peer.Federate, federation string) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.mu.Lock()
	s.fed, s.federation, s.stop, s.pumpDone = f, federation, stop, done
	s.mu.Unlock()
	go s.pump(ctx, f, done)
}

// pump pushes f's events as callbacks until f is closed or the session
// ends. With a flush (NewQueuedSession) it queues the callbacks of the
// events ready and flushes before it waits for more.
func (s *Session) pump(ctx context.Context, f *peer.Federate, done chan struct{}) {
	defer close(done)
	next := func(ctx context.Context) (peer.Event, peer.Receipt, error) {
		if s.pushSeq != nil {
			return f.NextForwarded(ctx)
		}
		ev, err := f.Next(ctx)
		return ev, 0, err
	}
	// now is an ended context: next(now) takes an event only if one is
	// ready.
	now, cancel := context.WithCancel(context.Background())
	cancel()
	queued := 0 // bytes queued since the last flush
	for {
		var ev peer.Event
		var r peer.Receipt
		var err error
		ready := false
		if queued > 0 && queued < flushBytes {
			ev, r, err = next(now)
			ready = err == nil || !errors.Is(err, context.Canceled)
		}
		if !ready {
			if queued > 0 {
				s.flush()
				queued = 0
			}
			ev, r, err = next(ctx)
		}
		if err != nil {
			if queued > 0 {
				s.flush()
			}
			return
		}
		b, ok := fastCallback(ev, conveysProducer(f))
		if !ok {
			if cb := callbackOf(f, ev); cb != nil {
				b, err = marshalCallback(cb)
				ok = err == nil
			}
		}
		if !ok {
			f.HandedOver(r) // nothing for the client to answer
			continue
		}
		s.host.stats.callbacks.Add(1)
		if s.pushSeq == nil {
			if err := s.push(b); err != nil {
				s.host.stats.pushFailed.Add(1)
			}
			continue
		}
		if s.flush != nil {
			queued += len(b)
		}
		s.ackMu.Lock()
		seq, err := s.pushSeq(b)
		switch {
		case err != nil:
			s.host.stats.pushFailed.Add(1)
			f.HandedOver(r) // the session is gone: no answer comes
		case r != 0:
			s.unacked = append(s.unacked, unacked{seq: seq, r: r, f: f})
		}
		s.ackMu.Unlock()
	}
}

// unacked is a callback pushed that ends a pending state of f's, with
// its sequence number in the session.
type unacked struct {
	seq uint32
	r   peer.Receipt
	f   *peer.Federate
}

// CallbackResponse tells the Session that the client responded to the
// callback numbered seq (either form of response: a CallbackResponse,
// succeeded or failed, or a bare acknowledgement): the client has been
// handed it, and every callback before it, so the pending states they
// end are over. Only for a NewAcknowledgedSession; the payload is not
// needed.
func (s *Session) CallbackResponse(seq uint32, payload []byte) {
	s.ackMu.Lock()
	var last *unacked
	i := 0
	for i < len(s.unacked) && !seqAfter(s.unacked[i].seq, seq) {
		last = &s.unacked[i]
		i++
	}
	var done unacked
	if last != nil {
		done = *last
	}
	k := copy(s.unacked, s.unacked[i:])
	clear(s.unacked[k:])
	s.unacked = s.unacked[:k]
	s.ackMu.Unlock()
	if done.f != nil {
		done.f.HandedOver(done.r)
	}
}

// seqAfter reports whether session sequence number a comes after b
// (31 bits, wrapping from 0x7fffffff to 0).
func seqAfter(a, b uint32) bool {
	d := (a - b) & 0x7fffffff
	return d != 0 && d < 1<<30
}

// callCtx is the context of a call that waits on the federation.
func (s *Session) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.host.cfg.CallTimeout)
}
