package lab

import (
	"slices"
	"testing"
	"time"
)

// A schedule is a function of its seed, its faults follow one another
// with a pause between, stay within the span, and over many seeds every
// kind is drawn.
func TestSchedule(t *testing.T) {
	cfg := ScheduleConfig{Hosts: 4, Quiet: 2 * time.Second, Within: 40 * time.Second, MaxFor: 5 * time.Second, Faults: 6}
	seen := map[FaultKind]int{}
	for seed := range uint64(300) {
		s := Schedule(seed, cfg)
		if !slices.EqualFunc(s, Schedule(seed, cfg), func(a, b Fault) bool { return a.String() == b.String() }) {
			t.Fatalf("seed %d: two schedules differ", seed)
		}
		if len(s) == 0 {
			t.Fatalf("seed %d: no fault", seed)
		}
		var end time.Duration
		for i, f := range s {
			seen[f.Kind]++
			if f.At < cfg.Quiet || f.End() > cfg.Quiet+cfg.Within || f.For <= 0 {
				t.Errorf("seed %d: %v outside %v..%v", seed, f, cfg.Quiet, cfg.Quiet+cfg.Within)
			}
			if i > 0 && f.At < end+settle {
				t.Errorf("seed %d: %v begins before %v + %v", seed, f, end, settle)
			}
			end = f.End()
			for _, h := range f.Hosts {
				if h < 0 || h >= cfg.Hosts {
					t.Errorf("seed %d: %v names host %d", seed, f, h)
				}
			}
			if two := f.Kind == LinkLoss || f.Kind == OneWay || f.Kind == Duplicate; two && (len(f.Hosts) != 2 || f.Hosts[0] == f.Hosts[1]) {
				t.Errorf("seed %d: %v wants two hosts", seed, f)
			}
			if f.Kind == Partition && (len(f.Hosts) == 0 || len(f.Hosts) > cfg.Hosts/2) {
				t.Errorf("seed %d: %v: a side of 1 to %d hosts", seed, f, cfg.Hosts/2)
			}
			if (f.Kind == HostLoss || f.Kind == LinkLoss) && (f.P <= 0 || f.P >= 1) {
				t.Errorf("seed %d: %v: p out of (0, 1)", seed, f)
			}
		}
	}
	for _, k := range FaultKinds {
		if seen[k] == 0 {
			t.Errorf("no %s fault in 300 seeds", k)
		}
	}
	if s := Schedule(1, ScheduleConfig{Hosts: 3, Quiet: time.Second, Within: 10 * time.Second, MaxFor: time.Second, Faults: 2, Kinds: []FaultKind{Pause}}); s[0].Kind != Pause || s[1].Kind != Pause {
		t.Errorf("kinds not kept to Pause: %v", s)
	}
}
