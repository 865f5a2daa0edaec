package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// TestConformanceDestroyAfterResign: over real gossip, the members
// resign and, at once, a node that is not joined destroys the federation. The destruction answers done,
// FederatesCurrentlyJoined or FederationExecutionDoesNotExist (never a
// connection failure after a timeout), and no federation remains.
func TestConformanceDestroyAfterResign(t *testing.T) {
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 7})
	for round := range 4 {
		federation := fmt.Sprintf("conf-destroy-%d-%d", os.Getpid(), round)
		a, err := joinGossip(t, net, federation, "A", nil, true)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := a.GossipAddr()
		feds := []*Federate{a}
		for i := range 2 {
			f, err := joinGossip(t, net, federation, fmt.Sprintf("B%d", i), []string{seed}, false)
			if err != nil {
				t.Fatal(err)
			}
			feds = append(feds, f)
		}
		destroy := func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return DestroyFederationExecution(ctx, Config{Federation: federation, Gossip: GossipConfig{Seeds: []string{seed}}})
		}
		var wg sync.WaitGroup
		for _, f := range feds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := f.ResignFederationExecution(t.Context(), NoAction); err != nil {
					t.Errorf("%s: resign: %v", f.Name(), err)
				}
			}()
		}
		err = destroy()
		wg.Wait()
		switch {
		case err == nil, errors.Is(err, ErrFederationExecutionDoesNotExist):
		case errors.Is(err, ErrFederatesCurrentlyJoined):
			// Decided before the resigns: now that they are done, the
			// federation is destroyed, or gone with its members.
			if err := destroy(); err != nil && !errors.Is(err, ErrFederationExecutionDoesNotExist) {
				t.Fatalf("round %d: destroy after the resigns: %v", round, err)
			}
		default:
			t.Fatalf("round %d: destroy racing the resigns: %v", round, err)
		}
		t.Logf("round %d: destroy answered %v", round, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		list, err := ListFederationExecutions(ctx, Config{Federation: federation, Gossip: GossipConfig{Seeds: []string{seed}}})
		cancel()
		if err == nil && slices.ContainsFunc(list, func(i FederationExecutionInformation) bool { return i.FederationExecutionName == federation }) {
			t.Fatalf("round %d: the federation remains: %v", round, list)
		}
	}
}
