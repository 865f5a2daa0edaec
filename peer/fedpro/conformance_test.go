package fedpro

import (
	"testing"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// TestConformanceSyncPoints (issue 22, item 4) through the Federate
// Protocol: a label re-registered by its own registrant while its point
// is pending fails with SYNCHRONIZATION_POINT_LABEL_NOT_UNIQUE.
func TestConformanceSyncPoints(t *testing.T) {
	m := mtNewFederation(t)
	a, b := m.join("A"), m.join("B")
	a.ok(&pb.RegisterFederationSynchronizationPointRequest{SynchronizationPointLabel: "x", UserSuppliedTag: []byte("t")})
	mtWaitFor(a, func(e *pb.SynchronizationPointRegistrationSucceeded) bool {
		return e.GetSynchronizationPointLabel() == "x"
	})
	a.ok(&pb.RegisterFederationSynchronizationPointRequest{SynchronizationPointLabel: "x", UserSuppliedTag: []byte("t")})
	f := mtWaitFor(a, func(e *pb.SynchronizationPointRegistrationFailed) bool {
		return e.GetSynchronizationPointLabel() == "x"
	})
	if f.GetReason() != pb.SynchronizationPointFailureReason_SYNCHRONIZATION_POINT_LABEL_NOT_UNIQUE {
		t.Errorf("reason %v", f.GetReason())
	}
	for _, c := range []*mtFed{a, b} {
		mtWaitFor(c, func(e *pb.AnnounceSynchronizationPoint) bool { return e.GetSynchronizationPointLabel() == "x" })
		c.ok(&pb.SynchronizationPointAchievedRequest{SynchronizationPointLabel: "x", Successfully: true})
	}
	for _, c := range []*mtFed{a, b} {
		mtWaitFor(c, func(e *pb.FederationSynchronized) bool { return e.GetSynchronizationPointLabel() == "x" })
	}
}
