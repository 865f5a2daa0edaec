package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Directed interactions (HLA 4): the eight calls; the callbacks are in
// callbacks.go.

func interactionSet(s *pb.InteractionClassHandleSet) ([]peer.InteractionClassHandle, error) {
	return decodeAll(s.GetInteractionClassHandle(), interactionHandle)
}

// directed decodes a class and an interaction class set and calls fn.
func directed(f *peer.Federate, c *pb.ObjectClassHandle, set *pb.InteractionClassHandleSet, all bool, fn func(*peer.Federate, peer.ObjectClassHandle, ...peer.InteractionClassHandle) error) error {
	class, err := classHandle(c)
	if err != nil {
		return err
	}
	if all {
		return fn(f, class)
	}
	ics, err := interactionSet(set)
	if err != nil {
		return err
	}
	if len(ics) == 0 {
		return nil // an empty set names nothing (the Set overloads)
	}
	return fn(f, class, ics...)
}

// directedCalls adds the eight directed interaction calls (HLA 4) to t.
func directedCalls(t callTable) {
	act(t, func(f *peer.Federate, req *pb.PublishObjectClassDirectedInteractionsRequest) error {
		return directed(f, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).PublishObjectClassDirectedInteractions)
	})
	act(t, func(f *peer.Federate, req *pb.UnpublishObjectClassDirectedInteractionsRequest) error {
		return directed(f, req.GetObjectClass(), nil, true, (*peer.Federate).UnpublishObjectClassDirectedInteractions)
	})
	act(t, func(f *peer.Federate, req *pb.UnpublishObjectClassDirectedInteractionsWithSetRequest) error {
		return directed(f, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).UnpublishObjectClassDirectedInteractions)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassDirectedInteractionsRequest) error {
		return directed(f, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).SubscribeObjectClassDirectedInteractions)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassDirectedInteractionsUniversallyRequest) error {
		return directed(f, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).SubscribeObjectClassDirectedInteractionsUniversally)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeObjectClassDirectedInteractionsRequest) error {
		return directed(f, req.GetObjectClass(), nil, true, (*peer.Federate).UnsubscribeObjectClassDirectedInteractions)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeObjectClassDirectedInteractionsWithSetRequest) error {
		return directed(f, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).UnsubscribeObjectClassDirectedInteractions)
	})
	// send sends a directed interaction, timestamped when t is not nil.
	send := func(f *peer.Federate, ic *pb.InteractionClassHandle, o *pb.ObjectInstanceHandle, pv *pb.ParameterHandleValueMap, tag []byte, t *pb.LogicalTime) (peer.MessageRetractionHandle, error) {
		class, err := interactionHandle(ic)
		if err != nil {
			return peer.MessageRetractionHandle{}, err
		}
		obj, err := objHandle(o)
		if err != nil {
			return peer.MessageRetractionHandle{}, err
		}
		vals, err := paramValues(pv)
		if err != nil {
			return peer.MessageRetractionHandle{}, err
		}
		var lt peer.LogicalTime
		if t != nil {
			if lt, err = logicalTime(f, t.GetData()); err != nil {
				return peer.MessageRetractionHandle{}, err
			}
		}
		return f.SendDirectedInteractionWithTime(class, obj, vals, tag, lt)
	}
	act(t, func(f *peer.Federate, req *pb.SendDirectedInteractionRequest) error {
		_, err := send(f, req.GetInteractionClass(), req.GetObjectInstance(), req.GetParameterValues(), req.GetUserSuppliedTag(), nil)
		return err
	})
	ask(t, func(f *peer.Federate, req *pb.SendDirectedInteractionWithTimeRequest) (*pb.MessageRetractionReturn, error) {
		return retraction(send(f, req.GetInteractionClass(), req.GetObjectInstance(), req.GetParameterValues(), req.GetUserSuppliedTag(), req.GetTime()))
	})
}
