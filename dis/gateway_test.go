package dis

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer"
)

func espduFrom(t testing.TB, s string) *EntityState {
	t.Helper()
	p, err := Decode(hx(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return p.(*EntityState)
}

// DIS into the federation: an entity is discovered as the class of its
// type with every value, then updated with what changed; a Fire, an
// Attribute PDU, bad datagrams, a deactivation and a timeout.
func TestGatewayDISToHLA(t *testing.T) {
	r := newRig(t)
	gwFed := r.join("fed", "gw", StatusModule())
	obs := r.join("fed", "obs")
	r.subscribeAll(obs)
	reg := prometheus.NewRegistry()
	sink := newDISPeer(t)
	g := r.gateway(Config{Federate: gwFed, DIS: "127.0.0.1:0", Send: sink.addr(), Exercise: 3, Site: 9, Application: 9,
		Timeout: 700 * time.Millisecond, Registerer: reg})
	sim := newDISPeer(t)
	to := g.ListenAddr()

	tank := espduFrom(t, espduV6) // exercise 3, entity 1.2.42
	sim.send(to, tank)
	disc := next(t, obs, 5*time.Second, "the tank's discovery", func(ev peer.Event) bool { _, ok := ev.(peer.DiscoverObjectInstance); return ok }).(peer.DiscoverObjectInstance)
	class, _ := r.m.fdd.ObjectClassByHandle(disc.Class)
	if class.Name != "GroundVehicle" {
		t.Fatalf("discovered as %s", class.QualifiedName)
	}
	refl := next(t, obs, 5*time.Second, "the tank's values", func(ev peer.Event) bool {
		rv, ok := ev.(peer.ReflectAttributeValues)
		return ok && rv.Object == disc.Object
	}).(peer.ReflectAttributeValues)
	want := peer.AttributeValues{}
	if errs := r.m.EntityValues(class.Handle, tank, nil, want); len(errs) > 0 {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(refl.Values, want) {
		t.Errorf("first values %s\nwant %s", fmtKeys(r.decodeValues(class, refl.Values)), fmtKeys(r.decodeValues(class, want)))
	}
	if ts, ok := TagTimestamp(refl.Tag); !ok || ts != tank.Timestamp {
		t.Errorf("tag %q, want the time stamp %08X", refl.Tag, tank.Timestamp)
	}

	// A move: Spatial alone.
	moved := *tank
	moved.Location.X += 25
	moved.Timestamp = 0x2001
	sim.send(to, &moved)
	refl = next(t, obs, 5*time.Second, "the move", func(ev peer.Event) bool { _, ok := ev.(peer.ReflectAttributeValues); return ok }).(peer.ReflectAttributeValues)
	got := r.decodeValues(class, refl.Values)
	if len(got) != 1 || got["Spatial"] == nil {
		t.Errorf("after a move: %s", fmtKeys(got))
	}

	// An Attribute PDU sets the attribute it names.
	recs, _ := r.m.Records(class.Handle, func() peer.AttributeValues {
		a, _ := r.m.Attribute(class.Handle, "AcousticSignatureIndex")
		b, _ := r.cd.Encode(a.DataType, 12)
		return peer.AttributeValues{a.Handle: b}
	}())
	sim.send(to, &Attribute{Header: Header{Exercise: 3}, Origin: EntityID{1, 2, 0}, Sets: []AttributeRecordSet{{Entity: tank.ID, Records: recs}}})
	refl = next(t, obs, 5*time.Second, "the attribute record", func(ev peer.Event) bool { _, ok := ev.(peer.ReflectAttributeValues); return ok }).(peer.ReflectAttributeValues)
	if got := r.decodeValues(class, refl.Values); got["AcousticSignatureIndex"] != int64(12) || len(got) != 1 {
		t.Errorf("attribute record: %v", got)
	}

	// A Fire PDU names the firing entity by its instance's name.
	fire := &Fire{Header: Header{Exercise: 3, Timestamp: 77}, Firing: tank.ID, Event: EventID{1, 2, 5}, Range: 900,
		Burst: BurstDescriptor{Munition: EntityType{2, 2, 225, 2, 1, 0, 0}, Warhead: 1000, Fuse: 1000, Quantity: 1}}
	sim.send(to, fire)
	ri := next(t, obs, 5*time.Second, "WeaponFire", func(ev peer.Event) bool { _, ok := ev.(peer.ReceiveInteraction); return ok }).(peer.ReceiveInteraction)
	firing, _ := r.m.FireClass().Parameter("FiringObjectIdentifier")
	if v, _ := r.cd.Decode(firing.DataType, ri.Values[firing.Handle]); v != disc.Name {
		t.Errorf("FiringObjectIdentifier %v, want %q", v, disc.Name)
	}

	// Bad datagrams are dropped and counted.
	other := *tank
	other.Exercise = 4
	sim.send(to, &other)
	sim.sendRaw(to, []byte{1, 2, 3})
	b, _ := Encode(tank)
	sim.sendRaw(to, append(b, 0))
	b[2] = 25
	sim.sendRaw(to, b)

	// Deactivated: removed at once.
	gone := moved
	gone.Appearance |= appearanceDeactivated
	sim.send(to, &gone)
	next(t, obs, 5*time.Second, "the removal", func(ev peer.Event) bool {
		ro, ok := ev.(peer.RemoveObjectInstance)
		return ok && ro.Object == disc.Object
	})

	// Not heard for the timeout: removed.
	lone := *tank
	lone.ID.Entity = 99
	sim.send(to, &lone)
	disc2 := next(t, obs, 5*time.Second, "the second entity", func(ev peer.Event) bool { _, ok := ev.(peer.DiscoverObjectInstance); return ok }).(peer.DiscoverObjectInstance)
	start := time.Now()
	next(t, obs, 5*time.Second, "the timeout", func(ev peer.Event) bool {
		ro, ok := ev.(peer.RemoveObjectInstance)
		return ok && ro.Object == disc2.Object
	})
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Errorf("removed after %v, before the timeout of 700 ms", d)
	}

	st := g.Stats()
	if st.Received["entity_state"] != 4 || st.Received["fire"] != 1 || st.Received["attribute"] != 1 {
		t.Errorf("received %v", st.Received)
	}
	for reason, n := range map[string]uint64{"exercise": 1, "short": 1, "length": 1, "type": 1} {
		if st.Dropped[reason] != n {
			t.Errorf("dropped %v, want %s %d", st.Dropped, reason, n)
		}
	}
	if st.EntitiesFromDIS != 0 {
		t.Errorf("%d entities left", st.EntitiesFromDIS)
	}
	// The counters are metrics.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, mf := range mfs {
		found[mf.GetName()] = true
		if mf.GetName() == "meshrti_dis_pdus_dropped_total" {
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == "exercise" && m.GetLabel()[1].GetValue() == "exercise" && m.GetCounter().GetValue() != 1 {
					t.Errorf("exercise drops %v", m)
				}
			}
		}
	}
	for _, n := range []string{"meshrti_dis_pdus_received_total", "meshrti_dis_pdus_sent_total", "meshrti_dis_pdus_dropped_total", "meshrti_dis_entities", "meshrti_dis_values_dropped_total"} {
		if !found[n] {
			t.Errorf("no metric %s", n)
		}
	}
}

