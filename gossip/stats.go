package gossip

import "sync/atomic"

// Stats counts input this node dropped, and what its failure detector
// suspected. Nothing another process sends can make this package panic:
// what does not decode, or what the agreement refuses, is dropped and
// counted here. A dropped count that keeps growing means a
// misconfigured or hostile peer (or a bug); refutations that keep
// growing, a host too starved of CPU for its gossip profile.
type Stats struct {
	// MalformedMessages counts user messages (memberlist NotifyMsg
	// payloads: agreement, replicated state, goodbye) that were too
	// short, had an unknown tag or did not decode.
	MalformedMessages uint64
	// MalformedStates counts push-pull states (MergeRemoteState) that did
	// not decode.
	MalformedStates uint64
	// RejectedMessages counts agreement messages that decoded but that
	// the agreement refused as invalid: an unknown type, no sender, a
	// message of another agreement log (a second founder), a catch-up
	// snapshot that does not decode or could not be a state of the log.
	// Late or duplicate answers are normal and not counted.
	RejectedMessages uint64
	// RejectedNodes counts nodes of another wire protocol that this node
	// kept out (ErrProtocolVersion).
	RejectedNodes uint64

	// Suspicions counts the members this node's failure detector
	// declared dead (EventFailed), rightly or not; Refutations those of
	// them it heard alive again, the same process (EventJoined): each a
	// suspicion that was false. LostProposals counts the removals of
	// suspected members this node proposed to the register;
	// LostDeferred the housekeeping rounds it did not, because
	// Config.Heard still heard the member; LostNoMajority those it did
	// not because it saw no majority of the acceptors alive (it is cut
	// off, or one half of two).
	Suspicions     uint64
	Refutations    uint64
	LostProposals  uint64
	LostDeferred   uint64
	LostNoMajority uint64
	// Reconnects counts the members declared dead that this node reached
	// again by joining them (a healed partition).
	Reconnects uint64
	// SyncsRedirected counts the requests for the agreement log this
	// node sent to another member because the one asked before did not
	// answer in time (it left, or is stuck).
	SyncsRedirected uint64
}

type stats struct {
	malformedMessages atomic.Uint64
	malformedStates   atomic.Uint64
	rejected          atomic.Uint64 // copied from the replica by the loop
	suspicions        atomic.Uint64
	refutations       atomic.Uint64
	lostProposals     atomic.Uint64
	lostDeferred      atomic.Uint64
	lostNoMajority    atomic.Uint64
	reconnects        atomic.Uint64
	rejectedNodes     atomic.Uint64
	syncsRedirected   atomic.Uint64
}

// Stats returns the counts since Start. It never
// blocks; the agreement's count lags by at most one loop iteration.
func (c *Cluster) Stats() Stats {
	return Stats{
		MalformedMessages: c.stats.malformedMessages.Load(),
		MalformedStates:   c.stats.malformedStates.Load(),
		RejectedMessages:  c.stats.rejected.Load(),
		Suspicions:        c.stats.suspicions.Load(),
		Refutations:       c.stats.refutations.Load(),
		LostProposals:     c.stats.lostProposals.Load(),
		LostDeferred:      c.stats.lostDeferred.Load(),
		LostNoMajority:    c.stats.lostNoMajority.Load(),
		Reconnects:        c.stats.reconnects.Load(),
		RejectedNodes:     c.stats.rejectedNodes.Load(),
		SyncsRedirected:   c.stats.syncsRedirected.Load(),
	}
}
