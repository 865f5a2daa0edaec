package peer

import (
	"errors"
	"testing"
	"time"
)

// Every ownership service refuses what IEEE 1516.1-2010 §7 says it must,
// with the standard's exception as the error.
func TestOwnershipServiceErrors(t *testing.T) {
	m, h := cleanFederation(t, 3, 90)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	must := mustOK(t)
	// A registers a Vehicle and holds Label; B publishes Label and
	// discovers it; C knows it but publishes nothing.
	must(c.SubscribeObjectClassAttributes(h.vehicle, h.label))
	must(b.PublishObjectClassAttributes(h.vehicle, h.label))
	obj := labelFlow(t, a, b, h, 5*time.Second)
	waitFor(t, c, 5*time.Second, isType[DiscoverObjectInstance])
	unknown := ObjectInstanceHandle{Federate: 99, Serial: 1}
	const undefined = AttributeHandle(12345)

	ifWanted := func(f *Federate, obj ObjectInstanceHandle, attrs ...AttributeHandle) error {
		_, err := f.AttributeOwnershipDivestitureIfWanted(obj, attrs...)
		return err
	}
	isOwned := func(f *Federate, obj ObjectInstanceHandle, attr AttributeHandle) error {
		_, err := f.IsAttributeOwnedByFederate(obj, attr)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		// §7.2 unconditional divestiture
		{"unconditional: unknown instance", a.UnconditionalAttributeOwnershipDivestiture(unknown, h.label), ErrObjectInstanceNotKnown},
		{"unconditional: undefined attribute", a.UnconditionalAttributeOwnershipDivestiture(obj, undefined), ErrAttributeNotDefined},
		{"unconditional: not owned", b.UnconditionalAttributeOwnershipDivestiture(obj, h.label), ErrAttributeNotOwned},
		// §7.3 negotiated divestiture
		{"negotiated: unknown instance", a.NegotiatedAttributeOwnershipDivestiture(unknown, nil, h.label), ErrObjectInstanceNotKnown},
		{"negotiated: undefined attribute", a.NegotiatedAttributeOwnershipDivestiture(obj, nil, undefined), ErrAttributeNotDefined},
		{"negotiated: not owned", b.NegotiatedAttributeOwnershipDivestiture(obj, nil, h.label), ErrAttributeNotOwned},
		// §7.6 confirm divestiture
		{"confirm: unknown instance", a.ConfirmDivestiture(unknown, nil, h.label), ErrObjectInstanceNotKnown},
		{"confirm: undefined attribute", a.ConfirmDivestiture(obj, nil, undefined), ErrAttributeNotDefined},
		{"confirm: not owned", b.ConfirmDivestiture(obj, nil, h.label), ErrAttributeNotOwned},
		{"confirm: not offered", a.ConfirmDivestiture(obj, nil, h.label), ErrAttributeDivestitureWasNotRequested},
		// §7.13 divestiture if wanted
		{"if wanted: unknown instance", ifWanted(a, unknown, h.label), ErrObjectInstanceNotKnown},
		{"if wanted: undefined attribute", ifWanted(a, obj, undefined), ErrAttributeNotDefined},
		{"if wanted: not owned", ifWanted(b, obj, h.label), ErrAttributeNotOwned},
		// §7.14 cancel negotiated divestiture
		{"cancel divestiture: unknown instance", a.CancelNegotiatedAttributeOwnershipDivestiture(unknown, h.label), ErrObjectInstanceNotKnown},
		{"cancel divestiture: undefined attribute", a.CancelNegotiatedAttributeOwnershipDivestiture(obj, undefined), ErrAttributeNotDefined},
		{"cancel divestiture: not owned", b.CancelNegotiatedAttributeOwnershipDivestiture(obj, h.label), ErrAttributeNotOwned},
		{"cancel divestiture: not offered", a.CancelNegotiatedAttributeOwnershipDivestiture(obj, h.label), ErrAttributeDivestitureWasNotRequested},
		// §7.12 release denied
		{"deny: unknown instance", a.AttributeOwnershipReleaseDenied(unknown, h.label), ErrObjectInstanceNotKnown},
		{"deny: undefined attribute", a.AttributeOwnershipReleaseDenied(obj, undefined), ErrAttributeNotDefined},
		{"deny: not owned", b.AttributeOwnershipReleaseDenied(obj, h.label), ErrAttributeNotOwned},
		// §7.8 acquisition
		{"acquire: unknown instance", b.AttributeOwnershipAcquisition(unknown, nil, h.label), ErrObjectInstanceNotKnown},
		{"acquire: undefined attribute", b.AttributeOwnershipAcquisition(obj, nil, undefined), ErrAttributeNotDefined},
		{"acquire: class not published", c.AttributeOwnershipAcquisition(obj, nil, h.label), ErrObjectClassNotPublished},
		{"acquire: attribute not published", b.AttributeOwnershipAcquisition(obj, nil, h.position), ErrAttributeNotPublished},
		{"acquire: owned already", a.AttributeOwnershipAcquisition(obj, nil, h.label), ErrFederateOwnsAttributes},
		// §7.9 acquisition if available
		{"if available: unknown instance", b.AttributeOwnershipAcquisitionIfAvailable(unknown, h.label), ErrObjectInstanceNotKnown},
		{"if available: undefined attribute", b.AttributeOwnershipAcquisitionIfAvailable(obj, undefined), ErrAttributeNotDefined},
		{"if available: class not published", c.AttributeOwnershipAcquisitionIfAvailable(obj, h.label), ErrObjectClassNotPublished},
		{"if available: attribute not published", b.AttributeOwnershipAcquisitionIfAvailable(obj, h.position), ErrAttributeNotPublished},
		{"if available: owned already", a.AttributeOwnershipAcquisitionIfAvailable(obj, h.label), ErrFederateOwnsAttributes},
		// §7.15 cancel acquisition
		{"cancel acquisition: unknown instance", b.CancelAttributeOwnershipAcquisition(unknown, h.label), ErrObjectInstanceNotKnown},
		{"cancel acquisition: undefined attribute", b.CancelAttributeOwnershipAcquisition(obj, undefined), ErrAttributeNotDefined},
		{"cancel acquisition: owned already", a.CancelAttributeOwnershipAcquisition(obj, h.label), ErrAttributeAlreadyOwned},
		{"cancel acquisition: not requested", b.CancelAttributeOwnershipAcquisition(obj, h.label), ErrAttributeAcquisitionWasNotRequested},
		// §7.17 query, §7.19 is owned
		{"query: unknown instance", b.QueryAttributeOwnership(unknown, h.label), ErrObjectInstanceNotKnown},
		{"query: undefined attribute", b.QueryAttributeOwnership(obj, undefined), ErrAttributeNotDefined},
		{"is owned: unknown instance", isOwned(b, unknown, h.label), ErrObjectInstanceNotKnown},
		{"is owned: undefined attribute", isOwned(b, obj, undefined), ErrAttributeNotDefined},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}

	// Errors that need state: an offer made twice, a confirmation nobody
	// asked for, an acquisition if available while one is pending.
	must(a.NegotiatedAttributeOwnershipDivestiture(obj, []byte("offer"), h.label))
	if err := a.NegotiatedAttributeOwnershipDivestiture(obj, nil, h.label); !errors.Is(err, ErrAttributeAlreadyBeingDivested) {
		t.Errorf("offered twice: %v", err)
	}
	if err := a.ConfirmDivestiture(obj, nil, h.label); !errors.Is(err, ErrNoAcquisitionPending) {
		t.Errorf("confirm with nobody asking: %v", err)
	}
	must(a.CancelNegotiatedAttributeOwnershipDivestiture(obj, h.label))
	must(b.AttributeOwnershipAcquisition(obj, []byte("mine"), h.label))
	if err := b.AttributeOwnershipAcquisitionIfAvailable(obj, h.label); !errors.Is(err, ErrAttributeAlreadyBeingAcquired) {
		t.Errorf("if available while acquiring: %v", err)
	}
	waitFor(t, a, 5*time.Second, isType[RequestAttributeOwnershipRelease])
	must(b.CancelAttributeOwnershipAcquisition(obj, h.label))
	waitFor(t, b, 5*time.Second, isType[ConfirmAttributeOwnershipAcquisitionCancellation])
	// The cancelled request is gone: releasing gives nothing away.
	given, err := a.AttributeOwnershipDivestitureIfWanted(obj, h.label)
	must(err)
	if len(given) != 0 {
		t.Errorf("released %v to a cancelled acquisition", given)
	}
	if ok, err := a.IsAttributeOwnedByFederate(obj, h.label); err != nil || !ok {
		t.Errorf("A owns Label: %v, %v", ok, err)
	}

	// After resigning, every service says so.
	must(c.ResignFederationExecution(t.Context(), NoAction))
	if err := c.QueryAttributeOwnership(obj, h.label); err == nil {
		t.Error("query after resign: no error")
	}
}

