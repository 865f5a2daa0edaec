package main

import (
	"encoding/json"
	"testing"

	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/peer/record"
)

// The JSON lines of the commands whose code lives in other packages
// (bench, node's ping and pong results, record -stats) keep their keys,
// in order: scripts and docs/results.md read them. Each line here is the
// encoding of a zero result, as the commands printed it before the
// benchmarks left this package.
func TestMovedCommandsJSONKeys(t *testing.T) {
	results := map[string]any{
		"latency": bench.LatencyResult{}, "throughput": bench.ThroughputResult{}, "timeadvance": bench.TimeResult{},
		"dis": bench.DISResult{}, "record": bench.RecordResult{}, "fedpro": bench.FedProResult{}, "fedpro-throughput": bench.FedProThroughputResult{},
		"lifecycle": bench.LifecycleResult{}, "ownership": bench.OwnershipResult{}, "ping": bench.PingResult{}, "pong": bench.PongResult{},
		"record-stats": record.Stats{},
	}
	want := map[string]string{
		"dis":               `{"bench":"","entities":0,"rate":0,"seconds":0,"dis_to_hla_sent":0,"dis_to_hla_reflected":0,"dis_to_hla_lost":0,"dis_to_hla_per_s":0,"hla_to_dis_updates":0,"hla_to_dis_pdus":0,"hla_to_dis_lost":0,"hla_to_dis_per_s":0,"dis_to_hla_latency_p50_us":0,"dis_to_hla_latency_p99_us":0,"dis_to_hla_latency_lost":0,"peer_rtt_p50_us":0,"peer_rtt_p99_us":0,"added_p50_us":0,"added_p99_us":0,"gateway":{"received":null,"sent":null,"dropped":null,"entities_from_dis":0,"entities_to_dis":0,"values_dropped_to_hla":0,"values_dropped_to_dis":0},"gomaxprocs":0}`,
		"fedpro":            `{"round_trips":0,"payload_bytes":0,"fedpro_rtt_p50_us":0,"fedpro_rtt_p90_us":0,"fedpro_rtt_p99_us":0,"peer_rtt_p50_us":0,"peer_rtt_p90_us":0,"peer_rtt_p99_us":0,"floor_rtt_p50_us":0,"floor_rtt_p99_us":0,"ratio":0,"floor_acked_rtt_p50_us":0,"floor_acked_rtt_p99_us":0,"ratio_acked":0}`,
		"fedpro-throughput": `{"mode":"","size_bytes":0,"updates":0,"seconds":0,"updates_per_s":0,"call_p50_us":0,"call_p99_us":0,"daemon_cpu_us_per_update":0,"daemon_allocs_per_update":0,"daemon_ctxsw_per_update":0,"daemon_gomaxprocs":0,"floor_updates_per_s":0,"floor_daemon_cpu_us_per_update":0,"ratio":0,"peer_updates_per_s":0}`,
		"latency":           `{"bench":"","payload":0,"pings":0,"rtt_p50_us":0,"rtt_p90_us":0,"rtt_p99_us":0,"raw_rtt_p50_us":0,"raw_rtt_p99_us":0,"ratio":0,"ratio_p99":0,"raw_pings":0,"transport":"","raw_inprocess_rtt_p50_us":0,"raw_inprocess_rtt_p99_us":0,"gomaxprocs":0,"receivers":0}`,
		"lifecycle":         `{"bench":"","instances":0,"reserved_names":false,"payload":0,"frame":0,"registered_per_s":0,"register_seconds":0,"discovered_per_s":0,"discover_seconds":0,"reflected":0,"reflect_seconds":0,"late_discovered_per_s":0,"late_seconds":0,"late_join_seconds":0,"duplicate_discoveries":0,"duplicate_reflections":0,"strays":0,"raw_per_s":0,"raw_datagrams_per_s":0,"raw_sent":0,"raw_received":0,"register_bytes":0,"update_bytes":0,"ratio":0,"late_ratio":0,"frames":0,"blocked":0,"gomaxprocs":0}`,
		"ownership":         `{"bench":"","transfers":0,"seconds":0,"transfers_per_s":0,"frames_per_transfer":0,"objects":0,"hop_bytes":0,"raw_per_s":0,"raw_pairs_per_s":0,"raw_pairs":0,"ratio":0,"raw_lost":0,"consistent":false,"gomaxprocs":0}`,
		"ping":              `{"rttMedianMicros":0,"rttP90Micros":0,"pings":0,"updates":0,"payloadBytes":0,"reflected":0,"seconds":0,"updatesPerSec":0}`,
		"pong":              `{"pings":0,"reflects":0}`,
		"record":            `{"bench":"","payload":0,"frame":0,"random":false,"updates":0,"updates_per_s":0,"sent_per_s":0,"recorded":0,"recorded_per_s":0,"file_bytes":0,"ratio":0,"gomaxprocs":0}`,
		"record-stats":      `{"events":0,"updates":0,"updates_per_s":0,"burst_updates":0,"bytes":0}`,
		"throughput":        `{"bench":"","payload":0,"frame":0,"updates":0,"seconds":0,"updates_per_s":0,"raw_per_s":0,"raw_sent":0,"raw_received":0,"ratio":0,"raw_inprocess_per_s":0,"frames":0,"batches":0,"blocked":0,"gomaxprocs":0,"transport":"","receivers":0}`,
		"timeadvance":       `{"bench":"","federates":0,"inprocess":false,"grants_per_s_per_federate":0,"min_grants_per_s_per_federate":0,"steps":0,"seconds":0,"messages_per_grant":0,"cut_rounds_per_grant":0,"gomaxprocs":0}`,
	}
	for name, v := range results {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(b) != want[name] {
			t.Errorf("%s: the zero line is\n%s\nwant\n%s", name, b, want[name])
		}
	}
	if len(results) != len(want) {
		t.Errorf("%d results, %d lines wanted", len(results), len(want))
	}
}
