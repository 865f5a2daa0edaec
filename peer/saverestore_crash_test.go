package peer

import (
	"io"
	"testing"
	"time"
)

// A federation of federates of types A, B, B saves; one B federate
// crashes and a new process joins under type B, with another name. The
// restore assigns it the crashed federate's saved state: it learns the
// saved name and handle from InitiateFederateRestore, reads the crashed
// federate's own state, and then acts as it: the others reflect its
// updates of the crashed federate's instance and see it own it. A
// restore while the joined types do not match the saved set's fails.
func TestConformanceRestoreAfterCrash(t *testing.T) {
	m, doc := emptyFederation(t, 67)
	typed := func(typ string) func(*Config) { return func(c *Config) { c.FederateType = typ } }
	a := m.addWith("A0", doc, typed("A"))
	b1 := m.addWith("B1", doc, typed("B"))
	b2 := m.addWith("B2", doc, typed("B"))
	h := handles(t, a)
	must := mustOK(t)
	must(a.SubscribeObjectClassAttributes(h.vehicle, h.label))
	must(b2.SubscribeObjectClassAttributes(h.vehicle, h.label))
	must(b1.PublishObjectClassAttributes(h.vehicle, h.label))
	obj, err := b1.RegisterObjectInstance(h.vehicle, "")
	must(err)
	waitFor(t, a, 5*time.Second, isType[DiscoverObjectInstance])
	waitFor(t, b2, 5*time.Second, isType[DiscoverObjectInstance])

	all := func(*Federate) bool { return true }
	for i, ev := range saveAll(t, m, "crash", all) {
		if _, ok := ev.(FederationSaved); !ok {
			t.Fatalf("%s: %#v, want FederationSaved", m.feds[i].Name(), ev)
		}
	}
	saved := b1.Handle()

	// B1 crashes: no resign.
	m.reg.Crash(m.name, b1.Handle())
	m.net.Crash(b1.Name())
	b1.Close()
	waitFor(t, a, 5*time.Second, isType[FederateLost])
	waitFor(t, b2, 5*time.Second, isType[FederateLost])
	m.feds = []*Federate{a, b2}

	// Types A, B joined, A, B, B saved: refused.
	must(a.RequestFederationRestore("crash"))
	waitFor(t, a, 5*time.Second, isType[RequestFederationRestoreFailed])

	// A new process of type B, under another name, joins: the restore
	// succeeds and it restores as B1.
	nb := m.addWith("B1-again", doc, typed("B"))
	if nb.Handle() == saved {
		t.Fatalf("the newcomer has the crashed federate's handle %d", saved)
	}
	must(a.RequestFederationRestore("crash"))
	waitFor(t, a, 5*time.Second, isType[RequestFederationRestoreSucceeded])
	want := map[*Federate][2]any{a: {a.Name(), a.Handle()}, b2: {b2.Name(), b2.Handle()}, nb: {"B1", saved}}
	for _, f := range m.feds {
		ev, _ := waitFor(t, f, 5*time.Second, isType[InitiateFederateRestore])
		in := ev.(InitiateFederateRestore)
		if w := want[f]; in.Name != w[0] || in.Handle != w[1] || in.Label != "crash" {
			t.Errorf("%s: %+v, want to restore as %v", f.Name(), in, w)
		}
		r, err := f.RestoredStateReader("crash")
		must(err)
		got, _ := io.ReadAll(r)
		r.Close()
		if string(got) != "state of "+in.Name {
			t.Errorf("%s read back %q, want the state of %s", f.Name(), got, in.Name)
		}
		must(f.FederateRestoreComplete())
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[FederationRestored])
	}

	// The newcomer acts as B1: it owns B1's instance, updates it, and the
	// others reflect the updates and see it as the owner.
	if ok, err := nb.IsAttributeOwnedByFederate(obj, h.label); err != nil || !ok {
		t.Fatalf("the newcomer owns the restored instance's Label: %v, %v", ok, err)
	}
	must(nb.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("after")}, nil))
	for _, f := range []*Federate{a, b2} {
		ev, _ := waitFor(t, f, 5*time.Second, isType[ReflectAttributeValues])
		if r := ev.(ReflectAttributeValues); r.Object != obj || string(r.Values[h.label]) != "after" || r.Producer != nb.Handle() {
			t.Errorf("%s: %+v", f.Name(), r)
		}
		must(f.QueryAttributeOwnership(obj, h.label))
		ev, _ = waitFor(t, f, 5*time.Second, func(ev Event) bool {
			_, ok := ev.(InformAttributeOwnership)
			_, not := ev.(AttributeIsNotOwned)
			return ok || not
		})
		if in, ok := ev.(InformAttributeOwnership); !ok || in.Owner != nb.Handle() {
			t.Errorf("%s: owner %#v, want %d", f.Name(), ev, nb.Handle())
		}
	}
}

// A save request while an earlier one is requested but not yet
// initiated (a timed save whose time is not reached) replaces it
// (§4.16): every federate is told to save under the new label, and the
// replaced save is never initiated, not even once its time is passed.
func TestConformanceSaveReplacesPending(t *testing.T) {
	m, _ := cleanFederation(t, 2, 71)
	a, b := m.feds[0], m.feds[1]
	for _, f := range m.feds {
		if err := f.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, f, 5*time.Second, isType[TimeConstrainedEnabled])
	}
	if err := a.RequestFederationSaveWithTime("later", Float64Time(100)); err != nil {
		t.Fatal(err)
	}
	// b hears of the pending save before it replaces it.
	deadline := time.Now().Add(5 * time.Second)
	for label := ""; label != "later"; {
		if time.Now().After(deadline) {
			t.Fatal("b never heard of the save requested")
		}
		time.Sleep(time.Millisecond)
		b.callDriver(func() error { label = b.core.SaveUnderWay(); return nil })
	}
	if err := b.RequestFederationSave("now"); err != nil {
		t.Fatalf("a save request while a timed save is pending: %v, want it to replace it", err)
	}
	for _, f := range m.feds {
		ev, skipped := waitFor(t, f, 5*time.Second, isType[InitiateFederateSave])
		if in := ev.(InitiateFederateSave); in.Label != "now" || in.HasTime {
			t.Errorf("%s: %+v, want the untimed save now", f.Name(), in)
		}
		for _, e := range skipped {
			if n, ok := e.(FederationNotSaved); ok {
				t.Errorf("%s: the replaced save ended with %v", f.Name(), n)
			}
		}
		if err := f.FederateSaveBegun(); err != nil {
			t.Fatal(err)
		}
		if err := f.FederateSaveComplete(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[FederationSaved])
	}
	for _, f := range m.feds {
		if err := f.TimeAdvanceRequest(Float64Time(150)); err != nil {
			t.Fatal(err)
		}
		_, skipped := waitFor(t, f, 5*time.Second, isType[TimeAdvanceGrant])
		for _, e := range skipped {
			if in, ok := e.(InitiateFederateSave); ok {
				t.Errorf("%s: the replaced save was initiated: %+v", f.Name(), in)
			}
		}
	}
}
