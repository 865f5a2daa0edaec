package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// TestBenchOwnershipProcesses runs bench ownership in two processes with
// a few hundred transfers, serial and pipelined, and checks its line:
// every transfer notified, each instance owned by the registrar alone at
// the end, and the floor measured. Like TestBenchJSON it measures
// nothing.
func TestBenchOwnershipProcesses(t *testing.T) {
	var res OwnershipResult
	out := nodetest.JSON(t, &res, 29, "bench", "ownership", "-json", "-count", "200", "-objects", "4")
	if res.Bench != "ownership" || res.Transfers != 200 || res.Objects != 4 || !res.Consistent || res.Error != "" {
		t.Errorf("result %+v", res)
	}
	if res.TransfersPerS <= 0 || res.Seconds <= 0 || res.PipelinedPerS <= 0 || res.PipelinedSeconds <= 0 {
		t.Errorf("serial %v transfers/s in %v s, pipelined %v/s in %v s", res.TransfersPerS, res.Seconds, res.PipelinedPerS, res.PipelinedSeconds)
	}
	if res.FramesPerTransfer <= 0 || res.PipelinedFramesPerTransfer <= 0 {
		t.Errorf("%v and %v frames per transfer", res.FramesPerTransfer, res.PipelinedFramesPerTransfer)
	}
	if res.RawPerS <= 0 || res.RawPairsPerS*2 != res.RawPerS || res.RawPairs != 100 || res.Ratio <= 0 ||
		res.RawPipelinedPerS <= 0 || res.PipelinedRatio <= 0 || res.GOMAXPROCS < 1 {
		t.Errorf("floor %v transfers/s (%d pairs at %v/s), ratio %v; pipelined %v/s, ratio %v; GOMAXPROCS %d",
			res.RawPerS, res.RawPairs, res.RawPairsPerS, res.Ratio, res.RawPipelinedPerS, res.PipelinedRatio, res.GOMAXPROCS)
	}
	if res.HopBytes <= reliable.HeaderLen+4 || res.HopBytes > 400 {
		t.Errorf("%d-byte floor datagrams", res.HopBytes)
	}
	for _, k := range []string{`"bench":"ownership"`, `"transfers"`, `"transfers_per_s"`, `"raw_per_s"`, `"ratio"`,
		`"consistent":true`, `"gomaxprocs"`} {
		if !bytes.Contains(out, []byte(k)) {
			t.Errorf("line lacks %s: %s", k, out)
		}
	}

	// The text form, serial only.
	args := []string{"bench", "ownership", "-count", "40", "-objects", "1"}
	out = nodetest.Output(t, 31, args...)
	for _, s := range []string{"transfers=40 in ", "transfers/s", "pairs/s): ratio", "consistent: one owner per instance"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("%v: output lacks %q:\n%s", args, s, out)
		}
	}
	if strings.Contains(string(out), "pipelined") {
		t.Errorf("%v: a pipelined run with one instance:\n%s", args, out)
	}

	for _, args := range [][]string{{"-count", "0"}, {"-count", "201"}, {"-objects", "0"}, {"-count", "20", "-objects", "11"},
		{"-timeout", "0s"}, {"-role", "nonsense"}, {"-nonsense"}, {"extra"}} {
		var o, e bytes.Buffer
		if code := Main(append([]string{"ownership"}, args...), &o, &e); code != 2 {
			t.Errorf("bench ownership %v: exit %d, want 2 (%s)", args, code, strings.TrimSpace(e.String()))
		}
	}
}

// TestOwnershipLoopInProcess runs every phase of the benchmark between
// two federates of this process over the in-memory network (under -race
// in CI): each side's tallies add up and every instance ends with the
// registrar alone.
func TestOwnershipLoopInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	network := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	a, b, attr, objs, err := ownershipPair(ctx, 16000, 3, network.Endpoint("A"), network.Endpoint("B"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	if len(objs) != 3 {
		t.Fatalf("discovered %v", objs)
	}
	for _, ph := range ownershipPhases(40, 3) {
		ta, tb, err := ownershipBoth(ctx, a, b, attr, objs, ph)
		if err != nil {
			t.Fatalf("%s: %v", ph.Name, err)
		}
		if err := ownershipCheck(ph, ta, tb); err != nil {
			t.Errorf("%s: %v", ph.Name, err)
		}
		if ta.Notified != tb.Notified || ta.Released != tb.Released || ta.Last == 0 || tb.Last == 0 {
			t.Errorf("%s: registrar %+v, acquirer %+v", ph.Name, ta, tb)
		}
	}
	// The floor's datagram: a frame holding a release, a request and an
	// announcement.
	hop, err := ownershipHopBytes(ctx, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if hop < reliable.HeaderLen+4+3*8 || hop > 400 {
		t.Errorf("%d-byte floor datagrams", hop)
	}
}

// The phases spread the transfers over the instances in whole rounds.
func TestOwnershipPhases(t *testing.T) {
	for _, tc := range []struct {
		count, objects int
		warm           []int
		pipelined      []int // nil: no pipelined run
	}{
		{20000, 16, []int{63, 63, 63, 63, 63, 63, 63, 63, 62, 62, 62, 62, 62, 62, 62, 62},
			[]int{625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625, 625}},
		{200, 1, []int{10}, nil},
		{10, 5, []int{1, 1, 1, 1, 1}, []int{1, 1, 1, 1, 1}},
		{14, 4, []int{1, 1, 1, 1}, []int{2, 2, 2, 1}},
	} {
		ps := ownershipPhases(tc.count, tc.objects)
		name := fmt.Sprintf("count %d, %d objects", tc.count, tc.objects)
		if ps[0].Name != "warm-up" || fmt.Sprint(ps[0].Rounds) != fmt.Sprint(tc.warm) {
			t.Errorf("%s: warm-up %v, want %v", name, ps[0], tc.warm)
		}
		if ps[1].Name != "serial" || len(ps[1].Rounds) != 1 || ps[1].transfers() != tc.count {
			t.Errorf("%s: serial run %v", name, ps[1])
		}
		switch {
		case tc.pipelined == nil && len(ps) != 2:
			t.Errorf("%s: phases %v", name, ps)
		case tc.pipelined != nil && (len(ps) != 3 || ps[2].Name != "pipelined" ||
			fmt.Sprint(ps[2].Rounds) != fmt.Sprint(tc.pipelined) || ps[2].transfers() != tc.count):
			t.Errorf("%s: phases %v, want a pipelined run of %v", name, ps, tc.pipelined)
		}
	}
}

// The check finds lost notifications or releases and a wrong owner.
func TestOwnershipCheck(t *testing.T) {
	ph := ownershipPhase{Name: "test", Rounds: []int{2, 1}} // 6 transfers
	good := ownershipTally{Notified: 3, Released: 3, Owned: 2}
	for _, tc := range []struct {
		name                string
		registrar, acquirer ownershipTally
		want                string // in the error; "" for none
	}{
		{"clean", good, ownershipTally{Notified: 3, Released: 3}, ""},
		{"a notification short", good, ownershipTally{Notified: 2, Released: 3}, "5 acquisition notifications"},
		{"a release short", good, ownershipTally{Notified: 3, Released: 2}, "5 releases"},
		{"two owners", good, ownershipTally{Notified: 3, Released: 3, Owned: 1}, "the registrar owns 2 and the acquirer 1"},
		{"no owner", ownershipTally{Notified: 3, Released: 3, Owned: 1}, ownershipTally{Notified: 3, Released: 3},
			"the registrar owns 1 and the acquirer 0"},
	} {
		err := ownershipCheck(ph, tc.registrar, tc.acquirer)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
