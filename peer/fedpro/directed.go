package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Directed interactions (HLA 4): the eight calls; the callbacks are in
// callbacks.go.

func interactionSet(s *pb.InteractionClassHandleSet) ([]peer.InteractionClassHandle, error) {
	out := make([]peer.InteractionClassHandle, 0, len(s.GetInteractionClassHandle()))
	for _, h := range s.GetInteractionClassHandle() {
		ic, err := interactionHandle(h)
		if err != nil {
			return nil, err
		}
		out = append(out, ic)
	}
	return out, nil
}

// directed decodes a class and an interaction class set and calls fn.
func directed(s *Session, c *pb.ObjectClassHandle, set *pb.InteractionClassHandleSet, all bool, fn func(*peer.Federate, peer.ObjectClassHandle, ...peer.InteractionClassHandle) error) error {
	return s.with(func(f *peer.Federate) error {
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
	})
}

func init() {
	on(func(s *Session, req *pb.PublishObjectClassDirectedInteractionsRequest) (*pb.PublishObjectClassDirectedInteractionsResponse, error) {
		return &pb.PublishObjectClassDirectedInteractionsResponse{}, directed(s, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).PublishObjectClassDirectedInteractions)
	})
	on(func(s *Session, req *pb.UnpublishObjectClassDirectedInteractionsRequest) (*pb.UnpublishObjectClassDirectedInteractionsResponse, error) {
		return &pb.UnpublishObjectClassDirectedInteractionsResponse{}, directed(s, req.GetObjectClass(), nil, true, (*peer.Federate).UnpublishObjectClassDirectedInteractions)
	})
	on(func(s *Session, req *pb.UnpublishObjectClassDirectedInteractionsWithSetRequest) (*pb.UnpublishObjectClassDirectedInteractionsWithSetResponse, error) {
		return &pb.UnpublishObjectClassDirectedInteractionsWithSetResponse{}, directed(s, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).UnpublishObjectClassDirectedInteractions)
	})
	on(func(s *Session, req *pb.SubscribeObjectClassDirectedInteractionsRequest) (*pb.SubscribeObjectClassDirectedInteractionsResponse, error) {
		return &pb.SubscribeObjectClassDirectedInteractionsResponse{}, directed(s, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).SubscribeObjectClassDirectedInteractions)
	})
	on(func(s *Session, req *pb.SubscribeObjectClassDirectedInteractionsUniversallyRequest) (*pb.SubscribeObjectClassDirectedInteractionsUniversallyResponse, error) {
		return &pb.SubscribeObjectClassDirectedInteractionsUniversallyResponse{}, directed(s, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).SubscribeObjectClassDirectedInteractionsUniversally)
	})
	on(func(s *Session, req *pb.UnsubscribeObjectClassDirectedInteractionsRequest) (*pb.UnsubscribeObjectClassDirectedInteractionsResponse, error) {
		return &pb.UnsubscribeObjectClassDirectedInteractionsResponse{}, directed(s, req.GetObjectClass(), nil, true, (*peer.Federate).UnsubscribeObjectClassDirectedInteractions)
	})
	on(func(s *Session, req *pb.UnsubscribeObjectClassDirectedInteractionsWithSetRequest) (*pb.UnsubscribeObjectClassDirectedInteractionsWithSetResponse, error) {
		return &pb.UnsubscribeObjectClassDirectedInteractionsWithSetResponse{}, directed(s, req.GetObjectClass(), req.GetInteractionClasses(), false, (*peer.Federate).UnsubscribeObjectClassDirectedInteractions)
	})
	send := func(s *Session, ic *pb.InteractionClassHandle, o *pb.ObjectInstanceHandle, pv *pb.ParameterHandleValueMap, tag []byte, t *pb.LogicalTime) (peer.MessageRetractionHandle, error) {
		var h peer.MessageRetractionHandle
		err := s.with(func(f *peer.Federate) error {
			class, err := interactionHandle(ic)
			if err != nil {
				return err
			}
			obj, err := objHandle(o)
			if err != nil {
				return err
			}
			vals, err := paramValues(pv)
			if err != nil {
				return err
			}
			var lt peer.LogicalTime
			if t != nil {
				if lt, err = logicalTime(f, t.GetData()); err != nil {
					return err
				}
			}
			h, err = f.SendDirectedInteractionWithTime(class, obj, vals, tag, lt)
			return err
		})
		return h, err
	}
	on(func(s *Session, req *pb.SendDirectedInteractionRequest) (*pb.SendDirectedInteractionResponse, error) {
		_, err := send(s, req.GetInteractionClass(), req.GetObjectInstance(), req.GetParameterValues(), req.GetUserSuppliedTag(), nil)
		return &pb.SendDirectedInteractionResponse{}, err
	})
	on(func(s *Session, req *pb.SendDirectedInteractionWithTimeRequest) (*pb.SendDirectedInteractionWithTimeResponse, error) {
		h, err := send(s, req.GetInteractionClass(), req.GetObjectInstance(), req.GetParameterValues(), req.GetUserSuppliedTag(), req.GetTime())
		return &pb.SendDirectedInteractionWithTimeResponse{Result: retractionReturn(h)}, err
	})
}
