package peer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/lbts"
)

// waitStatus waits up to 10 s until the federate's core state (its
// TimeStatus: what the RTI has decided and queued) satisfies cond,
// without taking any event.
func waitStatus(t *testing.T, f *Federate, what string, cond func(lbts.Status) bool) {
	t.Helper()
	pollUntil(t, 10*time.Second, func() (bool, string) {
		st, err := f.TimeStatus()
		if err != nil {
			t.Fatal(err)
		}
		return cond(st), fmt.Sprintf("%s: not in 10 s (status %+v)", what, st)
	})
}

// takeUntil takes f's events until one of type T, which it returns.
func takeUntil[T Event](t *testing.T, f *Federate) T {
	t.Helper()
	return waitEvent[T](t, f)
}

// A pending state ends when the federate has the callback that ends it
// (Next returned it), not when the RTI queues it: with the grant queued
// but not taken, the federate is still in the time advancing state; with
// TimeRegulationEnabled or TimeConstrainedEnabled queued, the enable is
// still pending.
func TestConformancePendingUntilHandedOver(t *testing.T) {
	m, _ := cleanFederation(t, 1, 41)
	f := m.feds[0]

	t.Run("TimeAdvanceGrant", func(t *testing.T) {
		for _, s := range advanceServices {
			now, _ := f.QueryLogicalTime()
			to := Float64Time(now.Float() + 1)
			if err := s.call(f, to); err != nil {
				t.Fatalf("%v: %v", s.kind, err)
			}
			// Unconstrained: granted at once, the grant queued.
			waitStatus(t, f, "grant queued", func(st lbts.Status) bool { return st.Request == lbts.NoRequest })
			for _, other := range advanceServices {
				if err := other.call(f, Float64Time(to.Float()+1)); !errors.Is(err, ErrInTimeAdvancingState) {
					t.Errorf("%v with the grant of %v queued: %v, want ErrInTimeAdvancingState", other.kind, s.kind, err)
				}
			}
			if err := f.EnableTimeRegulation(Float64Time(1)); !errors.Is(err, ErrInTimeAdvancingState) {
				t.Errorf("EnableTimeRegulation with the grant queued: %v, want ErrInTimeAdvancingState", err)
			}
			if err := f.EnableTimeConstrained(); !errors.Is(err, ErrInTimeAdvancingState) {
				t.Errorf("EnableTimeConstrained with the grant queued: %v, want ErrInTimeAdvancingState", err)
			}
			if lt, _ := f.QueryLogicalTime(); lt.Float() != now.Float() {
				t.Errorf("QueryLogicalTime with the grant queued: %v, want %v", lt, now)
			}
			g := takeUntil[TimeAdvanceGrant](t, f)
			if g.Time.Float() != to.Float() {
				t.Fatalf("granted %v, want %v", g.Time, to)
			}
			if lt, _ := f.QueryLogicalTime(); lt.Float() != to.Float() {
				t.Errorf("QueryLogicalTime once the grant was taken: %v, want %v", lt, to)
			}
		}
		// Handed over: the next request is accepted.
		now, _ := f.QueryLogicalTime()
		if err := f.TimeAdvanceRequest(Float64Time(now.Float() + 1)); err != nil {
			t.Fatalf("TimeAdvanceRequest after the grant was taken: %v", err)
		}
		takeUntil[TimeAdvanceGrant](t, f)
	})

	t.Run("TimeRegulationEnabled", func(t *testing.T) {
		if err := f.EnableTimeRegulation(Float64Time(1)); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, f, "regulation enabled", func(st lbts.Status) bool { return st.Regulating })
		if err := f.EnableTimeRegulation(Float64Time(1)); !errors.Is(err, ErrRequestForTimeRegulationPending) {
			t.Errorf("EnableTimeRegulation with TimeRegulationEnabled queued: %v, want ErrRequestForTimeRegulationPending", err)
		}
		now, _ := f.QueryLogicalTime()
		if err := f.TimeAdvanceRequest(Float64Time(now.Float() + 1)); !errors.Is(err, ErrRequestForTimeRegulationPending) {
			t.Errorf("TimeAdvanceRequest with TimeRegulationEnabled queued: %v, want ErrRequestForTimeRegulationPending", err)
		}
		if _, err := f.QueryLookahead(); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
			t.Errorf("QueryLookahead with TimeRegulationEnabled queued: %v, want ErrTimeRegulationIsNotEnabled", err)
		}
		if err := f.ModifyLookahead(Float64Time(2)); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
			t.Errorf("ModifyLookahead with TimeRegulationEnabled queued: %v, want ErrTimeRegulationIsNotEnabled", err)
		}
		if err := f.DisableTimeRegulation(); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
			t.Errorf("DisableTimeRegulation with TimeRegulationEnabled queued: %v, want ErrTimeRegulationIsNotEnabled", err)
		}
		takeUntil[TimeRegulationEnabled](t, f)
		if err := f.EnableTimeRegulation(Float64Time(1)); !errors.Is(err, ErrTimeRegulationAlreadyEnabled) {
			t.Errorf("EnableTimeRegulation once TimeRegulationEnabled was taken: %v, want ErrTimeRegulationAlreadyEnabled", err)
		}
		if l, err := f.QueryLookahead(); err != nil || l.Float() != 1 {
			t.Errorf("QueryLookahead once TimeRegulationEnabled was taken: %v, %v", l, err)
		}
		now, _ = f.QueryLogicalTime()
		if err := f.TimeAdvanceRequest(Float64Time(now.Float() + 1)); err != nil {
			t.Fatalf("TimeAdvanceRequest once TimeRegulationEnabled was taken: %v", err)
		}
		takeUntil[TimeAdvanceGrant](t, f)
	})

	t.Run("TimeConstrainedEnabled", func(t *testing.T) {
		if err := f.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, f, "constrained enabled", func(st lbts.Status) bool { return st.Constrained })
		if err := f.EnableTimeConstrained(); !errors.Is(err, ErrRequestForTimeConstrainedPending) {
			t.Errorf("EnableTimeConstrained with TimeConstrainedEnabled queued: %v, want ErrRequestForTimeConstrainedPending", err)
		}
		now, _ := f.QueryLogicalTime()
		if err := f.NextMessageRequest(Float64Time(now.Float() + 1)); !errors.Is(err, ErrRequestForTimeConstrainedPending) {
			t.Errorf("NextMessageRequest with TimeConstrainedEnabled queued: %v, want ErrRequestForTimeConstrainedPending", err)
		}
		if err := f.DisableTimeConstrained(); !errors.Is(err, ErrTimeConstrainedIsNotEnabled) {
			t.Errorf("DisableTimeConstrained with TimeConstrainedEnabled queued: %v, want ErrTimeConstrainedIsNotEnabled", err)
		}
		takeUntil[TimeConstrainedEnabled](t, f)
		if err := f.EnableTimeConstrained(); !errors.Is(err, ErrTimeConstrainedAlreadyEnabled) {
			t.Errorf("EnableTimeConstrained once TimeConstrainedEnabled was taken: %v, want ErrTimeConstrainedAlreadyEnabled", err)
		}
		if err := f.TimeAdvanceRequest(Float64Time(now.Float() + 1)); err != nil {
			t.Fatalf("TimeAdvanceRequest once TimeConstrainedEnabled was taken: %v", err)
		}
		takeUntil[TimeAdvanceGrant](t, f)
	})
}

