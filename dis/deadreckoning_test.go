package dis

import (
	"math"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/hla"
)

func TestExtrapolate(t *testing.T) {
	es := &EntityState{
		Location: WorldCoordinates{100, 200, 300}, Velocity: Vector{10, 0, -2},
		DeadReckoning: DeadReckoning{Algorithm: DRFPW, LinearAcceleration: Vector{2, 0, 0}, AngularVelocity: Vector{0, 0, 0.5}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-5 }
	loc, _ := Extrapolate(es, 2*time.Second)
	if loc != (WorldCoordinates{120, 200, 296}) {
		t.Errorf("FPW: %v", loc)
	}
	es.DeadReckoning.Algorithm = DRRVW
	loc, ori := Extrapolate(es, 2*time.Second)
	if loc != (WorldCoordinates{124, 200, 296}) || !near(float64(ori.Psi), 1) {
		t.Errorf("RVW: %v %v", loc, ori)
	}
	es.DeadReckoning.Algorithm = DRStatic
	if loc, _ := Extrapolate(es, time.Hour); loc != es.Location {
		t.Errorf("static moved to %v", loc)
	}
	// Frozen entities do not move.
	es.DeadReckoning.Algorithm = DRFPW
	es.Appearance |= appearanceFrozen
	if loc, _ := Extrapolate(es, time.Hour); loc != es.Location {
		t.Errorf("frozen moved to %v", loc)
	}
	// Body axes: heading psi = 90° turns body x into world y.
	body := &EntityState{Velocity: Vector{10, 0, 0}, Orientation: EulerAngles{Psi: math.Pi / 2}, DeadReckoning: DeadReckoning{Algorithm: DRFPB}}
	loc, _ = Extrapolate(body, time.Second)
	if !near(loc.X, 0) || !near(loc.Y, 10) || !near(loc.Z, 0) {
		t.Errorf("FPB heading east: %v", loc)
	}
	if a := angleBetween(EulerAngles{Psi: 3.1}, EulerAngles{Psi: -3.1}); !near(a, 2*math.Pi-6.2) {
		t.Errorf("angle across ±π: %v", a)
	}
}

// The filter passes a position error of the threshold and more, an
// orientation error likewise, a change of state at once, and a
// heartbeat; nothing else.
func TestDRFilter(t *testing.T) {
	d, err := newDRFilter(1, 3*math.Pi/180, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	obj := hla.ObjectInstanceHandle{Federate: 1, Serial: 1}
	state := []byte("a")
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	d.record(obj, state, 0)
	// As the gateway does: what is due is sent, and recorded.
	for _, c := range []struct {
		pos, ori float64
		state    string
		at       float64
		want     bool
	}{
		{0.5, 0, "a", 1, false},
		{0.99, 0.05, "a", 1.5, false},
		{1.0, 0, "a", 2, true},
		{0, 0.06, "a", 2.5, true},
		{0.2, 0.01, "a", 7.4, false},
		{0.2, 0.01, "a", 7.6, true}, // heartbeat, 5.1 s after the last send
		{0, 0, "b", 8, true},
	} {
		if got := d.due(obj, c.pos, c.ori, []byte(c.state), at(c.at)); got != c.want {
			t.Errorf("%+v: due %v", c, got)
		}
		if c.want {
			d.record(obj, []byte(c.state), at(c.at))
		}
	}
	state = []byte("b")
	if d.due(obj, 0.1, 0, state, at(12.9)) {
		t.Error("due 4.9 s after a send")
	}
	if !d.due(obj, 0.1, 0, state, at(13.1)) {
		t.Error("no heartbeat 5.1 s after a send")
	}
}
