package lab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// FaultKind names a fault the lab injects from outside the processes.
type FaultKind string

const (
	// HostLoss drops a share (Fault.P) of every packet a host receives
	// from the others (iptables' statistic match), for Fault.For.
	HostLoss FaultKind = "host-loss"
	// LinkLoss drops a share of the packets from one host to another.
	LinkLoss FaultKind = "link-loss"
	// OneWay cuts everything from Fault.Hosts[0] to Fault.Hosts[1].
	OneWay FaultKind = "one-way"
	// Partition splits the hosts into Fault.Hosts and the rest, both
	// ways.
	Partition FaultKind = "partition"
	// Kill sends SIGKILL to the process of a host; it is started again
	// under the same federate name and type after Fault.For.
	Kill FaultKind = "kill"
	// Pause stops the process of a host (SIGSTOP) for Fault.For, then
	// resumes it (SIGCONT): a long GC pause.
	Pause FaultKind = "pause"
	// Duplicate copies every packet a host sends to another host
	// (iptables' TEE) for Fault.For.
	Duplicate FaultKind = "duplicate"
)

// FaultKinds lists every kind, in the order Schedule draws from.
var FaultKinds = []FaultKind{HostLoss, LinkLoss, OneWay, Partition, Kill, Pause, Duplicate}

// Fault is one fault of a run: what, where, when it starts (At, from the
// start of the run) and how long it lasts (For). Hosts are host indexes.
type Fault struct {
	Kind  FaultKind     `json:"kind"`
	Hosts []int         `json:"hosts"`
	P     float64       `json:"p,omitempty"`
	At    time.Duration `json:"at"`
	For   time.Duration `json:"for"`
}

func (f Fault) String() string {
	s := fmt.Sprintf("%s %v at %v for %v", f.Kind, f.Hosts, f.At.Round(time.Millisecond), f.For.Round(time.Millisecond))
	if f.P > 0 {
		s += fmt.Sprintf(" p=%.2f", f.P)
	}
	return s
}

// End is when the fault is over (healed, resumed, or the process
// started again).
func (f Fault) End() time.Duration { return f.At + f.For }

// ScheduleConfig says what faults a run may draw.
type ScheduleConfig struct {
	Hosts int
	// Within is the span faults start in, after Quiet; each lasts at
	// most MaxFor and ends before Within is over.
	Quiet, Within, MaxFor time.Duration
	// Faults is how many faults to draw; Kinds the kinds to draw from
	// (nil: all).
	Faults int
	Kinds  []FaultKind
}

// Schedule draws a run's faults from seed: the same seed and config give
// the same schedule. Faults do not overlap: each starts after the one
// before it ended and the hosts had a moment to settle, so every fault
// meets a federation that recovered from the last, and a heal is a point
// after which liveness can be measured.
func Schedule(seed uint64, cfg ScheduleConfig) []Fault {
	r := rand.New(rand.NewPCG(seed, 0x6c6162))
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = FaultKinds
	}
	var out []Fault
	at := cfg.Quiet
	end := cfg.Quiet + cfg.Within
	for range cfg.Faults {
		if at >= end {
			break
		}
		f := Fault{Kind: kinds[r.IntN(len(kinds))]}
		dur := func(lo time.Duration) time.Duration {
			if cfg.MaxFor <= lo {
				return lo
			}
			return lo + time.Duration(r.Int64N(int64(cfg.MaxFor-lo)))
		}
		host := r.IntN(cfg.Hosts)
		// other draws a host that is not host.
		other := func() int {
			o := r.IntN(cfg.Hosts - 1)
			if o >= host {
				o++
			}
			return o
		}
		switch f.Kind {
		case HostLoss:
			f.Hosts, f.P, f.For = []int{host}, 0.05+0.25*r.Float64(), dur(time.Second)
		case LinkLoss:
			f.Hosts, f.P, f.For = []int{host, other()}, 0.1+0.4*r.Float64(), dur(time.Second)
		case OneWay:
			f.Hosts, f.For = []int{host, other()}, dur(500*time.Millisecond)
		case Partition:
			// A side of one host, or of up to half of them: a
			// minority, or with an even count two sides of which
			// neither has a majority.
			side := r.Perm(cfg.Hosts)[:1+r.IntN(max(1, cfg.Hosts/2))]
			slices.Sort(side)
			f.Hosts, f.For = side, dur(500*time.Millisecond)
		case Kill:
			f.Hosts, f.For = []int{host}, dur(time.Second)
		case Pause:
			f.Hosts, f.For = []int{host}, dur(300*time.Millisecond)
		case Duplicate:
			f.Hosts, f.For = []int{host, other()}, dur(time.Second)
		}
		if f.At = at; f.End() > end {
			f.For = end - f.At
		}
		out = append(out, f)
		at = f.End() + settle
	}
	return out
}

// settle is the pause between two faults.
const settle = 2 * time.Second
