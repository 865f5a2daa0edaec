package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Time management (1516.1 §8).

// withTime decodes a logical time and calls fn with it.
func withTime(f *peer.Federate, t *pb.LogicalTime, fn func(peer.LogicalTime) error) error {
	_, err := timed(f, t, func(lt peer.LogicalTime) (struct{}, error) { return struct{}{}, fn(lt) })
	return err
}

// withLookahead decodes a lookahead and calls fn with it.
func withLookahead(f *peer.Federate, l *pb.LogicalTimeInterval, fn func(peer.LogicalTime) error) error {
	lt, err := lookahead(f, l.GetData())
	if err != nil {
		return err
	}
	return fn(lt)
}

// timeQuery answers Query GALT and Query LITS.
func timeQuery(f *peer.Federate, fn func(*peer.Federate) (peer.LogicalTime, bool, error)) (*pb.TimeQueryReturn, error) {
	t, ok, err := fn(f)
	if err != nil {
		return nil, err
	}
	r := &pb.TimeQueryReturn{}
	if ok {
		r.LogicalTimeIsValid, r.LogicalTime = true, pbTime(f, t)
	}
	return r, nil
}

// timeCalls adds the time management calls (1516.1 §8) to t.
func timeCalls(t callTable) {
	act(t, func(f *peer.Federate, req *pb.EnableTimeRegulationRequest) error {
		return withLookahead(f, req.GetLookahead(), f.EnableTimeRegulation)
	})
	act(t, func(f *peer.Federate, _ *pb.DisableTimeRegulationRequest) error { return f.DisableTimeRegulation() })
	act(t, func(f *peer.Federate, _ *pb.EnableTimeConstrainedRequest) error { return f.EnableTimeConstrained() })
	act(t, func(f *peer.Federate, _ *pb.DisableTimeConstrainedRequest) error { return f.DisableTimeConstrained() })
	act(t, func(f *peer.Federate, req *pb.TimeAdvanceRequestRequest) error {
		return withTime(f, req.GetTime(), f.TimeAdvanceRequest)
	})
	act(t, func(f *peer.Federate, req *pb.TimeAdvanceRequestAvailableRequest) error {
		return withTime(f, req.GetTime(), f.TimeAdvanceRequestAvailable)
	})
	act(t, func(f *peer.Federate, req *pb.NextMessageRequestRequest) error {
		return withTime(f, req.GetTime(), f.NextMessageRequest)
	})
	act(t, func(f *peer.Federate, req *pb.NextMessageRequestAvailableRequest) error {
		return withTime(f, req.GetTime(), f.NextMessageRequestAvailable)
	})
	act(t, func(f *peer.Federate, req *pb.FlushQueueRequestRequest) error {
		return withTime(f, req.GetTime(), f.FlushQueueRequest)
	})
	act(t, func(f *peer.Federate, _ *pb.EnableAsynchronousDeliveryRequest) error {
		return f.EnableAsynchronousDelivery()
	})
	act(t, func(f *peer.Federate, _ *pb.DisableAsynchronousDeliveryRequest) error {
		return f.DisableAsynchronousDelivery()
	})
	ask(t, func(f *peer.Federate, _ *pb.QueryGALTRequest) (*pb.TimeQueryReturn, error) {
		return timeQuery(f, (*peer.Federate).QueryGALT)
	})
	ask(t, func(f *peer.Federate, _ *pb.QueryLITSRequest) (*pb.TimeQueryReturn, error) {
		return timeQuery(f, (*peer.Federate).QueryLITS)
	})
	ask(t, func(f *peer.Federate, _ *pb.QueryLogicalTimeRequest) (*pb.LogicalTime, error) {
		t, err := f.QueryLogicalTime()
		if err != nil {
			return nil, err
		}
		return pbTime(f, t), nil
	})
	ask(t, func(f *peer.Federate, _ *pb.QueryLookaheadRequest) (*pb.LogicalTimeInterval, error) {
		l, err := f.QueryLookahead()
		if err != nil {
			return nil, err
		}
		return pbInterval(f, l), nil
	})
	act(t, func(f *peer.Federate, req *pb.ModifyLookaheadRequest) error {
		return withLookahead(f, req.GetLookahead(), f.ModifyLookahead)
	})
	act(t, func(f *peer.Federate, req *pb.RetractRequest) error {
		return do(f.Retract)(retractionHandle(req.GetRetraction()))
	})
	act(t, func(f *peer.Federate, req *pb.ChangeAttributeOrderTypeRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), func(obj peer.ObjectInstanceHandle, attrs ...peer.AttributeHandle) error {
			return f.ChangeAttributeOrderType(obj, orderOf(req.GetOrderType()), attrs...)
		})
	})
	act(t, func(f *peer.Federate, req *pb.ChangeInteractionOrderTypeRequest) error {
		return withInteraction(f, req.GetInteractionClass(), func(f *peer.Federate, ic peer.InteractionClassHandle) error {
			return f.ChangeInteractionOrderType(ic, orderOf(req.GetOrderType()))
		})
	})
}

func orderOf(o pb.OrderType) peer.OrderType {
	if o == pb.OrderType_TIMESTAMP {
		return peer.TimeStamp
	}
	return peer.Receive
}
