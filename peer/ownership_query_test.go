package peer

import (
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// QueryAttributeOwnership answers the true owner at every federate that
// knows the instance, also one that stopped hearing the instance's
// class group: A registers and owns Label, B acquires it (from A by
// negotiation, or unowned after A unpublished), A unpublishes the
// class; C1 discovered the instance and unsubscribed, C2 subscribes
// only Position. Every query names B.
func TestConformanceOwnershipQuery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults transport.Faults
		seed   int64
		how    string
	}{
		{"negotiated", transport.Faults{}, 120, "negotiated"},
		{"unowned", transport.Faults{}, 121, "unowned"},
		{"negotiated/loss", transport.Faults{Loss: 0.1, Reorder: 0.05}, 122, "negotiated"},
		{"unowned/loss", transport.Faults{Loss: 0.1, Reorder: 0.05}, 123, "unowned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conformanceOwnershipQuery(t, tc.faults, tc.seed, tc.how)
		})
	}
}

func conformanceOwnershipQuery(t *testing.T, faults transport.Faults, seed int64, how string) {
	m := newMemFederation(t, 4, faults, seed)
	a, b, c1, c2 := m.feds[0], m.feds[1], m.feds[2], m.feds[3]
	h := handles(t, a)
	const wait = 20 * time.Second
	must := mustOK(t)
	must(b.SubscribeObjectClassAttributes(h.vehicle, h.label))
	must(b.PublishObjectClassAttributes(h.vehicle, h.label))
	must(c1.SubscribeObjectClassAttributes(h.vehicle, h.label))
	must(c2.SubscribeObjectClassAttributes(h.vehicle, h.position))
	must(a.PublishObjectClassAttributes(h.vehicle, h.label))
	obj, err := a.RegisterObjectInstance(h.vehicle, "")
	must(err)
	for _, f := range []*Federate{b, c1, c2} {
		waitFor(t, f, wait, isType[DiscoverObjectInstance])
	}
	must(c1.UnsubscribeObjectClass(h.vehicle))

	switch how {
	case "negotiated":
		must(a.NegotiatedAttributeOwnershipDivestiture(obj, []byte("yours"), h.label))
		waitFor(t, b, wait, isType[RequestAttributeOwnershipAssumption])
		must(b.AttributeOwnershipAcquisition(obj, []byte("mine"), h.label))
		waitFor(t, a, wait, isType[RequestDivestitureConfirmation])
		must(a.ConfirmDivestiture(obj, nil, h.label))
		waitFor(t, b, wait, isType[AttributeOwnershipAcquisitionNotification])
		must(a.UnpublishObjectClass(h.vehicle))
	case "unowned":
		// A unpublishes first: Label is unowned, then B takes it.
		must(a.UnpublishObjectClass(h.vehicle))
		// B's request reaches A, who no longer holds it, or B
		// hears it unowned first: either way B takes it through the
		// register when it hears A's release.
		must(b.AttributeOwnershipAcquisition(obj, nil, h.label))
		waitFor(t, b, wait, isType[AttributeOwnershipAcquisitionNotification])
	}
	bh := b.Handle()
	for _, f := range []*Federate{a, b, c1, c2} {
		must(f.QueryAttributeOwnership(obj, h.label))
		ev, skipped := waitFor(t, f, wait, func(ev Event) bool {
			return isType[AttributeIsNotOwned](ev) || isType[InformAttributeOwnership](ev) || isType[AttributeIsOwnedByRTI](ev)
		})
		got, ok := ev.(InformAttributeOwnership)
		if !ok || got.Owner != bh || got.Object != obj || got.Attribute != h.label {
			t.Errorf("%s: query answered %#v, want B (%v) the owner (skipped %v)", f.Name(), ev, bh, skipped)
		}
	}
}