// The federation out to DIS: an HLA instance goes out as Entity State
// PDUs: at once, then only beyond the dead-reckoning thresholds or at
// the heartbeat, and deactivated when deleted; an instance without an
// EntityIdentifier gets an ID under the gateway's site and application;
// WeaponFire goes out as Fire; attributes without a field as records.
func TestGatewayHLAToDIS(t *testing.T) {
	r := newRig(t)
	gwFed := r.join("fed", "gw")
	sim := r.join("fed", "sim")
	class := r.publish(sim, "GroundVehicle")
	sink := newDISPeer(t)
	g := r.gateway(Config{Federate: gwFed, DIS: "127.0.0.1:0", Send: sink.addr(), Exercise: 3, Site: 9, Application: 8,
		Heartbeat: 1500 * time.Millisecond, Version: 7})

	tank := espduFrom(t, espduV6)
	tank.Appearance = 1<<22 | 1<<12
	tank.DeadReckoning.Algorithm = DRStatic // stays where it is told, for the heartbeat's location
	tank.Velocity, tank.DeadReckoning.LinearAcceleration, tank.DeadReckoning.AngularVelocity = Vector{}, Vector{}, Vector{}
	obj, err := sim.RegisterObjectInstance(class.Handle, "")
	if err != nil {
		t.Fatal(err)
	}
	tankName, _ := sim.GetObjectInstanceName(obj)
	vals := peer.AttributeValues{}
	r.m.EntityValues(class.Handle, tank, nil, vals)
	acoustic, _ := r.m.Attribute(class.Handle, "AcousticSignatureIndex")
	vals[acoustic.Handle], _ = r.cd.Encode(acoustic.DataType, 5)
	got := introduce(t, sim, obj, vals, r.m.Tag(tank.Timestamp), sink, "the tank", isEntity(tank.ID)).(*EntityState)
	want := *tank
	want.Header = Header{Version: 7, Exercise: 3, Type: TypeEntityState, Family: FamilyEntityInformation, Timestamp: tank.Timestamp, Length: got.Length}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("PDU\n%+v\nwant\n%+v", got, &want)
	}
	attr := sink.recv(2*time.Second, "its attribute records", func(p PDU) bool { _, ok := p.(*Attribute); return ok }).(*Attribute)
	if len(attr.Sets) != 1 || attr.Sets[0].Entity != tank.ID || attr.Origin != (EntityID{9, 8, 0}) || len(attr.Sets[0].Records) != 1 {
		t.Errorf("attribute PDU %+v", attr)
	}

	// Half a metre: within the threshold, no PDU until the heartbeat.
	small := *tank
	small.Location.X += 0.5
	vals = peer.AttributeValues{}
	r.m.EntityValues(class.Handle, &small, tank, vals)
	sim.UpdateAttributeValues(obj, vals, nil)
	sink.none(700*time.Millisecond, "a PDU for half a metre", isEntity(tank.ID))
	// Five metres: at once.
	big := *tank
	big.Location.X += 5
	vals = peer.AttributeValues{}
	r.m.EntityValues(class.Handle, &big, &small, vals)
	sim.UpdateAttributeValues(obj, vals, nil)
	moved := sink.recv(time.Second, "the move", isEntity(tank.ID)).(*EntityState)
	if moved.Location.X != big.Location.X {
		t.Errorf("moved to %v, want %v", moved.Location.X, big.Location.X)
	}
	sent := time.Now()
	// A changed light: at once.
	lit := big
	lit.Appearance |= 1 << 13
	vals = peer.AttributeValues{}
	r.m.EntityValues(class.Handle, &lit, &big, vals)
	sim.UpdateAttributeValues(obj, vals, nil)
	if p := sink.recv(time.Second, "the light", isEntity(tank.ID)).(*EntityState); p.Appearance != lit.Appearance {
		t.Errorf("appearance %#x, want %#x", p.Appearance, lit.Appearance)
	}
	// A value that does not decode by its FOM type is dropped alone,
	// counted; the rest of the update goes out.
	marking, _ := r.m.Attribute(class.Handle, "Marking")
	force, _ := r.m.Attribute(class.Handle, "ForceIdentifier")
	forceVal, _ := r.cd.Encode(force.DataType, "Neutral")
	dropped := g.Stats().ValuesDroppedToDIS
	sim.UpdateAttributeValues(obj, peer.AttributeValues{marking.Handle: []byte{1, 2}, force.Handle: forceVal}, nil)
	if p := sink.recv(time.Second, "the force", isEntity(tank.ID)).(*EntityState); p.Force != 3 || p.Marking != tank.Marking {
		t.Errorf("force %d, marking %q after a broken marking", p.Force, p.Marking.String())
	}
	if n := g.Stats().ValuesDroppedToDIS; n != dropped+1 {
		t.Errorf("values dropped %d, want %d", n, dropped+1)
	}
	// The heartbeat.
	hb := sink.recv(3*time.Second, "the heartbeat", isEntity(tank.ID)).(*EntityState)
	if d := time.Since(sent); d < 1200*time.Millisecond {
		t.Errorf("heartbeat after %v, heartbeat 1.5 s", d)
	}
	if hb.Location != big.Location {
		t.Errorf("heartbeat at %v", hb.Location)
	}

	// WeaponFire names the tank: its ID goes out.
	fireVals := peer.ParameterValues{}
	r.m.FireValues(&Fire{Firing: tank.ID, Event: EventID{1, 2, 3}, Range: 500}, mapNames{tank.ID: tankName}, fireVals)
	if err := sim.SendInteraction(r.m.FireClass().Handle, fireVals, r.m.Tag(99)); err != nil {
		t.Fatal(err)
	}
	f := sink.recv(2*time.Second, "the fire", func(p PDU) bool { _, ok := p.(*Fire); return ok }).(*Fire)
	if f.Firing != tank.ID || f.Range != 500 || f.Timestamp != 99 || f.Event != (EventID{1, 2, 3}) {
		t.Errorf("fire %+v", f)
	}

	// No EntityIdentifier: an assigned ID.
	obj2, _ := sim.RegisterObjectInstance(class.Handle, "")
	anon := *tank
	anon.ID = EntityID{}
	vals = peer.AttributeValues{}
	r.m.EntityValues(class.Handle, &anon, nil, vals)
	ident, _ := r.m.Attribute(class.Handle, "EntityIdentifier")
	delete(vals, ident.Handle)
	introduce(t, sim, obj2, vals, nil, sink, "the anonymous entity", isEntity(EntityID{9, 8, 1}))

	// Deleted: a last PDU, deactivated.
	if err := sim.DeleteObjectInstance(obj, nil); err != nil {
		t.Fatal(err)
	}
	last := sink.recv(2*time.Second, "the deactivation", func(p PDU) bool {
		es, ok := p.(*EntityState)
		return ok && es.ID == tank.ID && es.Appearance&appearanceDeactivated != 0
	}).(*EntityState)
	if last.Location != big.Location {
		t.Errorf("deactivated at %v", last.Location)
	}
	// The counters move just after the sends the sink saw.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st := g.Stats()
		if st.EntitiesToDIS == 1 && st.Sent["fire"] == 1 && st.Sent["entity_state"] >= 6 && st.Sent["attribute"] >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", st)
		}
	}
	// Closing the gateway deactivates the rest.
	g.Close()
	sink.recv(2*time.Second, "the deactivation at close", func(p PDU) bool {
		es, ok := p.(*EntityState)
		return ok && es.ID == (EntityID{9, 8, 1}) && es.Appearance&appearanceDeactivated != 0
	})
}

