package peer

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/meshrti/meshrti/peer/internal/core"
	"github.com/meshrti/meshrti/peer/metrics"
	"github.com/meshrti/meshrti/peer/reliable"
)

// fedMetrics are the federate's own metrics, registered in
// Config.Metrics. All are nil (and ignore updates) without a registry.
type fedMetrics struct {
	batchFrames *metrics.Histogram // frames per batch handed to the transport
	batchBytes  *metrics.Histogram // bytes per batch
	stepFrames  *metrics.Counter   // frames stepped through the reliable endpoint
	// rel is the reliable endpoint's counters, published by the loop on
	// every tick for the registry's callbacks to read.
	rel atomic.Pointer[reliable.Stats]
}

// registerMetrics registers the federate's metrics in reg, labelled with
// its federation and name. Without a registry it does nothing.
func (f *Federate) registerMetrics(reg *metrics.Registry) error {
	if reg == nil {
		return nil
	}
	lb := metrics.Labels{"federation": f.cfg.Federation, "federate": f.name}
	var errs []error
	m := &f.metrics
	var err error
	m.batchFrames, err = reg.Histogram("meshrti_batch_frames", "Data-plane frames per batch handed to the transport (one system call with batch I/O).", lb)
	errs = append(errs, err)
	m.batchBytes, err = reg.Histogram("meshrti_batch_bytes", "Data-plane bytes per batch handed to the transport.", lb)
	errs = append(errs, err)
	m.stepFrames, err = reg.Counter("meshrti_frames_received_total", "Data-plane frames received and stepped.", lb)
	errs = append(errs, err)
	counter := func(name, help string, v func() uint64) {
		errs = append(errs, reg.CounterFunc(name, help, lb, v))
	}
	gauge := func(name, help string, v func() int64) {
		errs = append(errs, reg.GaugeFunc(name, help, lb, v))
	}
	// The core's counters are read under the federate's lock: current,
	// for a scrape, at no cost to the loop.
	cs := func(pick func(*core.Stats) uint64) func() uint64 {
		return func() uint64 {
			f.mu.Lock()
			s := f.core.Stats()
			f.mu.Unlock()
			return pick(&s)
		}
	}
	counter("meshrti_messages_sent_total", "Data-plane messages sent.", cs(func(s *core.Stats) uint64 { return s.Sent }))
	counter("meshrti_messages_delivered_total", "Data-plane messages received and handled.", cs(func(s *core.Stats) uint64 { return s.Delivered }))
	counter("meshrti_messages_malformed_total", "Payloads that did not decode, dropped.", cs(func(s *core.Stats) uint64 { return s.Malformed }))
	counter("meshrti_gaps_total", "Gaps reported by the reliable layer (messages lost for good).", cs(func(s *core.Stats) uint64 { return s.Gaps }))
	counter("meshrti_late_tso_total", "Time-stamped messages refused below the granted time.", cs(func(s *core.Stats) uint64 { return s.LateTSO }))
	counter("meshrti_stale_total", "Updates and deletes dropped for an old ownership epoch.", cs(func(s *core.Stats) uint64 { return s.Stale }))
	counter("meshrti_filtered_total", "Attribute values, interactions and announcements dropped by the region test.", cs(func(s *core.Stats) uint64 { return s.Filtered }))
	counter("meshrti_ddm_history_total", "Updates and interactions dropped for having been sent into a cell before the region moved over it.", cs(func(s *core.Stats) uint64 { return s.History }))
	counter("meshrti_send_errors_total", "Datagrams the transport failed to send.", f.sender.sendErrors.Load)
	counter("meshrti_frames_sent_total", "Data-plane frames handed to the transport.", f.sender.frames.Load)
	counter("meshrti_batches_total", "Batches of frames handed to the transport.", f.sender.batches.Load)
	counter("meshrti_backpressure_total", "Sends held because a receiver lagged a full window behind.", cs(func(s *core.Stats) uint64 { return s.Blocked }))
	counter("meshrti_read_pauses_total", "Times reading stopped because MaxQueuedEvents callbacks waited.", f.stats.paused.Load)
	gauge("meshrti_events_queued", "Callbacks waiting for Next.", func() int64 { return int64(f.events.len()) })
	if g, ok := f.ctl.(*gossipControl); ok {
		counter("meshrti_gossip_suspicions_total", "Members this federate's gossip member declared dead (a suspicion: only the federation's removal makes a federate lost).",
			func() uint64 { return g.c.Stats().Suspicions })
		counter("meshrti_gossip_refutations_total", "Members declared dead here that were heard alive again: false suspicions.",
			func() uint64 { return g.c.Stats().Refutations })
		counter("meshrti_gossip_lost_proposals_total", "Removals of suspected members this federate's gossip member proposed.",
			func() uint64 { return g.c.Stats().LostProposals })
	}
	rel := func(pick func(*reliable.Stats) uint64) func() uint64 {
		return func() uint64 {
			if s := m.rel.Load(); s != nil {
				return pick(s)
			}
			return 0
		}
	}
	for _, c := range []struct {
		name, help string
		pick       func(*reliable.Stats) uint64
	}{
		{"meshrti_reliable_data_frames_total", "Data and best-effort frames (bundles) sent.", func(s *reliable.Stats) uint64 { return s.DataFrames }},
		{"meshrti_reliable_fragments_total", "Fragments sent (messages larger than a frame).", func(s *reliable.Stats) uint64 { return s.Fragments }},
		{"meshrti_reliable_retransmits_total", "Messages retransmitted.", func(s *reliable.Stats) uint64 { return s.Retransmits }},
		{"meshrti_reliable_naks_sent_total", "NAK frames sent.", func(s *reliable.Stats) uint64 { return s.NAKs }},
		{"meshrti_reliable_naks_received_total", "NAK frames addressed to this federate.", func(s *reliable.Stats) uint64 { return s.NAKsReceived }},
		{"meshrti_reliable_acks_sent_total", "ACK frames sent.", func(s *reliable.Stats) uint64 { return s.Acks }},
		{"meshrti_reliable_heartbeats_total", "Heartbeat frames sent.", func(s *reliable.Stats) uint64 { return s.Heartbeats }},
		{"meshrti_reliable_duplicates_total", "Messages received again and dropped.", func(s *reliable.Stats) uint64 { return s.Duplicates }},
		{"meshrti_reliable_gap_messages_total", "Messages covered by gap reports.", func(s *reliable.Stats) uint64 { return s.GapMessages }},
		{"meshrti_reliable_reassembled_total", "Fragmented messages reassembled.", func(s *reliable.Stats) uint64 { return s.Reassembled }},
		{"meshrti_reliable_incomplete_total", "Fragmented messages dropped incomplete.", func(s *reliable.Stats) uint64 { return s.Incomplete }},
		{"meshrti_reliable_receivers_stalled_total", "Receivers that stopped acknowledging and no longer hold the window.", func(s *reliable.Stats) uint64 { return s.ReceiversStalled }},
	} {
		counter(c.name, c.help, rel(c.pick))
	}
	for _, d := range []struct {
		reason string
		pick   func(*reliable.Stats) uint64
	}{
		{"malformed", func(s *reliable.Stats) uint64 { return s.Malformed }},
		{"version", func(s *reliable.Stats) uint64 { return s.BadVersion }},
		{"federation", func(s *reliable.Stats) uint64 { return s.WrongFederation }},
		{"group", func(s *reliable.Stats) uint64 { return s.WrongGroup }},
		{"checksum", func(s *reliable.Stats) uint64 { return s.BadChecksum }},
		{"auth", func(s *reliable.Stats) uint64 { return s.AuthFailed }},
		{"replay", func(s *reliable.Stats) uint64 { return s.Replayed }},
		{"own", func(s *reliable.Stats) uint64 { return s.Own }},
		{"stale_incarnation", func(s *reliable.Stats) uint64 { return s.StaleIncarnation }},
		{"not_joined", func(s *reliable.Stats) uint64 { return s.NotJoined }},
		{"reorder_window", func(s *reliable.Stats) uint64 { return s.ReorderDropped }},
	} {
		dl := metrics.Labels{"federation": f.cfg.Federation, "federate": f.name, "reason": d.reason}
		errs = append(errs, reg.CounterFunc("meshrti_reliable_frames_dropped_total", "Frames dropped by the reliable layer, by reason.", dl, rel(d.pick)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("peer: metrics: %w", err)
	}
	return nil
}

// publishStats gives the metrics callbacks a fresh copy of the reliable
// endpoint's counters. Under mu.
func (f *Federate) publishStats() {
	if f.cfg.Metrics == nil {
		return
	}
	s := f.core.ReliableStats()
	f.metrics.rel.Store(&s)
}

// SetDataKeys replaces the data-plane keys of a federate joined with
// Config.Key: keys[0] seals what it sends from now on, and frames sealed
// with any of keys are accepted. Rotate in three steps across the
// federation so that no frame is lost: every federate adds the new key
// second, then every federate puts it first, then every federate drops
// the old one (docs/dataplane.md). Config.Key is key id 0.
func (f *Federate) SetDataKeys(keys []reliable.Key) error {
	return f.callAny(func() error { return f.core.SetKeys(keys) })
}
