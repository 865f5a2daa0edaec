package peer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// ddmFOM adds two dimensions to the test FOM's Vehicle position and a
// channel to Honk.
const ddmFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>peer DDM test FOM</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Craft</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Where</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><dimensions><dimension>East</dimension><dimension>North</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <attribute><name>Name</name><dataType>HLAopaqueData</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Call</name><sharing>PublishSubscribe</sharing><dimensions><dimension>Band</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Text</name><dataType>HLAopaqueData</dataType></parameter>
    </interactionClass>
  </interactionClass></interactions>
  <dimensions>
    <dimension><name>East</name><dataType>HLAinteger32BE</dataType><upperBound>1000</upperBound><normalization>linear (East, 0, 1000)</normalization><value>[0..1)</value></dimension>
    <dimension><name>North</name><dataType>HLAinteger32BE</dataType><upperBound>1000</upperBound><normalization>linear (North, 0, 1000)</normalization><value>[0..1)</value></dimension>
    <dimension><name>Band</name><dataType>HLAinteger32BE</dataType><upperBound>10</upperBound><normalization>linear (Band, 0, 10)</normalization><value>[0..1)</value></dimension>
  </dimensions>
</objectModel>`

type ddmHandles struct {
	craft             ObjectClassHandle
	where, name       AttributeHandle
	call              InteractionClassHandle
	text              ParameterHandle
	east, north, band DimensionHandle
}

func newDDMFederation(t *testing.T, n int) (*memFederation, ddmHandles) {
	t.Helper()
	m, doc := emptyDDMFederation(t, "ddm", 95)
	for _, name := range []string{"A", "B", "C"}[:n] {
		m.add(name, doc)
	}
	return m, ddmHandlesOf(t, m.feds[0])
}

// emptyDDMFederation is the federation name on an in-memory network
// without faults (seeded with seed) and no federate yet, and ddmFOM for
// the federates the test adds.
func emptyDDMFederation(t *testing.T, name string, seed int64) (*memFederation, *fomxml.Document) {
	t.Helper()
	doc := parseDoc(t, "ddm.xml", ddmFOM)
	m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: seed}), reg: NewMemRegistry(), name: name}
	t.Cleanup(m.close)
	return m, doc
}

// regionAt is a new region of f on dims, at [lo, lo+1) on each
// (committed).
func regionAt(t testing.TB, f *Federate, lo uint64, dims ...DimensionHandle) RegionHandle {
	t.Helper()
	r, err := f.CreateRegion(dims...)
	if err != nil {
		t.Fatal(err)
	}
	moveRegion(t, f, r, lo, dims...)
	return r
}

// moveRegion moves f's region r to [lo, lo+1) on each of dims
// (committed).
func moveRegion(t testing.TB, f *Federate, r RegionHandle, lo uint64, dims ...DimensionHandle) {
	t.Helper()
	for _, d := range dims {
		if err := f.SetRangeBounds(r, d, RangeBounds{Lower: lo, Upper: lo + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CommitRegionModifications(r); err != nil {
		t.Fatal(err)
	}
}

// ddmHandlesOf looks ddmFOM's handles up at f.
func ddmHandlesOf(t testing.TB, f *Federate) ddmHandles {
	t.Helper()
	l := nameLookup{t, f}
	h := ddmHandles{craft: l.class("Craft"), call: l.interaction("Call"), east: l.dim("East"), north: l.dim("North"), band: l.dim("Band")}
	h.where, h.name = l.attr(h.craft, "Where"), l.attr(h.craft, "Name")
	h.text = l.param(h.call, "Text")
	return h
}

// Every DDM service and dimension support service refuses what IEEE
// 1516.1-2010 §9 and §10.23-§10.30 say it must.
func TestDDMServiceErrors(t *testing.T) {
	m, h := newDDMFederation(t, 2)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	must(a.PublishObjectClassAttributes(h.craft, h.where, h.name))
	must(a.PublishInteractionClass(h.call))
	obj, err := a.RegisterObjectInstance(h.craft, "")
	must(err)
	area, err := a.CreateRegion(h.east, h.north)
	must(err)
	band, err := a.CreateRegion(h.band)
	must(err)
	theirs, err := b.CreateRegion(h.east)
	must(err)
	gone := RegionHandle{Federate: a.Handle(), Serial: 999}
	const badDim = DimensionHandle(4242)
	where := []AttributeRegions{{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{area}}}
	onName := []AttributeRegions{{Attributes: []AttributeHandle{h.name}, Regions: []RegionHandle{area}}}
	bandOnWhere := []AttributeRegions{{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{band}}}
	undefined := []AttributeRegions{{Attributes: []AttributeHandle{12345}, Regions: []RegionHandle{area}}}
	foreign := []AttributeRegions{{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{theirs}}}
	missing := []AttributeRegions{{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{gone}}}
	second := func(_ any, err error) error { return err }

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		// §9.2-§9.4
		{"create: bad dimension", second(a.CreateRegion(badDim)), ErrInvalidDimensionHandle},
		{"commit: foreign", a.CommitRegionModifications(theirs), ErrRegionNotCreatedByThisFederate},
		{"commit: unknown", a.CommitRegionModifications(gone), ErrInvalidRegion},
		{"delete: foreign", a.DeleteRegion(theirs), ErrRegionNotCreatedByThisFederate},
		{"delete: unknown", a.DeleteRegion(gone), ErrInvalidRegion},
		// §10.28-§10.30
		{"dimensions: unknown", second(a.GetDimensionHandleSet(gone)), ErrInvalidRegion},
		{"get bounds: unknown", second(a.GetRangeBounds(gone, h.east)), ErrInvalidRegion},
		{"get bounds: other dimension", second(a.GetRangeBounds(area, h.band)), ErrRegionDoesNotContainSpecifiedDimension},
		{"set bounds: foreign", a.SetRangeBounds(theirs, h.east, RangeBounds{Lower: 0, Upper: 1}), ErrRegionNotCreatedByThisFederate},
		{"set bounds: unknown", a.SetRangeBounds(gone, h.east, RangeBounds{Lower: 0, Upper: 1}), ErrInvalidRegion},
		{"set bounds: other dimension", a.SetRangeBounds(area, h.band, RangeBounds{Lower: 0, Upper: 1}), ErrRegionDoesNotContainSpecifiedDimension},
		{"set bounds: above the bound", a.SetRangeBounds(area, h.east, RangeBounds{Lower: 0, Upper: 1001}), ErrInvalidRangeBound},
		{"set bounds: empty", a.SetRangeBounds(area, h.east, RangeBounds{Lower: 5, Upper: 5}), ErrInvalidRangeBound},
		// §10.23-§10.27
		{"dimension handle: unknown name", second(a.GetDimensionHandle("Up")), ErrNameNotFound},
		{"dimension name: bad handle", second(a.GetDimensionName(badDim)), ErrInvalidDimensionHandle},
		{"upper bound: bad handle", second(a.GetDimensionUpperBound(badDim)), ErrInvalidDimensionHandle},
		{"attribute dimensions: bad class", second(a.GetAvailableDimensionsForClassAttribute(777, h.where)), ErrInvalidObjectClassHandle},
		{"attribute dimensions: bad attribute", second(a.GetAvailableDimensionsForClassAttribute(h.craft, 12345)), ErrAttributeNotDefined},
		{"interaction dimensions: bad class", second(a.GetAvailableDimensionsForInteractionClass(777)), ErrInvalidInteractionClassHandle},
		// §9.5 register with regions
		{"register: class not defined", second(a.RegisterObjectInstanceWithRegions(777, where, "")), ErrObjectClassNotDefined},
		{"register: attribute not defined", second(a.RegisterObjectInstanceWithRegions(h.craft, undefined, "")), ErrAttributeNotDefined},
		{"register: not published", second(b.RegisterObjectInstanceWithRegions(h.craft, []AttributeRegions{{Attributes: []AttributeHandle{h.where}}}, "")), ErrObjectClassNotPublished},
		{"register: foreign region", second(a.RegisterObjectInstanceWithRegions(h.craft, foreign, "")), ErrRegionNotCreatedByThisFederate},
		{"register: unknown region", second(a.RegisterObjectInstanceWithRegions(h.craft, missing, "")), ErrInvalidRegion},
		{"register: region context", second(a.RegisterObjectInstanceWithRegions(h.craft, bandOnWhere, "")), ErrInvalidRegionContext},
		{"register: undimensioned attribute", second(a.RegisterObjectInstanceWithRegions(h.craft, onName, "")), ErrInvalidRegionContext},
		{"register: name not reserved", second(a.RegisterObjectInstanceWithRegions(h.craft, where, "Ghost")), ErrObjectInstanceNameNotReserved},
		// §9.6-§9.7
		{"associate: unknown instance", a.AssociateRegionsForUpdates(ObjectInstanceHandle{Federate: 99, Serial: 1}, where...), ErrObjectInstanceNotKnown},
		{"associate: attribute not defined", a.AssociateRegionsForUpdates(obj, undefined...), ErrAttributeNotDefined},
		{"associate: foreign region", a.AssociateRegionsForUpdates(obj, foreign...), ErrRegionNotCreatedByThisFederate},
		{"associate: unknown region", a.AssociateRegionsForUpdates(obj, missing...), ErrInvalidRegion},
		{"associate: region context", a.AssociateRegionsForUpdates(obj, bandOnWhere...), ErrInvalidRegionContext},
		{"unassociate: unknown instance", a.UnassociateRegionsForUpdates(ObjectInstanceHandle{Federate: 99, Serial: 1}, where...), ErrObjectInstanceNotKnown},
		{"unassociate: attribute not defined", a.UnassociateRegionsForUpdates(obj, undefined...), ErrAttributeNotDefined},
		{"unassociate: foreign region", a.UnassociateRegionsForUpdates(obj, foreign...), ErrRegionNotCreatedByThisFederate},
		{"unassociate: unknown region", a.UnassociateRegionsForUpdates(obj, missing...), ErrInvalidRegion},
		// §9.8-§9.9
		{"subscribe: class not defined", a.SubscribeObjectClassAttributesWithRegions(777, where...), ErrObjectClassNotDefined},
		{"subscribe: attribute not defined", a.SubscribeObjectClassAttributesWithRegions(h.craft, undefined...), ErrAttributeNotDefined},
		{"subscribe: foreign region", a.SubscribeObjectClassAttributesWithRegions(h.craft, foreign...), ErrRegionNotCreatedByThisFederate},
		{"subscribe: unknown region", a.SubscribeObjectClassAttributesWithRegions(h.craft, missing...), ErrInvalidRegion},
		{"subscribe: region context", a.SubscribeObjectClassAttributesWithRegions(h.craft, bandOnWhere...), ErrInvalidRegionContext},
		{"subscribe: bad rate", a.SubscribeObjectClassAttributesWithRegionsPassively(h.craft, "Never", where...), ErrInvalidUpdateRateDesignator},
		{"unsubscribe: class not defined", a.UnsubscribeObjectClassAttributesWithRegions(777, where...), ErrObjectClassNotDefined},
		{"unsubscribe: attribute not defined", a.UnsubscribeObjectClassAttributesWithRegions(h.craft, undefined...), ErrAttributeNotDefined},
		{"unsubscribe: foreign region", a.UnsubscribeObjectClassAttributesWithRegions(h.craft, foreign...), ErrRegionNotCreatedByThisFederate},
		{"unsubscribe: unknown region", a.UnsubscribeObjectClassAttributesWithRegions(h.craft, missing...), ErrInvalidRegion},
		// §9.10-§9.11
		{"subscribe interaction: not defined", a.SubscribeInteractionClassWithRegions(777, band), ErrInteractionClassNotDefined},
		{"subscribe interaction: foreign region", a.SubscribeInteractionClassWithRegions(h.call, theirs), ErrRegionNotCreatedByThisFederate},
		{"subscribe interaction: unknown region", a.SubscribeInteractionClassWithRegions(h.call, gone), ErrInvalidRegion},
		{"subscribe interaction: region context", a.SubscribeInteractionClassWithRegions(h.call, area), ErrInvalidRegionContext},
		{"unsubscribe interaction: not defined", a.UnsubscribeInteractionClassWithRegions(777, band), ErrInteractionClassNotDefined},
		{"unsubscribe interaction: foreign region", a.UnsubscribeInteractionClassWithRegions(h.call, theirs), ErrRegionNotCreatedByThisFederate},
		{"unsubscribe interaction: unknown region", a.UnsubscribeInteractionClassWithRegions(h.call, gone), ErrInvalidRegion},
		// §9.12
		{"send: not defined", a.SendInteractionWithRegions(777, nil, []RegionHandle{band}, nil), ErrInteractionClassNotDefined},
		{"send: not published", b.SendInteractionWithRegions(h.call, nil, nil, nil), ErrInteractionClassNotPublished},
		{"send: parameter not defined", a.SendInteractionWithRegions(h.call, ParameterValues{999: nil}, []RegionHandle{band}, nil), ErrInteractionParameterNotDefined},
		{"send: foreign region", a.SendInteractionWithRegions(h.call, nil, []RegionHandle{theirs}, nil), ErrRegionNotCreatedByThisFederate},
		{"send: unknown region", a.SendInteractionWithRegions(h.call, nil, []RegionHandle{gone}, nil), ErrInvalidRegion},
		{"send: region context", a.SendInteractionWithRegions(h.call, nil, []RegionHandle{area}, nil), ErrInvalidRegionContext},
		{"send timed: no time", second(a.SendInteractionWithRegionsAndTime(h.call, nil, []RegionHandle{band}, nil, nil)), errNilTime},
		// §9.13
		{"request: class not defined", a.RequestAttributeValueUpdateWithRegions(777, where, nil), ErrObjectClassNotDefined},
		{"request: attribute not defined", a.RequestAttributeValueUpdateWithRegions(h.craft, undefined, nil), ErrAttributeNotDefined},
		{"request: foreign region", a.RequestAttributeValueUpdateWithRegions(h.craft, foreign, nil), ErrRegionNotCreatedByThisFederate},
		{"request: unknown region", a.RequestAttributeValueUpdateWithRegions(h.craft, missing, nil), ErrInvalidRegion},
		{"request: region context", a.RequestAttributeValueUpdateWithRegions(h.craft, bandOnWhere, nil), ErrInvalidRegionContext},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}

	// A region in use cannot be deleted; once no longer used it can.
	must(a.SubscribeObjectClassAttributesWithRegions(h.craft, where...))
	if err := a.DeleteRegion(area); !errors.Is(err, ErrRegionInUseForUpdateOrSubscription) {
		t.Errorf("delete a subscribed region: %v", err)
	}
	must(a.UnsubscribeObjectClassAttributesWithRegions(h.craft, where...))
	must(a.AssociateRegionsForUpdates(obj, where...))
	if err := a.DeleteRegion(area); !errors.Is(err, ErrRegionInUseForUpdateOrSubscription) {
		t.Errorf("delete an associated region: %v", err)
	}
	must(a.UnassociateRegionsForUpdates(obj, where...))
	must(a.DeleteRegion(area))
	if _, err := a.GetDimensionHandleSet(area); !errors.Is(err, ErrInvalidRegion) {
		t.Errorf("a deleted region: %v", err)
	}

	// Ranges are read back as set; dimensions and bounds as the FOM says.
	r, err := a.CreateRegion(h.north, h.east)
	must(err)
	must(a.SetRangeBounds(r, h.east, RangeBounds{Lower: 10, Upper: 20}))
	if got, err := a.GetRangeBounds(r, h.east); err != nil || got != (RangeBounds{Lower: 10, Upper: 20}) {
		t.Errorf("range bounds %v, %v", got, err)
	}
	if ds, err := a.GetDimensionHandleSet(r); err != nil || len(ds) != 2 {
		t.Errorf("dimensions %v, %v", ds, err)
	}
	if ub, err := a.GetDimensionUpperBound(h.band); err != nil || ub != 10 {
		t.Errorf("upper bound %d, %v", ub, err)
	}
	if n, err := a.GetDimensionName(h.north); err != nil || n != "North" {
		t.Errorf("name %q, %v", n, err)
	}
	if ds, err := a.GetAvailableDimensionsForClassAttribute(h.craft, h.where); err != nil || len(ds) != 2 {
		t.Errorf("Where's dimensions %v, %v", ds, err)
	}
	if ds, err := a.GetAvailableDimensionsForClassAttribute(h.craft, h.name); err != nil || len(ds) != 0 {
		t.Errorf("Name's dimensions %v, %v", ds, err)
	}
	if ds, err := a.GetAvailableDimensionsForInteractionClass(h.call); err != nil || len(ds) != 1 || ds[0] != h.band {
		t.Errorf("Call's dimensions %v, %v", ds, err)
	}
}

// Updates and interactions reach a subscriber only where their regions
// overlap its subscription's; attributes bound to no dimension always
// pass.
func TestDDMFiltering(t *testing.T) {
	m, h := newDDMFederation(t, 2)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	sub, err := b.CreateRegion(h.east, h.north)
	must(err)
	must(b.SetRangeBounds(sub, h.east, RangeBounds{Lower: 0, Upper: 100}))
	must(b.SetRangeBounds(sub, h.north, RangeBounds{Lower: 0, Upper: 100}))
	must(b.CommitRegionModifications(sub))
	must(b.SubscribeObjectClassAttributesWithRegions(h.craft, AttributeRegions{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{sub}}))
	must(b.SubscribeObjectClassAttributes(h.craft, h.name))
	// A filters by B's region once the control plane told it of B's
	// subscription: the relevance advisory says when.
	must(a.EnableObjectClassRelevanceAdvisorySwitch())
	must(a.PublishObjectClassAttributes(h.craft, h.where, h.name))
	waitFor(t, a, 5*time.Second, isType[StartRegistrationForObjectClass])
	at, err := a.CreateRegion(h.east, h.north)
	must(err)
	move := func(x uint64) {
		t.Helper()
		must(a.SetRangeBounds(at, h.east, RangeBounds{Lower: x, Upper: x + 1}))
		must(a.SetRangeBounds(at, h.north, RangeBounds{Lower: 50, Upper: 51}))
		must(a.CommitRegionModifications(at))
	}
	move(500)
	obj, err := a.RegisterObjectInstanceWithRegions(h.craft, []AttributeRegions{{Attributes: []AttributeHandle{h.where}, Regions: []RegionHandle{at}}}, "")
	must(err)
	// Name has no dimensions: B subscribes to it plainly, so it discovers
	// the instance, but Where at 500 is outside its square.
	waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])
	must(a.UpdateAttributeValues(obj, AttributeValues{h.where: []byte("far"), h.name: []byte("n1")}, nil))
	move(50)
	must(a.UpdateAttributeValues(obj, AttributeValues{h.where: []byte("near")}, nil))
	var got []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A: %+v", a.Stats())
		}
	})
	for len(got) < 2 {
		ev, _ := waitFor(t, b, 5*time.Second, isType[ReflectAttributeValues])
		for attr, v := range ev.(ReflectAttributeValues).Values {
			if attr == h.where || attr == h.name {
				got = append(got, string(v))
			}
		}
	}
	// The name travels on the class's group, the position into a cell's:
	// receive order across groups is not kept.
	slices.Sort(got)
	if got[0] != "n1" || got[1] != "near" {
		t.Errorf("reflected %q, want the name and the near position only", got)
	}
	if s := a.Stats(); s.Spared == 0 {
		t.Errorf("no update spared at the sender: %+v", s)
	}

	// Interactions on bands 3 and 7; B listens on 3.
	must(b.SubscribeInteractionClassWithRegions(h.call, regionAt(t, b, 3, h.band)))
	must(a.PublishInteractionClass(h.call))
	time.Sleep(200 * time.Millisecond)
	send := func(lo uint64, text string) {
		r := regionAt(t, a, lo, h.band)
		must(a.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte(text)}, []RegionHandle{r}, nil))
	}
	send(7, "seven")
	send(3, "three")
	ev, _ := waitFor(t, b, 5*time.Second, isType[ReceiveInteraction])
	if v := string(ev.(ReceiveInteraction).Values[h.text]); v != "three" {
		t.Errorf("received %q, want only band 3", v)
	}
}

// A cell configuration the FOM's dimensions do not fit is refused at
// join, with the reason.
func TestDDMBadRegionsConfig(t *testing.T) {
	m, doc := emptyDDMFederation(t, "ddm-bad", 96)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Join(ctx, Config{
		Federation: m.name, FederateName: "A", FOMModules: []*fomxml.Document{doc}, Create: true,
		Control: m.reg.Control(m.name), Transport: m.net.Endpoint("A"),
		Regions: ddm.Config{Cells: map[string]int{"East": -4}},
	})
	if err == nil || !strings.Contains(err.Error(), "Regions") {
		t.Errorf("join with a negative cell count: %v", err)
	}
}
