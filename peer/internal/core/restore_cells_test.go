package core

import (
	"path/filepath"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/dgram"
)

// A restore moves a subscription region back to where it was at the
// save. The cell groups the region no longer covers are left as any
// region move leaves them: on the transport, in the reliable endpoint
// and in the time core alike. The restore used to forget which cells it
// had joined without leaving them: the groups stayed joined, and once
// the federate stopped sending into such a cell its endpoint left it
// while the time core still waited there for messages that would never
// come (a federate stalled after a restore in TestLabSaveRestore, 1 run
// in 40: "time stalled: ... 1's promise waits for group 89861038 seq 4").
func TestRestoreLeavesCellsItNoLongerNeeds(t *testing.T) {
	doc, err := fomxml.ParseFile(filepath.Join("..", "..", "..", "examples", "demo", "demo_ddm.xml"))
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{FDD: fdd, Federation: "cells", Self: 1, Name: "A", Incarnation: 1, Members: []Member{{Handle: 1, Name: "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	joined := map[dgram.Group]bool{}
	// moved applies what the core asked of the transport and returns the
	// cell groups it joined and left.
	moved := func() (join, leave []dgram.Group) {
		t.Helper()
		rd := c.Ready(true)
		for _, g := range rd.Groups {
			joined[g.Group] = g.Join
			switch {
			case !isCellGroup(g.Group):
			case g.Join:
				join = append(join, g.Group)
			default:
				leave = append(leave, g.Group)
			}
		}
		c.Advance(rd)
		return join, leave
	}
	radio, ok := fdd.InteractionClass("Radio")
	if !ok {
		t.Fatal("no Radio in the FOM")
	}
	channel, ok := fdd.Dimension("Channel")
	if !ok {
		t.Fatal("no Channel in the FOM")
	}
	ch := DimensionHandle(channel.Handle)
	r, err := c.CreateRegion([]DimensionHandle{ch})
	if err != nil {
		t.Fatal(err)
	}
	tune := func(lo, hi uint64) {
		t.Helper()
		must(t, c.SetRangeBounds(r, ch, RangeBounds{Lower: lo, Upper: hi}))
		must(t, c.CommitRegionModifications([]RegionHandle{r}))
	}
	tune(0, 1)
	must(t, c.SubscribeInteractionClassWithRegions(InteractionClassHandle(radio.Handle), []RegionHandle{r}, true))
	saved, _ := moved()
	if len(saved) == 0 {
		t.Fatal("subscribing with a region joined no cell group")
	}
	snap, err := c.captureSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	tune(15, 16)
	later, left := moved()
	if len(later) == 0 || len(left) != len(saved) {
		t.Fatalf("the region's move joined %v and left %v; want other cells joined and %v left", later, left, saved)
	}

	s, err := decodeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	c.applySnapshot(s, 1, nil)
	back, left := moved()
	if len(back) != len(saved) || len(left) != len(later) {
		t.Errorf("the restore joined %v and left %v; want %v joined again and %v left", back, left, saved, later)
	}
	for _, g := range later {
		if _, inTime := c.timeCore.ReceivedThrough(lbts.FederateID(2), uint32(g)); joined[g] || inTime || c.regions.cells[g] {
			t.Errorf("cell group %d after the restore: on the transport %v, in the time core %v, in the core's cells %v; want none",
				g, joined[g], inTime, c.regions.cells[g])
		}
	}
	for _, g := range saved {
		if _, inTime := c.timeCore.ReceivedThrough(lbts.FederateID(2), uint32(g)); !joined[g] || !inTime || !c.regions.cells[g] {
			t.Errorf("cell group %d after the restore: on the transport %v, in the time core %v, in the core's cells %v; want all",
				g, joined[g], inTime, c.regions.cells[g])
		}
	}
}
