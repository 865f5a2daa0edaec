package core

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

// The core is pure: these tests drive cores by hand over a loss-free
// in-test network that hands every frame to every core joined to its
// group, in order.

const coreFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>core test FOM</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Tank</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Pos</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <attribute><name>Fuel</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

type testNet struct {
	t      *testing.T
	cores  []*Core
	groups []map[transport.Group]bool
	events [][]Event
	ops    [][]Op
	held   map[string]FederateHandle // the register, for OpAcquire
}

func newTestNet(t *testing.T, n int) *testNet {
	t.Helper()
	doc, err := fomxml.ParseBytes("core.xml", []byte(coreFOM))
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNet{t: t, held: make(map[string]FederateHandle)}
	for i := range n {
		var members []Member
		for j := range n {
			members = append(members, Member{Handle: FederateHandle(j + 1), Name: string(rune('A' + j))})
		}
		c, err := New(Config{FDD: fdd, Federation: "core", Self: FederateHandle(i + 1), Name: string(rune('A' + i)), Incarnation: 1, Members: members})
		if err != nil {
			t.Fatal(err)
		}
		tn.cores = append(tn.cores, c)
		tn.groups = append(tn.groups, make(map[transport.Group]bool))
		tn.events = append(tn.events, nil)
		tn.ops = append(tn.ops, nil)
	}
	tn.settle(5)
	return tn
}

// flush takes every core's Ready and delivers the frames, until quiet.
// Ops are answered at once from the test's register.
func (tn *testNet) flush() {
	for round := 0; round < 1000; round++ {
		busy := false
		for i, c := range tn.cores {
			rd := c.Ready(true)
			for _, g := range rd.Groups {
				tn.groups[i][g.Group] = g.Join
			}
			tn.events[i] = append(tn.events[i], rd.Events...)
			frames := append([]transport.Packet(nil), rd.Frames...)
			ops := append([]Op(nil), rd.Ops...)
			c.Advance(rd)
			for _, op := range ops {
				busy = true
				h, ok := tn.held[op.Key]
				if !ok {
					tn.held[op.Key], h = c.self, c.self
				}
				c.OpDone(op.ID, OpResult{Held: h == c.self, Holder: h})
			}
			busy = busy || len(frames) > 0
			tn.deliver(i, frames)
		}
		if !busy {
			return
		}
	}
	tn.t.Fatal("the network never went quiet")
}

// deliver steps core i's frames into every other core that joined
// their group.
func (tn *testNet) deliver(i int, frames []transport.Packet) {
	for _, p := range frames {
		for j, o := range tn.cores {
			if j != i && tn.groups[j][p.Group] {
				o.Step(p.Group, p.Data)
			}
		}
	}
}

// settle ticks every core n times, flushing after each.
func (tn *testNet) settle(n int) {
	for range n {
		for _, c := range tn.cores {
			c.Tick()
		}
		tn.flush()
	}
}

// take returns core i's events so far and forgets them.
func (tn *testNet) take(i int) []Event {
	evs := tn.events[i]
	tn.events[i] = nil
	return evs
}

func (tn *testNet) handles() (tank ObjectClassHandle, pos, fuel AttributeHandle) {
	oc, ok := tn.cores[0].FDD().ObjectClass("Tank")
	if !ok {
		tn.t.Fatal("no Tank")
	}
	p, _ := oc.Attribute("Pos")
	f, _ := oc.Attribute("Fuel")
	return oc.Handle, p.Handle, f.Handle
}

