package dis

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer"
)

// End to end: DIS on exercise 1 through gateway A, across the federation,
// out through gateway B on exercise 2, every field equal; and the other
// way. Both gateways and the DIS applications share one broadcast address
// and port, so each gateway hears the other's PDUs (another exercise:
// dropped) and its own (echoes): nothing loops.
func TestEndToEnd(t *testing.T) {
	r := newRig(t)
	addr := "127.255.255.255:" + nodetest.FreeUDPPort(t)
	a := r.gateway(Config{Federate: r.join("fed", "gateway-a", StatusModule()), DIS: addr, Exercise: 1, Site: 100, Application: 1, Version: 6})
	b := r.gateway(Config{Federate: r.join("fed", "gateway-b", StatusModule()), DIS: addr, Exercise: 2, Site: 200, Application: 1, Version: 7})
	obs := r.join("fed", "observer")
	r.subscribeAll(obs)
	net := newBroadcastListener(t, addr) // hears everything on the address
	sim := newDISPeer(t)
	to := netip.MustParseAddrPort(addr)

	// A tank on exercise 1, as a DIS simulator sends it (version 6).
	tank := espduFrom(t, espduV6)
	tank.Exercise = 1
	// A jet on exercise 2 (version 7 in, version 6 out through a).
	jet := espduFrom(t, espduV7)
	jet.Exercise = 2
	jet.DeadReckoning.Algorithm = DRFPB
	jet.Velocity = Vector{200, 0, -1}
	fromEx := func(ex uint8, id EntityID) func(PDU) bool {
		return func(p PDU) bool { es, ok := p.(*EntityState); return ok && es.Exercise == ex && es.ID == id }
	}
	var tankOut, jetOut *EntityState
	deadline := time.Now().Add(10 * time.Second)
	for tankOut == nil || jetOut == nil {
		if time.Now().After(deadline) {
			t.Fatalf("tank out %v, jet out %v", tankOut != nil, jetOut != nil)
		}
		sim.send(to, tank)
		sim.send(to, jet)
		// Each is sent until its first PDU on the other exercise: a
		// later copy changes nothing but the heard time.
		net.next(time.Now().Add(300*time.Millisecond), true, func(p PDU) bool {
			switch {
			case tankOut == nil && fromEx(2, tank.ID)(p):
				tankOut = p.(*EntityState)
			case jetOut == nil && fromEx(1, jet.ID)(p):
				jetOut = p.(*EntityState)
			}
			return tankOut != nil && jetOut != nil
		})
	}
	same := func(name string, got, want *EntityState, version uint8) {
		t.Helper()
		w := *want
		w.Exercise, w.Version, w.Status, w.Length = got.Exercise, version, 0, got.Length
		if !reflect.DeepEqual(got, &w) {
			t.Errorf("%s out\n%+v\nwant\n%+v", name, got, &w)
		}
	}
	same("tank", tankOut, tank, 7) // out through b, which sends version 7
	same("jet", jetOut, jet, 6)

	// Fire and detonation, tank at the jet, from exercise 1 to exercise 2.
	fire := &Fire{Header: Header{Version: 6, Exercise: 1, Timestamp: 0x4242}, Firing: tank.ID, Target: jet.ID, Event: EventID{1, 2, 77},
		FireMissionIndex: 3, Location: tank.Location, Velocity: Vector{300, 1, 2}, Range: 1500,
		Burst: BurstDescriptor{Munition: EntityType{2, 2, 225, 2, 1, 0, 0}, Warhead: 1000, Fuse: 1000, Quantity: 2, Rate: 60}}
	sim.send(to, fire)
	fireOut := net.recv(3*time.Second, "the fire on exercise 2", func(p PDU) bool { f, ok := p.(*Fire); return ok && f.Exercise == 2 }).(*Fire)
	sameOnExercise2(t, "fire", fireOut, fire, TypeFire)
	det := &Detonation{Header: Header{Version: 6, Exercise: 1, Timestamp: 0x4343}, Firing: tank.ID, Target: jet.ID, Event: EventID{1, 2, 77},
		Velocity: Vector{250, 0, -3}, Location: jet.Location, Burst: fire.Burst, EntityLocation: Vector{1, 2, 0.5}, Result: 1,
		Parameters: []VariableParameter{ArticulatedPart{ParameterType: 4107, Value: 0.25}.Param()}}
	sim.send(to, det)
	detOut := net.recv(3*time.Second, "the detonation on exercise 2", func(p PDU) bool { d, ok := p.(*Detonation); return ok && d.Exercise == 2 }).(*Detonation)
	sameOnExercise2(t, "detonation", detOut, det, TypeDetonation)

	// A state property of the tank, by name: out as the same record.
	ground := mustClass(t, r.m.fdd, "GroundVehicle")
	acoustic, _ := r.m.Attribute(ground.Handle, "AcousticSignatureIndex")
	v, _ := r.cd.Encode(acoustic.DataType, 31)
	recs, _ := r.m.Records(ground.Handle, peer.AttributeValues{acoustic.Handle: v})
	sim.send(to, &Attribute{Header: Header{Exercise: 1, Timestamp: 5}, Origin: EntityID{1, 2, 0}, RecordPDUType: 1, RecordProtocolVersion: 1,
		Sets: []AttributeRecordSet{{Entity: tank.ID, Records: recs}}})
	attrOut := net.recv(3*time.Second, "the attribute PDU on exercise 2", func(p PDU) bool {
		a, ok := p.(*Attribute)
		return ok && a.Exercise == 2 && len(a.Sets) == 1 && a.Sets[0].Entity == tank.ID
	}).(*Attribute)
	// The record comes out padded to 64 bits; its value is the same.
	got := peer.AttributeValues{}
	if errs := r.m.RecordValues(ground.Handle, attrOut.Sets[0].Records, got); len(errs) > 0 || !reflect.DeepEqual(got, peer.AttributeValues{acoustic.Handle: v}) {
		t.Errorf("records out %+v (%v), want %+v", attrOut.Sets[0].Records, errs, recs)
	}

	// No loop: after a while each gateway bridges one entity each way,
	// the federation holds two instances, and the echoes were dropped.
	time.Sleep(time.Second)
	for name, g := range map[string]*Gateway{"a": a, "b": b} {
		st := g.Stats()
		if st.EntitiesFromDIS != 1 || st.EntitiesToDIS != 1 {
			t.Errorf("gateway %s: %d from DIS, %d to DIS", name, st.EntitiesFromDIS, st.EntitiesToDIS)
		}
		if st.Dropped["exercise"] == 0 || st.Dropped[DropEcho] == 0 {
			t.Errorf("gateway %s dropped %v", name, st.Dropped)
		}
	}
	seen := map[peer.ObjectInstanceHandle]string{}
	ctxWait := time.Now().Add(2 * time.Second)
	for time.Now().Before(ctxWait) && len(seen) < 2 {
		ev := next(t, obs, 2*time.Second, "discoveries", func(ev peer.Event) bool { _, ok := ev.(peer.DiscoverObjectInstance); return ok })
		d := ev.(peer.DiscoverObjectInstance)
		if c, _ := r.m.fdd.ObjectClassByHandle(d.Class); r.m.IsEntityClass(c.Handle) {
			seen[d.Object] = d.Name
		}
	}
	quiet(t, obs, 500*time.Millisecond, "a third entity", func(ev peer.Event) bool {
		d, ok := ev.(peer.DiscoverObjectInstance)
		return ok && r.m.IsEntityClass(d.Class)
	})
	if len(seen) != 2 {
		t.Errorf("the federation holds %v", seen)
	}
}

// sameOnExercise2 checks that out is the warfare PDU in, of type typ, as
// the gateway of exercise 2 puts it out: in version 7, with its length.
func sameOnExercise2[T any, P interface {
	*T
	PDU
}](t *testing.T, name string, out, in P, typ uint8) {
	t.Helper()
	want := *in
	h := P(&want).PDUHeader()
	h.Version, h.Exercise, h.Length, h.Type, h.Family = 7, 2, out.PDUHeader().Length, typ, FamilyWarfare
	if !reflect.DeepEqual(out, P(&want)) {
		t.Errorf("%s out\n%+v\nwant\n%+v", name, out, &want)
	}
}
