package gossip

import "errors"

// Errors returned by this package. Compare with errors.Is: most are
// wrapped with details.
var (
	// ErrClosed: the Cluster was closed or halted.
	ErrClosed = errors.New("gossip: cluster closed")
	// ErrNoQuorum: no majority of the acceptor roster answered in time.
	// The operation was not confirmed; it may still take effect later
	// (a later Read tells). Never a wrong answer: only no answer.
	ErrNoQuorum = errors.New("gossip: no quorum of acceptors reachable")
	// ErrOutcomeUnknown: the operation was decided but this node caught
	// up from a snapshot that no longer records its result.
	ErrOutcomeUnknown = errors.New("gossip: operation decided but its outcome is unknown here")
	// ErrNotSynced: joining members never sent this node the agreement log.
	ErrNotSynced = errors.New("gossip: agreement log not received from the cluster")
	// ErrClusterGone: every acceptor of the agreement log left or died
	// and this node is none: nothing can be decided in this cluster any
	// more (its federation execution ended with its members), or, from
	// Start, every member left before sending the log.
	ErrClusterGone = errors.New("gossip: the agreement log's members are all gone")
	// ErrSeedsUnreachable: Start reached none of Config.Seeds.
	ErrSeedsUnreachable = errors.New("gossip: no seed answered")
	// ErrFederationExists: CreateFederation found the execution created.
	ErrFederationExists = errors.New("gossip: federation execution already exists")
	// ErrFederationNotFound: the federation execution was not created (or
	// was destroyed).
	ErrFederationNotFound = errors.New("gossip: federation execution does not exist")
	// ErrFederationMismatch: a federation name other than Config.Federation.
	ErrFederationMismatch = errors.New("gossip: this cluster serves another federation execution")
	// ErrFederatesJoined: DestroyFederation while federates are joined.
	ErrFederatesJoined = errors.New("gossip: federates are joined")
	// ErrNameInUse: JoinFederate with a name a joined federate uses.
	ErrNameInUse = errors.New("gossip: federate name in use")
	// ErrAlreadyJoined: JoinFederate when this node's federate is joined.
	ErrAlreadyJoined = errors.New("gossip: this node's federate is already joined")
	// ErrNotJoined: ResignFederate when this node has no joined federate.
	ErrNotJoined = errors.New("gossip: this node has no joined federate")
	// ErrFederateNotJoined: AcquireIfJoined named a federate that is not
	// joined where the acquisition is decided.
	ErrFederateNotJoined = errors.New("gossip: federate not joined")
	// ErrUnknownMember: Suspect named a node this node never heard of
	// (or this node).
	ErrUnknownMember = errors.New("gossip: no such member")
	// ErrNotHolder: Release of a key another node holds.
	ErrNotHolder = errors.New("gossip: key held by another node")
	// ErrProtocolVersion: a node of another wire protocol
	// (version.Protocol) tried to join, or this node tried to join a
	// cluster of another; the message names both, with their releases.
	ErrProtocolVersion = errors.New("gossip: wire protocol mismatch")
	// ErrMetaTooLarge: metadata over memberlist's 512-byte limit.
	ErrMetaTooLarge = errors.New("gossip: node metadata too large")
	// ErrTimeRepresentation: JoinFederate named a time representation
	// other than the federation's.
	ErrTimeRepresentation = errors.New("gossip: federation uses another time representation")
	// ErrModulesChanged: JoinFederate would add FOM modules, but the
	// federation's module list grew since the joiner read it
	// (JoinSpec.KnownModules). Nothing changed; re-read and retry.
	ErrModulesChanged = errors.New("gossip: federation modules changed; re-read and retry")
	// ErrModulesTooLarge: the federation's modules would exceed 8 MiB of
	// content in all.
	ErrModulesTooLarge = errors.New("gossip: federation modules too large")
	// ErrInvalidModule: a module whose Digest is not the hex SHA-256 of
	// its Content.
	ErrInvalidModule = errors.New("gossip: invalid FOM module")
)