// registered has core pub publish Tank.Pos and register an instance,
// core sub subscribe to it, and returns the instance once sub knows it.
func (tn *testNet) registered(pub, sub int) ObjectInstanceHandle {
	tn.t.Helper()
	tank, pos, _ := tn.handles()
	must(tn.t, tn.cores[pub].PublishObjectClassAttributes(tank, []AttributeHandle{pos}))
	must(tn.t, tn.cores[sub].SubscribeObjectClassAttributes(tank, []AttributeHandle{pos}, true, ""))
	obj, err := tn.cores[pub].RegisterObjectInstance(tank, "")
	must(tn.t, err)
	tn.settle(3)
	tn.take(sub)
	return obj
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An update of an instance with a reserved name, heard without the name
// before the registration, waits for it: the receiver asks the owners,
// discovers the instance under its name and then reflects what waited.
func TestUnnamedUpdateWaitsForTheName(t *testing.T) {
	tn := newTestNet(t, 2)
	a, b := tn.cores[0], tn.cores[1]
	tank, pos, _ := tn.handles()
	must(t, a.PublishObjectClassAttributes(tank, []AttributeHandle{pos}))
	must(t, a.ReserveObjectInstanceName("tank"))
	tn.flush()
	obj, err := a.RegisterObjectInstance(tank, "tank")
	must(t, err)
	must(t, b.SubscribeObjectClassAttributes(tank, []AttributeHandle{pos}, true, ""))
	tn.settle(3)
	tn.take(1)
	// b forgets the instance (as after a local delete) and then hears an
	// update that says the name is reserved but does not carry it.
	in := b.objects.inst[obj]
	b.objects.forget(obj, in)
	m := &wireMsg{Kind: kindUpdate, Obj: obj, Class: uint64(tank), Named: true, Pairs: []valuePair{{uint64(pos), []byte("p")}}}
	evs := b.apply(nil, m, delivery{from: a.self, received: Receive, reliable: true})
	if len(evs) != 0 {
		t.Fatalf("an update without the name made events: %v", evs)
	}
	tn.flush() // the query goes out, a answers with the registration
	evs = tn.take(1)
	if len(evs) != 2 {
		t.Fatalf("events %v, want the discovery and the waiting reflection", evs)
	}
	if d, ok := evs[0].(hla.DiscoverObjectInstance); !ok || d.Name != "tank" || d.Object != obj {
		t.Errorf("first event %#v, want the discovery of tank", evs[0])
	}
	if r, ok := evs[1].(hla.ReflectAttributeValues); !ok || string(r.Values[pos]) != "p" {
		t.Errorf("second event %#v, want the reflection that waited", evs[1])
	}
}

// Updates that wait for a name that never comes expire and are counted.
func TestUnnamedUpdatesExpire(t *testing.T) {
	tn := newTestNet(t, 2)
	b := tn.cores[1]
	tank, pos, _ := tn.handles()
	must(t, b.SubscribeObjectClassAttributes(tank, []AttributeHandle{pos}, true, ""))
	tn.flush()
	obj := ObjectInstanceHandle{Federate: 1, Serial: 77} // a never answers for it
	m := &wireMsg{Kind: kindUpdate, Obj: obj, Class: uint64(tank), Named: true, Pairs: []valuePair{{uint64(pos), []byte("p")}}}
	b.apply(nil, m, delivery{from: 1, received: Receive, reliable: true})
	b.apply(nil, m, delivery{from: 1, received: Receive, reliable: true})
	tn.settle(unnamedTicks + 2)
	if got := b.Stats().Unnamed; got != 2 {
		t.Errorf("Unnamed = %d, want 2", got)
	}
	if len(b.objects.unnamed) != 0 {
		t.Errorf("%d instances still waiting", len(b.objects.unnamed))
	}
}

// Fencing: a receiver drops updates of an older epoch than one it heard,
// and those of another sender at the same epoch.
func TestOwnershipFencing(t *testing.T) {
	var o ownership = newOwnership(9)
	h := ObjectInstanceHandle{Federate: 1, Serial: 1}
	const a AttributeHandle = 5
	for _, tc := range []struct {
		from  FederateHandle
		epoch uint64
		want  bool
	}{
		{1, 0, true},  // the registrar, at its first epoch
		{2, 0, false}, // someone else at that epoch
		{2, 1, true},  // the token moved to 2
		{1, 0, false}, // the old owner is stale now
		{1, 1, false}, // and cannot claim the new epoch
		{2, 1, true},  // the new owner goes on
		{3, 3, true},  // a later transfer, heard before the one between
		{2, 2, false}, // the transfer between arrives late: stale
	} {
		if got, _ := o.accept(h, a, tc.from, tc.epoch); got != tc.want {
			t.Errorf("accept(from %d, epoch %d) = %v, want %v", tc.from, tc.epoch, got, tc.want)
		}
	}
	if got := o.ownerOf(h, a); got != 3 {
		t.Errorf("owner %d, want 3", got)
	}
	o.ownerLeft(3)
	if got := o.ownerOf(h, a); got != 0 {
		t.Errorf("owner after it left: %d, want none", got)
	}
	// A token held here is not taken by a claim from elsewhere.
	o.register(ObjectInstanceHandle{Federate: 9, Serial: 1}, map[AttributeHandle]bool{a: true}, 0)
	if ok, _ := o.accept(ObjectInstanceHandle{Federate: 9, Serial: 1}, a, 4, 1); ok {
		t.Error("a claim on a token held here was accepted")
	}
}

// A stale update is dropped at the receiver end to end: only the owner's
// updates are reflected.
func TestStaleUpdateDropped(t *testing.T) {
	tn := newTestNet(t, 3)
	a, c := tn.cores[0], tn.cores[2]
	tank, pos, _ := tn.handles()
	obj := tn.registered(0, 2)
	// b claims an update at a's epoch: it holds no token, so c drops it.
	m := &wireMsg{Kind: kindUpdate, Obj: obj, Class: uint64(tank), Pairs: []valuePair{{uint64(pos), []byte("forged")}}}
	if evs := c.apply(nil, m, delivery{from: 2, received: Receive, reliable: true}); len(evs) != 0 {
		t.Errorf("a non-owner's update was reflected: %v", evs)
	}
	if c.Stats().Stale != 1 {
		t.Errorf("Stale = %d, want 1", c.Stats().Stale)
	}
	_, err := a.UpdateAttributeValues(obj, AttributeValues{pos: []byte("real")}, nil, nil)
	must(t, err)
	tn.flush()
	evs := tn.take(2)
	if len(evs) != 1 || string(evs[0].(hla.ReflectAttributeValues).Values[pos]) != "real" {
		t.Errorf("events %v, want the owner's reflection", evs)
	}
}

// Routing keeps reference counts: a group is joined once while anything
// needs it, and left when nothing does.
func TestRoutingRefcounts(t *testing.T) {
	tn := newTestNet(t, 1)
	a := tn.cores[0]
	tank, pos, fuel := tn.handles()
	g := objectGroup(tank)
	must(t, a.PublishObjectClassAttributes(tank, []AttributeHandle{pos}))
	must(t, a.SubscribeObjectClassAttributes(tank, []AttributeHandle{fuel}, true, ""))
	rd := a.Ready(true)
	joins := 0
	for _, gc := range rd.Groups {
		if gc.Group == g && gc.Join {
			joins++
		}
	}
	a.Advance(rd)
	if joins != 1 {
		t.Fatalf("group joined %d times, want once", joins)
	}
	must(t, a.UnpublishObjectClassAttributes(tank, nil))
	rd = a.Ready(true)
	if len(rd.Groups) != 0 {
		t.Errorf("left a group still subscribed: %v", rd.Groups)
	}
	a.Advance(rd)
	must(t, a.UnsubscribeObjectClassAttributes(tank, nil))
	rd = a.Ready(true)
	if len(rd.Groups) != 1 || rd.Groups[0] != (GroupChange{Group: g}) {
		t.Errorf("groups %v, want to leave %d", rd.Groups, g)
	}
	a.Advance(rd)
}

// Advance empties the Ready it acted on, and a second Ready before
// Advance holds the same work: nothing is lost or doubled between turns.
func TestReadyAdvance(t *testing.T) {
	tn := newTestNet(t, 1)
	a := tn.cores[0]
	must(t, a.EnableTimeRegulation(hla.Float64Time(1)))
	rd1 := a.Ready(true)
	n := len(rd1.Events)
	rd2 := a.Ready(true)
	if len(rd2.Events) != n || len(rd2.Frames) < len(rd1.Frames) {
		t.Errorf("a second Ready lost work: %d then %d events", n, len(rd2.Events))
	}
	a.Advance(rd2)
	if rd3 := a.Ready(true); !rd3.Empty() {
		t.Errorf("Ready after Advance: %+v", rd3)
	}
	if err := a.TimeAdvance(lbts.TimeAdvanceRequest, hla.Integer64Time(3)); !errors.Is(err, hla.ErrInvalidLogicalTime) {
		t.Errorf("a time of the other representation: %v", err)
	}
}

// A resigned core refuses a second resign; a resign that would leave
// owned attributes refuses and does nothing.
func TestResignActions(t *testing.T) {
	tn := newTestNet(t, 2)
	a, b := tn.cores[0], tn.cores[1]
	_, pos, _ := tn.handles()
	obj := tn.registered(0, 1)
	if err := a.Resign(hla.NoAction); !errors.Is(err, hla.ErrFederateOwnsAttributes) {
		t.Fatalf("NoAction with owned attributes: %v", err)
	}
	if err := a.Resign(hla.ResignAction(0)); !errors.Is(err, hla.ErrInvalidResignAction) {
		t.Fatalf("action 0: %v", err)
	}
	must(t, a.Resign(hla.UnconditionallyDivestAttributes))
	if err := a.Resign(hla.DeleteObjects); !errors.Is(err, hla.ErrFederateNotExecutionMember) {
		t.Errorf("a second resign: %v", err)
	}
	tn.flush()
	evs := tn.take(1)
	if len(evs) != 1 {
		t.Fatalf("events %v, want FederateResigned alone", evs)
	}
	if _, ok := evs[0].(hla.FederateResigned); !ok {
		t.Errorf("event %#v", evs[0])
	}
	if _, err := b.ObjectInstanceName(obj); err != nil {
		t.Errorf("the divested instance is gone: %v", err)
	}
	if b.ownership.ownerOf(obj, pos) != 0 {
		t.Errorf("the divested attribute has owner %d", b.ownership.ownerOf(obj, pos))
	}
}

// Replicated state keeps the highest version per key.
func TestStateVersions(t *testing.T) {
	tn := newTestNet(t, 1)
	a := tn.cores[0]
	a.StateChanged(2, "k", []byte("v2"), 2)
	a.StateChanged(2, "k", []byte("v1"), 1)
	if v, ver, ok := a.State(2, "k"); !ok || string(v) != "v2" || ver != 2 {
		t.Errorf("State = %q, %d, %v", v, ver, ok)
	}
	a.StateChanged(2, "k", nil, 3)
	if _, _, ok := a.State(2, "k"); ok {
		t.Error("a deleted key is still there")
	}
}

// lastUpdateThenResign has core 0 update the instance it registered for
// core 1 with value, then resign; it returns the frames core 0 sent, not
// yet delivered, and the attribute updated.
func lastUpdateThenResign(t *testing.T, tn *testNet, value string) ([]transport.Packet, AttributeHandle) {
	t.Helper()
	a := tn.cores[0]
	_, pos, _ := tn.handles()
	obj := tn.registered(0, 1)
	_, err := a.UpdateAttributeValues(obj, AttributeValues{pos: []byte(value)}, nil, nil)
	must(t, err)
	must(t, a.Resign(hla.UnconditionallyDivestAttributes))
	rd := a.Ready(true)
	frames := append([]transport.Packet(nil), rd.Frames...)
	a.Advance(rd)
	return frames, pos
}

// dropFirst takes core 0 out of the net: it is gone, and answers no
// repair.
func (tn *testNet) dropFirst() {
	tn.cores = tn.cores[1:]
	tn.groups, tn.events = tn.groups[1:], tn.events[1:]
}

// A resign notice that arrives before what its sender sent ahead of it
// on another group (a frame repaired late, a receiver reading its
// backlog after a pause) waits for it: the sender is forgotten only
// once its update has arrived and been reflected, never before.
func TestResignWaitsForItsMessages(t *testing.T) {
	tn := newTestNet(t, 2)
	a, b := tn.cores[0], tn.cores[1]
	frames, pos := lastUpdateThenResign(t, tn, "last")
	var held []transport.Packet
	for _, p := range frames {
		if p.Group == controlGroup {
			tn.deliver(0, []transport.Packet{p})
		} else {
			held = append(held, p)
		}
	}
	if len(held) == 0 {
		t.Fatal("the update went out on the control group: nothing to hold back")
	}
	tn.flush()
	for _, ev := range tn.take(1) {
		if _, ok := ev.(hla.FederateResigned); ok {
			t.Fatal("b forgot a before receiving the update a sent ahead of its notice")
		}
	}
	if _, ok := b.Member(a.self); !ok {
		t.Fatal("a is no longer a member at b")
	}
	tn.deliver(0, held)
	tn.flush()
	evs := tn.take(1)
	if len(evs) != 2 {
		t.Fatalf("events %v, want the reflection and then FederateResigned", evs)
	}
	if r, ok := evs[0].(hla.ReflectAttributeValues); !ok || string(r.Values[pos]) != "last" {
		t.Errorf("first event %#v, want the reflection of the last update", evs[0])
	}
	if _, ok := evs[1].(hla.FederateResigned); !ok {
		t.Errorf("second event %#v, want FederateResigned", evs[1])
	}
}

// The control plane can say a federate resigned before the data plane
// brings its last messages and its notice (a receiver reading its
// backlog after a pause): the receiver keeps the resigner until they
// have come, or, when they never do, for a bounded time.
func TestControlPlaneResignWaitsForTheNotice(t *testing.T) {
	for _, arrives := range []bool{true, false} {
		t.Run(fmt.Sprintf("arrives=%v", arrives), func(t *testing.T) {
			tn := newTestNet(t, 2)
			a, b := tn.cores[0], tn.cores[1]
			frames, pos := lastUpdateThenResign(t, tn, "last")
			tn.dropFirst()
			b.MemberLeft(a.self, false, hla.UnconditionallyDivestAttributes)
			tn.flush()
			if _, ok := b.Member(a.self); !ok {
				t.Fatal("b forgot a on the control plane's word, before a's last messages came")
			}
			if !arrives {
				for range departWaitTicks {
					b.Tick()
				}
				tn.flush()
				if _, ok := b.Member(a.self); ok {
					t.Fatal("b still waits for a notice that never comes")
				}
				return
			}
			for _, p := range frames {
				b.Step(p.Group, p.Data)
			}
			tn.flush()
			var got []string
			for _, ev := range tn.take(0) {
				got = append(got, fmt.Sprintf("%T", ev))
				if r, ok := ev.(hla.ReflectAttributeValues); ok && string(r.Values[pos]) != "last" {
					t.Errorf("reflected %q", r.Values[pos])
				}
			}
			if want := []string{"hla.ReflectAttributeValues", "hla.FederateResigned"}; !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}

// A resign notice whose sender's earlier messages never come waits a
// bounded time, then forgets the sender, and reports what never came as
// lost: the notice said where the sender's streams end, so the update
// missing there is known to be lost, though no later frame showed the
// hole (a paused receiver whose backlog overflowed, its senders closed).
func TestResignWaitIsBounded(t *testing.T) {
	tn := newTestNet(t, 2)
	a, b := tn.cores[0], tn.cores[1]
	frames, _ := lastUpdateThenResign(t, tn, "lost")
	for _, p := range frames {
		if p.Group == controlGroup {
			tn.deliver(0, []transport.Packet{p})
		}
	}
	tn.dropFirst()
	tn.flush()
	if _, ok := b.Member(a.self); !ok {
		t.Fatal("b forgot a at once")
	}
	for range departWaitTicks {
		b.Tick()
	}
	tn.flush()
	var resigned, lost bool
	for _, ev := range tn.take(0) {
		switch ev := ev.(type) {
		case hla.MessagesLost:
			if ev.Producer != a.self || ev.Messages != 1 {
				t.Errorf("%+v, want 1 message of %v lost", ev, a.self)
			}
			lost = true
		case hla.FederateResigned:
			resigned = true
		}
	}
	if !resigned {
		t.Error("b never forgot a")
	}
	if !lost {
		t.Error("the update b never received was not reported lost")
	}
	if got := b.Stats().Gaps; got != 1 {
		t.Errorf("%d gaps counted, want 1", got)
	}
	if _, ok := b.Member(a.self); ok {
		t.Error("a is still a member at b")
	}
}

// After a local delete, an announcement that answers a discovery query
// sent before it (the subscriber's own, answered late) does not bring
// the instance back; one that answers a later query does, and so does
// the next update (§6.16).
func TestLocalDeleteIgnoresOlderQueryAnswers(t *testing.T) {
	tn := newTestNet(t, 2)
	a, b := tn.cores[0], tn.cores[1]
	obj := tn.registered(0, 1)
	tank, pos, _ := tn.handles()
	must(t, b.LocalDeleteObjectInstance(obj))
	late := *a.registerMsg(obj, a.objects.inst[obj])
	if evs := b.apply(nil, &late, delivery{from: a.self, received: Receive, reliable: true}); len(evs) != 0 {
		t.Fatalf("a late answer to the subscription's query made events: %v", evs)
	}
	// b asks again: the answers bring the instance back.
	must(t, b.UnsubscribeObjectClassAttributes(tank, []AttributeHandle{pos}))
	must(t, b.SubscribeObjectClassAttributes(tank, []AttributeHandle{pos}, true, ""))
	tn.settle(30) // back in the group, b takes up a's stream again
	evs := tn.take(1)
	if len(evs) != 1 {
		t.Fatalf("events %v, want the discovery answering the new query", evs)
	}
	if d, ok := evs[0].(hla.DiscoverObjectInstance); !ok || d.Object != obj {
		t.Fatalf("event %#v, want the discovery of %v", evs[0], obj)
	}
	if len(b.objects.localDeleted) != 0 {
		t.Errorf("still marked deleted locally: %v", b.objects.localDeleted)
	}
	// Deleted locally again: the next update brings it back.
	must(t, b.LocalDeleteObjectInstance(obj))
	if _, err := a.UpdateAttributeValues(obj, AttributeValues{pos: []byte("p")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tn.settle(2)
	evs = tn.take(1)
	if len(evs) != 2 {
		t.Fatalf("events %v, want the discovery and the reflection", evs)
	}
	if _, ok := evs[0].(hla.DiscoverObjectInstance); !ok {
		t.Errorf("first event %#v, want the discovery", evs[0])
	}
}
