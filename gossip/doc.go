// Package gossip is meshrti's control plane: one memberlist cluster per
// federation execution, carrying membership and failure detection,
// replicated per-node state, and a quorum register for everything that
// must be unique federation-wide.
//
// # Model
//
// Start creates a memberlist node bound to 127.0.0.1 (unless configured)
// whose Label is the federation name and whose keyring, when a federation
// key is set, is derived from that key. A node without seeds founds the
// cluster; the others join through seeds.
//
// A node's memberlist runs over a Mux: one UDP socket and one TCP
// listener that frame every packet and stream with the destination
// node's name. Start makes a Mux of the node's own unless Config.Mux
// shares one: a daemon then carries all its nodes, of any federations, on
// one address, and its Anchors (on the founding daemon) found the
// federations' logs, one founder per log whichever daemon's client
// creates (docs/agreement.md, "Daemons: who founds"). Nodes speak one
// wire protocol (version.Protocol, in their metadata); a node of another
// is refused with ErrProtocolVersion.
//
//	c, err := gossip.Start(ctx, gossip.Config{Federation: "demo", Seeds: seeds})
//	if err != nil { return err }
//	defer c.Close()
//	spec := gossip.FederationSpec{TimeRepresentation: "HLAfloat64Time", Modules: fom}
//	if err := c.CreateFederation(ctx, spec); err != nil && !errors.Is(err, gossip.ErrFederationExists) {
//		return err
//	}
//	fi, _ := c.Federation() // check our modules against fi.Modules, then:
//	h, err := c.JoinFederate(ctx, gossip.JoinSpec{Name: "Radar", Type: "radar",
//		TimeRepresentation: "HLAfloat64Time", Modules: extra, KnownModules: len(fi.Modules)})
//	// ErrModulesChanged: the record grew meanwhile; re-read, check, retry.
//	for ev := range c.Events() { ... } // EventFailed: federate lost
//
// The package offers three services:
//
//   - Membership. Members, LocalNode and Events report who is there, with
//     each node's Meta (federate name, type, handle, protocol version,
//     data-plane endpoint). EventFailed means memberlist declared a node
//     dead: for HLA, "federate lost".
//   - Replicated state. Each node owns keys it alone writes (SetState);
//     every member keeps the highest version per (owner, key). Updates
//     spread through gossip broadcasts and full push-pull exchanges, so
//     late joiners get everything. States reads the merged view,
//     StateEntries the same with each entry's version, and
//     EventStateChanged carries the version of the write it reports.
//   - Agreement. A quorum register (Acquire, Release, CompareAndSwap,
//     Propose, Read) and the federation services built on it
//     (CreateFederation, DestroyFederation, JoinFederate, ResignFederate,
//     ListFederations). CompareAndSwap takes a key, held or free, only if
//     its version is still the one the caller knows, so two callers that
//     read the same version never both take it.
//     The federation record holds the time representation and the FOM
//     modules of the creator and of every joiner, in order: a joiner with
//     another time representation is refused (ErrTimeRepresentation), and
//     a joiner adds modules only if the record still has the modules it
//     checked against (JoinSpec.KnownModules, a compare-and-set;
//     ErrModulesChanged otherwise), so two joiners adding conflicting
//     modules at once cannot both get in unchecked.
//     EventFederationModulesChanged gives every member the new list.
//     Every decision is one instance of single-decree Paxos in a log whose
//     acceptor roster is itself changed only through the log; see
//     docs/agreement.md for why two different values are never both
//     chosen, under any partition or crash. When a node is declared dead,
//     a surviving member releases its federate, its keys and its acceptor
//     seat through the register.
//
// # Hostile input
//
// Nothing another process sends can make this package panic or allocate
// without bound: user messages, push-pull states, log entries, snapshots
// and node metadata are length-checked before they are decoded, and a
// catch-up snapshot is installed only if it is consistent (a log
// identity, a sorted roster within its size limit).
// What is dropped is counted in Stats (MalformedMessages,
// MalformedStates, RejectedMessages). The fuzz targets FuzzNotifyMsg,
// FuzzMergeRemoteState and FuzzReplicaStep check this.
//
// # Randomness
//
// Config.Rand, when set, supplies every random choice the package makes
// (default node name, log identity, backoffs, roster-growth pacing), so a
// seed replays those choices. It does not replay a run: memberlist picks
// its probe and gossip targets from the global math/rand, which it seeds
// itself, and timers run on the clock. See Config.Rand.
//
// Inside, the agreement protocol is a pure state machine (package
// gossip/internal/agree, its Replica: Step, Tick, Submit, Read, Ready; no
// clock, no network), driven by one loop goroutine:
//
//	for {
//		select {
//		case <-tick.C:       replica.Tick(); housekeeping (loss cleanup, roster growth)
//		case <-inbox.signal: run queued closures (messages, requests)
//		case <-done:         return
//		}
//		rd := replica.Ready() // send messages, answer waiters, publish the view, emit events
//	}
//
// # Concurrency properties
//
//   - All exported methods are safe for concurrent use.
//   - Events are delivered on the channel returned by Events, in the order
//     this node observed them, by one goroutine that reads an unbounded
//     internal queue. memberlist's goroutines, the loop and callers only
//     append to that queue, so a slow reader never blocks memberlist or
//     the agreement; it only grows the queue. The channel is closed when
//     the Cluster stops.
//   - Membership events come from memberlist's delegates; register and
//     federation events come from the loop as entries are applied; state
//     events come from whichever goroutine merged the update. Events of one
//     source keep their order; events of different sources interleave.
//   - Every node applies the same log entries in the same order, so all
//     members reach the same register state; a member may lag behind.
//   - Close and Halt return only after every goroutine the Cluster started
//     has finished.
//
// # What blocks
//
//   - Start: until memberlist runs and, when joining, until the agreement
//     log arrived from a member (bounded by ctx and the profile's wait).
//   - Agreement calls (Acquire, Release, CompareAndSwap, Propose, Read,
//     CreateFederation, DestroyFederation, JoinFederate, ResignFederate,
//     ListFederations):
//     until a quorum of acceptors decided, ctx ends, or Config.Timeout
//     passes. A timeout returns ErrNoQuorum; the operation may still take
//     effect later, never a wrong answer.
//   - Close: up to about two leave timeouts (release through the register,
//     then memberlist's leave broadcast) plus a goodbye message to each
//     member, which the node's latest decisions precede. Halt does not
//     talk to anyone.
//   - Everything else (Members, LocalNode, Meta, SetMeta, SetState, States,
//     StateEntries, Lookup, Entries, Roster, Federates, LocalFederate,
//     Federation, Stats) reads or writes local state and does not block on
//     the network.
package gossip
