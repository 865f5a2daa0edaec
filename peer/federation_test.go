package peer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

func TestFederationLifecycle(t *testing.T) {
	reg := NewMemRegistry()
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	doc := testDoc(t)
	cfg := func(name string) Config {
		return Config{Federation: "life", FederateName: name, FOMModules: []*fomxml.Document{doc},
			Control: reg.Control("life"), Transport: net.Endpoint(name + time.Now().String())}
	}
	if _, err := Join(ctx, cfg("early")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("join before create: %v", err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("destroy before create: %v", err)
	}
	if err := CreateFederationExecution(ctx, cfg("x")); err != nil {
		t.Fatal(err)
	}
	if err := CreateFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionAlreadyExists) {
		t.Errorf("second create: %v", err)
	}
	bad := cfg("x")
	bad.FOMFiles = []string{"no/such/file.xml"}
	if err := CreateFederationExecution(ctx, bad); !errors.Is(err, ErrCouldNotOpenFDD) {
		t.Errorf("create with a missing FOM: %v", err)
	}
	if list, err := ListFederationExecutions(ctx, cfg("x")); err != nil || !slices.Equal(list, []string{"life"}) {
		t.Errorf("list: %v, %v", list, err)
	}
	f, err := Join(ctx, cfg("A"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Join(ctx, cfg("A")); !errors.Is(err, ErrFederateNameAlreadyInUse) {
		t.Errorf("same name twice: %v", err)
	}
	if ms, err := ListFederationExecutionMembers(ctx, cfg("x")); err != nil || len(ms) != 1 || ms[0].Name != "A" || ms[0].Handle != f.Handle() {
		t.Errorf("members: %v, %v", ms, err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederatesCurrentlyJoined) {
		t.Errorf("destroy while joined: %v", err)
	}
	if err := f.ResignFederationExecution(ctx, ResignAction(99)); !errors.Is(err, ErrInvalidResignAction) {
		t.Errorf("bad resign action: %v", err)
	}
	if err := f.ResignFederationExecution(ctx, DeleteObjects); err != nil {
		t.Fatal(err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); err != nil {
		t.Errorf("destroy after resign: %v", err)
	}
	if list, _ := ListFederationExecutions(ctx, cfg("x")); len(list) != 0 {
		t.Errorf("list after destroy: %v", list)
	}
	if _, err := ListFederationExecutionMembers(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("members after destroy: %v", err)
	}
}

func TestResignWithOwnedObjects(t *testing.T) {
	m := newMemFederation(t, 2, transport.Faults{}, 30)
	a, b := m.feds[0], m.feds[1]
	h := handles(t, a)
	obj := labelFlow(t, a, b, h, 5*time.Second)
	if err := a.ResignFederationExecution(t.Context(), NoAction); !errors.Is(err, ErrFederateOwnsAttributes) {
		t.Errorf("resign with NoAction while owning: %v", err)
	}
	if err := a.ResignFederationExecution(t.Context(), DeleteObjects); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, b, 5*time.Second, isType[RemoveObjectInstance])
	if r := ev.(RemoveObjectInstance); r.Object != obj {
		t.Errorf("removed %v, want %v", r.Object, obj)
	}
	waitFor(t, b, 5*time.Second, isType[FederateResigned])
}
