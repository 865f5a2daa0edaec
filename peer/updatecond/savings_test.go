package updatecond

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// The noisy sine of TestNoisySineSavings: a 1 Hz sine of amplitude 100
// plus uniform noise of ±0.5 (0.5% of the amplitude), sampled at 60 Hz
// for 10 minutes of simulated time.
const (
	sineAmplitude = 100.0
	sineHz        = 1.0
	sineNoise     = 0.005 * sineAmplitude
	sineRate      = 60
	sineDuration  = 10 * time.Minute
	sineSeed      = 1
)

// sineRun offers a noisy sine of frequency hz (amplitude, noise, rate
// and duration as above), plus offset, as Vehicle.Speed and returns the
// Filter's counters.
func sineRun(t testing.TB, fx *fixture, p Policy, hz, offset float64) Stats {
	t.Helper()
	f := fx.filter(t, Config{Default: p})
	cls := fx.class(t, "Vehicle")
	speed := fx.attr(t, "Vehicle", "Speed")
	rng := rand.New(rand.NewPCG(sineSeed, 0))
	buf := make([]byte, 8)
	vals := hla.AttributeValues{speed.Handle: buf}
	n := int(sineDuration.Seconds() * sineRate)
	for i := 0; i < n; i++ {
		at := time.Duration(i) * time.Second / sineRate
		v := offset + sineAmplitude*math.Sin(2*math.Pi*hz*at.Seconds()) + sineNoise*(2*rng.Float64()-1)
		codec.AppendFloat64BE(buf[:0], v) // the federate reuses its buffer
		f.Filter(obj(1), cls.Handle, vals, Now{Wall: at})
	}
	return f.Stats()
}

// TestNoisySineSavings reports how many updates the default policy, and a
// few others, save on a noisy sine. The figures are in docs/updates.md;
// rerun with
//
//	go test -run NoisySine -v ./peer/updatecond/
func TestNoisySineSavings(t *testing.T) {
	fx := newFixture(t)
	rows := []struct {
		name       string
		policy     Policy
		hz, offset float64
	}{
		{"default (2%, 60 s heartbeat, 5 s max-unchanged)", Policy{}, sineHz, 0},
		{"relative 5%", Policy{Threshold: rel(5)}, sineHz, 0},
		{"absolute 1 (2× the noise)", Policy{Threshold: abs(1)}, sineHz, 0},
		{"absolute 2 (2% of the amplitude)", Policy{Threshold: abs(2)}, sineHz, 0},
		{"absolute 5", Policy{Threshold: abs(5)}, sineHz, 0},
		{"none (every change)", Policy{Threshold: none}, sineHz, 0},
		{"default, sine around 1000", Policy{}, sineHz, 1000},
		{"default, 0.1 Hz sine", Policy{}, 0.1, 0},
		{"absolute 2, 0.1 Hz sine", Policy{Threshold: abs(2)}, 0.1, 0},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "noisy sine: %g Hz unless said, amplitude %g, noise ±%g, sampled at %d Hz for %v\n", sineHz, sineAmplitude, sineNoise, sineRate, sineDuration)
	fmt.Fprintf(&b, "| %-48s | %7s | %7s | %6s | %10s | %4s |\n", "policy", "offered", "sent", "saved", "heartbeats", "held")
	var def Stats
	for i, r := range rows {
		st := sineRun(t, fx, r.policy, r.hz, r.offset)
		if i == 0 {
			def = st
		}
		if st.Offered != st.Sent+st.Suppressed || st.Undecodable != 0 {
			t.Errorf("%s: inconsistent stats %+v", r.name, st)
		}
		fmt.Fprintf(&b, "| %-48s | %7d | %7d | %5.1f%% | %10d | %4d |\n", r.name, st.Offered, st.Sent,
			100*float64(st.Suppressed)/float64(st.Offered), st.Heartbeats, st.Held)
	}
	t.Log("\n" + b.String())
	// The figures depend only on the seed. A 1 Hz sine of amplitude 100
	// moves up to 10.5 a frame at 60 Hz, far more than 2% of its value
	// except near the peaks and troughs, so the default saves little;
	// bound the figure loosely so that a change of semantics is noticed.
	if n := uint64(sineDuration.Seconds() * sineRate); def.Offered != n {
		t.Errorf("offered %d, want %d", def.Offered, n)
	}
	if saved := float64(def.Suppressed) / float64(def.Offered); saved < 0.05 || saved > 0.15 {
		t.Errorf("default policy saved %.1f%% of the updates, outside the expected 5%%..15%%", 100*saved)
	}
}