// An owner that crashes leaves its attributes orphaned: an acquisition
// asks every live member who holds them and, once all say nobody alive
// does, takes them through the register.
func TestOwnershipOfLostOwner(t *testing.T) {
	m, h := cleanFederation(t, 3, 91)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	must := mustOK(t)
	must(b.PublishObjectClassAttributes(h.vehicle, h.label))
	must(c.PublishObjectClassAttributes(h.vehicle, h.label))
	must(c.SubscribeObjectClassAttributes(h.vehicle, h.label))
	obj := labelFlow(t, a, b, h, 5*time.Second)
	waitFor(t, c, 5*time.Second, isType[DiscoverObjectInstance])
	// B takes Label from A.
	must(b.AttributeOwnershipAcquisition(obj, nil, h.label))
	waitFor(t, a, 5*time.Second, isType[RequestAttributeOwnershipRelease])
	if given, err := a.AttributeOwnershipDivestitureIfWanted(obj, h.label); err != nil || len(given) != 1 {
		t.Fatalf("release: %v, %v", given, err)
	}
	waitFor(t, b, 5*time.Second, isType[AttributeOwnershipAcquisitionNotification])
	// B crashes holding it; C acquires it.
	m.reg.Crash(m.name, b.Handle())
	m.net.Crash(b.Name())
	b.Close()
	waitFor(t, c, 5*time.Second, isType[FederateLost])
	must(c.AttributeOwnershipAcquisition(obj, []byte("orphan"), h.label))
	ev, _ := waitFor(t, c, 5*time.Second, isType[AttributeOwnershipAcquisitionNotification])
	if n := ev.(AttributeOwnershipAcquisitionNotification); n.Object != obj || len(n.Attributes) != 1 || n.Attributes[0] != h.label {
		t.Errorf("notification %+v", n)
	}
	if ok, err := c.IsAttributeOwnedByFederate(obj, h.label); err != nil || !ok {
		t.Errorf("C owns Label: %v, %v", ok, err)
	}
	// A hears of it (C's announcement may come after A saw B go, when A
	// takes Label for unowned) and agrees.
	deadline := time.Now().Add(5 * time.Second)
	for {
		must(a.QueryAttributeOwnership(obj, h.label))
		ev, _ = waitFor(t, a, 5*time.Second, func(ev Event) bool {
			return isType[InformAttributeOwnership](ev) || isType[AttributeIsNotOwned](ev)
		})
		if in, ok := ev.(InformAttributeOwnership); ok {
			if in.Owner != c.Handle() {
				t.Errorf("A says %v owns Label, want %v", in.Owner, c.Handle())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A never heard that C owns Label")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
