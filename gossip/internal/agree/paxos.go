package agree

// This file holds the single-decree Paxos pieces: ballots, the acceptor,
// and the messages replicas exchange. It is pure: no clock, no network,
// no goroutines.

// Ballot orders the attempts to choose a value for one instance. Real
// ballots have N >= 1; the proposer's identity breaks ties, so two
// proposers never use the same ballot.
type Ballot struct {
	N    uint64 `msgpack:"n"`
	Node NodeID `msgpack:"p"`
}

func (b Ballot) less(o Ballot) bool {
	if b.N != o.N {
		return b.N < o.N
	}
	return b.Node.less(o.Node)
}

// accState is what one acceptor remembers about one instance: the highest
// ballot it promised, and the highest ballot (and its value) it accepted.
type accState struct {
	Promised Ballot
	Accepted Ballot
	Value    []byte
}

// acceptor is the acceptor role of one process, for every instance it
// has not yet seen chosen. Its state lives in memory: a restarted process
// is a new acceptor (a new nodeID), never the old one with amnesia.
type acceptor struct {
	inst map[uint64]*accState

	// unsafeAccept is set only by a test that shows the linearizability
	// check catches a broken acceptor: accept then ignores the promise
	// and accepts below the ballot it promised. Never set otherwise.
	unsafeAccept bool
}

func (a *acceptor) get(inst uint64) *accState {
	if a.inst == nil {
		a.inst = map[uint64]*accState{}
	}
	st := a.inst[inst]
	if st == nil {
		st = &accState{}
		a.inst[inst] = st
	}
	return st
}

// prepare handles phase 1a. It promises b when b is at least the highest
// ballot promised so far and returns the state to report (on refusal,
// Promised tells the proposer what to beat).
func (a *acceptor) prepare(inst uint64, b Ballot) (bool, accState) {
	st := a.get(inst)
	if b.less(st.Promised) {
		return false, *st
	}
	st.Promised = b
	return true, *st
}

// accept handles phase 2a: it accepts (b, v) unless it promised a higher
// ballot. It returns the ballot promised afterwards.
func (a *acceptor) accept(inst uint64, b Ballot, v []byte) (bool, Ballot) {
	st := a.get(inst)
	switch {
	case !b.less(st.Promised):
		st.Promised = b
	case !a.unsafeAccept:
		return false, st.Promised
	}
	st.Accepted = b
	st.Value = v
	return true, b
}

// pendingValue reports whether this acceptor accepted a value for inst.
func (a *acceptor) pendingValue(inst uint64) bool {
	st := a.inst[inst]
	return st != nil && st.Accepted.N > 0
}

// forgetBelow drops the state of instances below index. The owner calls
// it only for instances it knows are chosen; for those it answers
// "decided" from then on and never promises or accepts again.
func (a *acceptor) forgetBelow(index uint64) {
	for i := range a.inst {
		if i < index {
			delete(a.inst, i)
		}
	}
}

// MsgType tells the role of a message.
type MsgType uint8

const (
	MsgPrepare  MsgType = iota + 1 // proposer -> acceptor, phase 1a
	MsgPromise                     // acceptor -> proposer, phase 1b (OK=false: refused)
	MsgAccept                      // proposer -> acceptor, phase 2a
	MsgAccepted                    // acceptor -> proposer, phase 2b (OK=false: refused)
	MsgDecided                     // acceptor -> proposer: that instance is already chosen
	MsgCommit                      // anyone -> everyone (gossip): instance Inst chose Value
	MsgSyncReq                     // learner -> peer: send me what follows Index
	MsgSyncResp                    // peer -> learner: entries from Inst, or a snapshot
	MsgForward                     // proposer -> leader: propose my batch (Value) for me
)

func (t MsgType) String() string {
	switch t {
	case MsgPrepare:
		return "prepare"
	case MsgPromise:
		return "promise"
	case MsgAccept:
		return "accept"
	case MsgAccepted:
		return "accepted"
	case MsgDecided:
		return "decided"
	case MsgCommit:
		return "commit"
	case MsgSyncReq:
		return "sync-req"
	case MsgSyncResp:
		return "sync-resp"
	case MsgForward:
		return "forward"
	}
	return "unknown"
}

// Message is everything replicas say to each other. To with an empty
// Name means "everyone" (gossip).
type Message struct {
	Type      MsgType  `msgpack:"t"`
	Log       string   `msgpack:"l,omitempty"`
	From      NodeID   `msgpack:"f"`
	To        NodeID   `msgpack:"o"`
	Index     uint64   `msgpack:"x,omitempty"` // entries the sender has applied
	Inst      uint64   `msgpack:"i,omitempty"`
	Ballot    Ballot   `msgpack:"b"`
	OK        bool     `msgpack:"k,omitempty"`
	AccBallot Ballot   `msgpack:"a"` // promise: ballot of the accepted value; refusal: ballot promised
	HasValue  bool     `msgpack:"h,omitempty"`
	Value     []byte   `msgpack:"v,omitempty"`
	Entries   [][]byte `msgpack:"e,omitempty"` // sync-resp: entries Inst, Inst+1, ...
	Snapshot  []byte   `msgpack:"s,omitempty"` // sync-resp: the state after Index entries
}