// NextForwarded leaves the state pending until HandedOver is told the
// callback's Receipt.
func TestConformancePendingUntilHandedOverForwarded(t *testing.T) {
	m, _ := cleanFederation(t, 1, 43)
	f := m.feds[0]
	if err := f.TimeAdvanceRequest(Float64Time(1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r Receipt
	for {
		ev, rc, err := f.NextForwarded(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(TimeAdvanceGrant); ok {
			if rc == 0 {
				t.Fatal("a TimeAdvanceGrant with the zero Receipt")
			}
			r = rc
			break
		}
		if rc != 0 {
			t.Fatalf("%T has Receipt %d; only the callbacks that end a pending state have one", ev, rc)
		}
	}
	if err := f.TimeAdvanceRequest(Float64Time(2)); !errors.Is(err, ErrInTimeAdvancingState) {
		t.Fatalf("TimeAdvanceRequest with the grant taken but not handed over: %v, want ErrInTimeAdvancingState", err)
	}
	if lt, _ := f.QueryLogicalTime(); lt.Float() != 0 {
		t.Errorf("QueryLogicalTime before the hand-over: %v, want 0", lt)
	}
	f.HandedOver(r - 1) // an earlier receipt: changes nothing
	if err := f.TimeAdvanceRequest(Float64Time(2)); !errors.Is(err, ErrInTimeAdvancingState) {
		t.Fatalf("TimeAdvanceRequest after handing over an earlier receipt: %v, want ErrInTimeAdvancingState", err)
	}
	f.HandedOver(r)
	if lt, _ := f.QueryLogicalTime(); lt.Float() != 1 {
		t.Errorf("QueryLogicalTime after the hand-over: %v, want 1", lt)
	}
	if err := f.TimeAdvanceRequest(Float64Time(2)); err != nil {
		t.Fatalf("TimeAdvanceRequest after the hand-over: %v", err)
	}
}

// untilQueued calls service until it answers want with the note that
// the callback is queued and not yet handed over (a refused call changes
// nothing), and fails after 10 s.
func untilQueued(t *testing.T, what string, want error, service func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := service()
		if errors.Is(err, want) && strings.Contains(err.Error(), "not yet handed") {
			return
		}
		if err != nil && !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
		if err == nil {
			t.Fatalf("%s succeeded before the federate had the callback", what)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the callback was not queued in 10 s (last answer %v)", what, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// A federate is in a save or a restore once it has InitiateFederateSave
// or InitiateFederateRestore (1516.1 §4.2's state chart), not when the
// RTI queues it: until Next returns it, FederateSaveBegun answers
// SaveNotInitiated and FederateRestoreComplete RestoreNotRequested.
func TestConformanceSaveRestorePendingUntilHandedOver(t *testing.T) {
	m, _ := cleanFederation(t, 1, 41)
	f := m.feds[0]
	if err := f.RequestFederationSave("s"); err != nil {
		t.Fatal(err)
	}
	untilQueued(t, "FederateSaveBegun", ErrSaveNotInitiated, f.FederateSaveBegun)
	waitFor(t, f, 5*time.Second, isType[InitiateFederateSave])
	if err := f.FederateSaveBegun(); err != nil {
		t.Fatalf("FederateSaveBegun once the federate has InitiateFederateSave: %v", err)
	}
	if err := f.FederateSaveComplete(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, 5*time.Second, isType[FederationSaved])

	if err := f.RequestFederationRestore("s"); err != nil {
		t.Fatal(err)
	}
	untilQueued(t, "FederateRestoreComplete", ErrRestoreNotRequested, f.FederateRestoreComplete)
	waitFor(t, f, 5*time.Second, isType[InitiateFederateRestore])
	if err := f.FederateRestoreComplete(); err != nil {
		t.Fatalf("FederateRestoreComplete once the federate has InitiateFederateRestore: %v", err)
	}
	waitFor(t, f, 5*time.Second, isType[FederationRestored])
}
