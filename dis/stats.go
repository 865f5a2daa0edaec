package dis

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// pduTypes are the PDU types counted by type, in the order of the
// counters; "other" is last.
var pduTypes = []uint8{TypeEntityState, TypeFire, TypeDetonation, TypeAttribute, 0}

func typeIndex(t uint8) int {
	switch t {
	case TypeEntityState:
		return 0
	case TypeFire:
		return 1
	case TypeDetonation:
		return 2
	case TypeAttribute:
		return 3
	}
	return 4
}

// DropEcho is the drop reason of a PDU the gateway sent itself, heard
// back (its source is the gateway's sending socket, or it speaks for an
// entity the gateway sends). It is not an error.
const DropEcho = "echo"

// Stats are a Gateway's counters since it started.
type Stats struct {
	// Received and Sent count PDUs by type name (entity_state, fire,
	// detonation, attribute, other): read from the DIS socket (once
	// decoded, echoes excepted) and written to it.
	Received map[string]uint64 `json:"received"`
	Sent     map[string]uint64 `json:"sent"`
	// Dropped counts datagrams dropped by reason: the decode reasons
	// (short, length, type, family, version, exercise) and echo.
	Dropped map[string]uint64 `json:"dropped"`
	// EntitiesFromDIS are the DIS entities registered in the federation
	// now; EntitiesToDIS the HLA instances sent to DIS now.
	EntitiesFromDIS int `json:"entities_from_dis"`
	EntitiesToDIS   int `json:"entities_to_dis"`
	// ValuesDroppedToHLA and ValuesDroppedToDIS count values that could
	// not be carried (ValueError): a field with no RPR alternative, a
	// value that does not encode or decode by its FOM type, a name or
	// entity the other side does not know. The rest of their PDU or
	// update was carried.
	ValuesDroppedToHLA uint64 `json:"values_dropped_to_hla"`
	ValuesDroppedToDIS uint64 `json:"values_dropped_to_dis"`
}

// counters are the atomics behind Stats, written by the gateway's
// goroutines and read by anyone.
type counters struct {
	received, sent       [5]atomic.Uint64
	dropped              [numReasons + 1]atomic.Uint64 // by Reason-1; the last is echo
	fromDIS, toDIS       atomic.Int64
	valuesHLA, valuesDIS atomic.Uint64
}

func (c *counters) drop(r Reason) { c.dropped[r-1].Add(1) }
func (c *counters) echo()         { c.dropped[numReasons].Add(1) }

func (c *counters) snapshot() Stats {
	s := Stats{Received: map[string]uint64{}, Sent: map[string]uint64{}, Dropped: map[string]uint64{}}
	for i, t := range pduTypes {
		s.Received[TypeName(t)] = c.received[i].Load()
		s.Sent[TypeName(t)] = c.sent[i].Load()
	}
	for _, r := range Reasons {
		s.Dropped[r.String()] = c.dropped[r-1].Load()
	}
	s.Dropped[DropEcho] = c.dropped[numReasons].Load()
	s.EntitiesFromDIS, s.EntitiesToDIS = int(c.fromDIS.Load()), int(c.toDIS.Load())
	s.ValuesDroppedToHLA, s.ValuesDroppedToDIS = c.valuesHLA.Load(), c.valuesDIS.Load()
	return s
}

// collector exposes the counters as Prometheus metrics.
type collector struct {
	c                                 *counters
	received, sent, dropped, entities *prometheus.Desc
	values                            *prometheus.Desc
}

func newCollector(c *counters, labels prometheus.Labels) *collector {
	return &collector{
		c:        c,
		received: prometheus.NewDesc("meshrti_dis_pdus_received_total", "DIS PDUs read from the DIS socket and carried into the federation, by type.", []string{"type"}, labels),
		sent:     prometheus.NewDesc("meshrti_dis_pdus_sent_total", "DIS PDUs sent on the DIS socket, by type.", []string{"type"}, labels),
		dropped:  prometheus.NewDesc("meshrti_dis_pdus_dropped_total", "DIS datagrams dropped, by reason (short, length, type, family, version, exercise, echo).", []string{"reason"}, labels),
		entities: prometheus.NewDesc("meshrti_dis_entities", "Entities bridged now: from_dis (DIS entities registered in the federation), to_dis (HLA instances sent as Entity State PDUs).", []string{"direction"}, labels),
		values:   prometheus.NewDesc("meshrti_dis_values_dropped_total", "Attribute and parameter values that could not be carried, by direction (to_hla, to_dis); the rest of their PDU or update was.", []string{"direction"}, labels),
	}
}

func (k *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{k.received, k.sent, k.dropped, k.entities, k.values} {
		ch <- d
	}
}

func (k *collector) Collect(ch chan<- prometheus.Metric) {
	s := k.c.snapshot()
	for name, n := range s.Received {
		ch <- prometheus.MustNewConstMetric(k.received, prometheus.CounterValue, float64(n), name)
	}
	for name, n := range s.Sent {
		ch <- prometheus.MustNewConstMetric(k.sent, prometheus.CounterValue, float64(n), name)
	}
	for name, n := range s.Dropped {
		ch <- prometheus.MustNewConstMetric(k.dropped, prometheus.CounterValue, float64(n), name)
	}
	ch <- prometheus.MustNewConstMetric(k.entities, prometheus.GaugeValue, float64(s.EntitiesFromDIS), "from_dis")
	ch <- prometheus.MustNewConstMetric(k.entities, prometheus.GaugeValue, float64(s.EntitiesToDIS), "to_dis")
	ch <- prometheus.MustNewConstMetric(k.values, prometheus.CounterValue, float64(s.ValuesDroppedToHLA), "to_hla")
	ch <- prometheus.MustNewConstMetric(k.values, prometheus.CounterValue, float64(s.ValuesDroppedToDIS), "to_dis")
}

// numReasons is len(Reasons).
const numReasons = int(ReasonOtherExercise)
