package peer

// MessagesLost is a meshrti extension: the data plane gave up on reliable
// messages from a federate. They were sent but can no longer be repaired:
// this federate fell too far behind (a stall longer than
// Config.StallTimeout, or a partition), or the sender was lost with them
// unsent. Updates, interactions or deletes among them were not delivered.
// Messages counts the data-plane messages lost (fragments of one large
// value count one each). Gaps are also counted in Stats.Gaps.
type MessagesLost struct {
	Producer FederateHandle
	Messages uint64
}

func (MessagesLost) isEvent() {}
