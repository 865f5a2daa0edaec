package peer

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// The DDM cells are agreed at the federation's creation: a joiner
// configured with other cells adopts the creator's, and updates and
// interactions with regions flow both ways. (With each federate's own
// cells, 4 and 64 per dimension, the sender's cell groups are not the
// subscriber's and nothing arrives.)
func TestConformanceDDMCellsAgreed(t *testing.T) {
	m, doc := emptyDDMFederation(t, "ddm-cells", 97)
	a := m.addWith("A", doc, func(c *Config) { c.Regions = ddm.Config{DefaultCells: 4} })
	b := m.addWith("B", doc, func(c *Config) { c.Regions = ddm.Config{DefaultCells: 64, MaxJoins: 9} })
	checkCellsAgreed(t, a, b)
}

// TestConformanceDDMCellsAgreed over the gossip control plane.
func TestConformanceDDMCellsAgreedGossip(t *testing.T) {
	doc := parseDoc(t, "ddm.xml", ddmFOM)
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 98})
	federation := fmt.Sprintf("ddm-cells-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	join := func(name string, cells ddm.Config, seeds []string) *Federate {
		f, err := Join(ctx, Config{
			Federation: federation, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: seeds == nil,
			Gossip: GossipConfig{Seeds: seeds}, Transport: net.Endpoint(name), TickInterval: 2 * time.Millisecond,
			Regions: cells,
		})
		if err != nil {
			t.Fatalf("join %s: %v", name, err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a := join("A", ddm.Config{DefaultCells: 4}, nil)
	seed, _ := a.GossipAddr()
	b := join("B", ddm.Config{DefaultCells: 64, MaxJoins: 9}, []string{seed})
	checkCellsAgreed(t, a, b)
}

// checkCellsAgreed checks that b, which joined a's federation with other
// cells, uses a's, and that an update from b reaches a's region
// subscription and an interaction from a reaches b's.
func checkCellsAgreed(t *testing.T, a, b *Federate) {
	t.Helper()
	if !b.cfg.Regions.Equal(a.cfg.Regions) || !a.cfg.Regions.Equal(ddm.Config{DefaultCells: 4}) {
		t.Errorf("cells: creator %+v, joiner %+v; want the creator's, 4 per dimension", a.cfg.Regions, b.cfg.Regions)
	}
	must := mustOK(t)
	h := ddmHandlesOf(t, a)
	craft, where, call, text, east, north, band := h.craft, h.where, h.call, h.text, h.east, h.north, h.band
	region := func(f *Federate, bounds map[DimensionHandle]RangeBounds) RegionHandle {
		t.Helper()
		var dims []DimensionHandle
		for d := range bounds {
			dims = append(dims, d)
		}
		r, err := f.CreateRegion(dims...)
		must(err)
		for d, rb := range bounds {
			must(f.SetRangeBounds(r, d, rb))
		}
		must(f.CommitRegionModifications(r))
		return r
	}

	// An update from the joiner into the creator's square.
	square := region(a, map[DimensionHandle]RangeBounds{east: {Lower: 0, Upper: 100}, north: {Lower: 0, Upper: 100}})
	must(a.SubscribeObjectClassAttributesWithRegions(craft, AttributeRegions{Attributes: []AttributeHandle{where}, Regions: []RegionHandle{square}}))
	must(b.EnableObjectClassRelevanceAdvisorySwitch())
	must(b.PublishObjectClassAttributes(craft, where))
	waitFor(t, b, 10*time.Second, isType[StartRegistrationForObjectClass])
	at := region(b, map[DimensionHandle]RangeBounds{east: {Lower: 50, Upper: 51}, north: {Lower: 50, Upper: 51}})
	obj, err := b.RegisterObjectInstanceWithRegions(craft, []AttributeRegions{{Attributes: []AttributeHandle{where}, Regions: []RegionHandle{at}}}, "")
	must(err)
	must(b.UpdateAttributeValues(obj, AttributeValues{where: []byte("inside")}, nil))
	ev, _ := waitFor(t, a, 10*time.Second, isType[ReflectAttributeValues])
	if v := string(ev.(ReflectAttributeValues).Values[where]); v != "inside" {
		t.Errorf("A reflected %q, want \"inside\"", v)
	}

	// An interaction from the creator on the joiner's band.
	must(b.SubscribeInteractionClassWithRegions(call, region(b, map[DimensionHandle]RangeBounds{band: {Lower: 3, Upper: 4}})))
	must(a.EnableInteractionRelevanceAdvisorySwitch())
	must(a.PublishInteractionClass(call))
	waitFor(t, a, 10*time.Second, isType[TurnInteractionsOn])
	on3 := region(a, map[DimensionHandle]RangeBounds{band: {Lower: 3, Upper: 4}})
	must(a.SendInteractionWithRegions(call, ParameterValues{text: []byte("three")}, []RegionHandle{on3}, nil))
	ev, _ = waitFor(t, b, 10*time.Second, isType[ReceiveInteraction])
	if v := string(ev.(ReceiveInteraction).Values[text]); v != "three" {
		t.Errorf("B received %q, want \"three\"", v)
	}
}

// oldRecord is a control plane whose federation record predates the
// agreed cells, as one created by an earlier version reads.
type oldRecord struct{ ControlPlane }

func (o oldRecord) Federation(ctx context.Context) (FederationSpec, bool, error) {
	spec, ok, err := o.ControlPlane.Federation(ctx)
	spec.Regions = nil
	return spec, ok, err
}

// A federation whose record has no cells (an earlier version created
// it) is joined with the joiner's own, as before.
func TestConformanceDDMCellsAgreedOldRecord(t *testing.T) {
	m, doc := emptyDDMFederation(t, "ddm-old", 99)
	m.addWith("A", doc, func(c *Config) { c.Regions = ddm.Config{DefaultCells: 4} })
	b := m.addWith("B", doc, func(c *Config) {
		c.Control = oldRecord{c.Control}
		c.Regions = ddm.Config{DefaultCells: 8}
	})
	if !b.cfg.Regions.Equal(ddm.Config{DefaultCells: 8}) {
		t.Errorf("joiner of a record without cells uses %+v, want its own", b.cfg.Regions)
	}
}