// On a broadcast address the gateway hears its own PDUs: they are echoes,
// never new entities.
func TestGatewayNoEcho(t *testing.T) {
	r := newRig(t)
	gwFed := r.join("fed", "gw")
	sim := r.join("fed", "sim")
	class := r.publish(sim, "Aircraft")
	r.subscribeAll(sim)
	port := nodetest.FreeUDPPort(t)
	addr := "127.255.255.255:" + port
	g := r.gateway(Config{Federate: gwFed, DIS: addr, Exercise: 1, Site: 9, Application: 8})
	listener := newBroadcastListener(t, addr)

	es := espduFrom(t, espduV7)
	obj, _ := sim.RegisterObjectInstance(class.Handle, "")
	vals := peer.AttributeValues{}
	r.m.EntityValues(class.Handle, es, nil, vals)
	introduce(t, sim, obj, vals, nil, listener, "the jet on the broadcast address", isEntity(es.ID))
	quiet(t, sim, time.Second, "a discovery of the echo", func(ev peer.Event) bool { _, ok := ev.(peer.DiscoverObjectInstance); return ok })
	if st := g.Stats(); st.Dropped[DropEcho] == 0 || st.EntitiesFromDIS != 0 || st.Received["entity_state"] != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{}.Validate()
	for _, s := range []string{"no federate", "DIS address", "site 0"} {
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), s) {
			t.Errorf("zero config: %v (want %q)", err, s)
		}
	}
	if err := (Config{DIS: "127.0.0.1:3000", Site: 1, Application: 1, Version: 5}).Validate(); err == nil || !strings.Contains(err.Error(), "version 5") {
		t.Errorf("version 5 sent: %v", err)
	}
	if DefaultOrientationThreshold < 0.052 || DefaultOrientationThreshold > 0.053 || math.IsNaN(DefaultOrientationThreshold) {
		t.Errorf("3 degrees is %v rad", DefaultOrientationThreshold)
	}
}
