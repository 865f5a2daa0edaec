package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Time management (1516.1 §8).

func init() {
	on(func(s *Session, req *pb.EnableTimeRegulationRequest) (*pb.EnableTimeRegulationResponse, error) {
		return &pb.EnableTimeRegulationResponse{}, s.with(func(f *peer.Federate) error {
			l, err := lookahead(f, req.GetLookahead().GetData())
			if err != nil {
				return err
			}
			return f.EnableTimeRegulation(l)
		})
	})
	on(func(s *Session, _ *pb.DisableTimeRegulationRequest) (*pb.DisableTimeRegulationResponse, error) {
		return &pb.DisableTimeRegulationResponse{}, s.with((*peer.Federate).DisableTimeRegulation)
	})
	on(func(s *Session, _ *pb.EnableTimeConstrainedRequest) (*pb.EnableTimeConstrainedResponse, error) {
		return &pb.EnableTimeConstrainedResponse{}, s.with((*peer.Federate).EnableTimeConstrained)
	})
	on(func(s *Session, _ *pb.DisableTimeConstrainedRequest) (*pb.DisableTimeConstrainedResponse, error) {
		return &pb.DisableTimeConstrainedResponse{}, s.with((*peer.Federate).DisableTimeConstrained)
	})
	advance := func(s *Session, t *pb.LogicalTime, fn func(*peer.Federate, peer.LogicalTime) error) error {
		return s.with(func(f *peer.Federate) error {
			lt, err := logicalTime(f, t.GetData())
			if err != nil {
				return err
			}
			return fn(f, lt)
		})
	}
	on(func(s *Session, req *pb.TimeAdvanceRequestRequest) (*pb.TimeAdvanceRequestResponse, error) {
		return &pb.TimeAdvanceRequestResponse{}, advance(s, req.GetTime(), (*peer.Federate).TimeAdvanceRequest)
	})
	on(func(s *Session, req *pb.TimeAdvanceRequestAvailableRequest) (*pb.TimeAdvanceRequestAvailableResponse, error) {
		return &pb.TimeAdvanceRequestAvailableResponse{}, advance(s, req.GetTime(), (*peer.Federate).TimeAdvanceRequestAvailable)
	})
	on(func(s *Session, req *pb.NextMessageRequestRequest) (*pb.NextMessageRequestResponse, error) {
		return &pb.NextMessageRequestResponse{}, advance(s, req.GetTime(), (*peer.Federate).NextMessageRequest)
	})
	on(func(s *Session, req *pb.NextMessageRequestAvailableRequest) (*pb.NextMessageRequestAvailableResponse, error) {
		return &pb.NextMessageRequestAvailableResponse{}, advance(s, req.GetTime(), (*peer.Federate).NextMessageRequestAvailable)
	})
	on(func(s *Session, req *pb.FlushQueueRequestRequest) (*pb.FlushQueueRequestResponse, error) {
		return &pb.FlushQueueRequestResponse{}, advance(s, req.GetTime(), (*peer.Federate).FlushQueueRequest)
	})
	on(func(s *Session, _ *pb.EnableAsynchronousDeliveryRequest) (*pb.EnableAsynchronousDeliveryResponse, error) {
		return &pb.EnableAsynchronousDeliveryResponse{}, s.with((*peer.Federate).EnableAsynchronousDelivery)
	})
	on(func(s *Session, _ *pb.DisableAsynchronousDeliveryRequest) (*pb.DisableAsynchronousDeliveryResponse, error) {
		return &pb.DisableAsynchronousDeliveryResponse{}, s.with((*peer.Federate).DisableAsynchronousDelivery)
	})
	query := func(s *Session, fn func(*peer.Federate) (peer.LogicalTime, bool, error)) (*pb.TimeQueryReturn, error) {
		r := &pb.TimeQueryReturn{}
		err := s.with(func(f *peer.Federate) error {
			t, ok, err := fn(f)
			if err != nil {
				return err
			}
			if ok {
				r.LogicalTimeIsValid, r.LogicalTime = true, pbTime(f, t)
			}
			return nil
		})
		return r, err
	}
	on(func(s *Session, _ *pb.QueryGALTRequest) (*pb.QueryGALTResponse, error) {
		r, err := query(s, (*peer.Federate).QueryGALT)
		return &pb.QueryGALTResponse{Result: r}, err
	})
	on(func(s *Session, _ *pb.QueryLITSRequest) (*pb.QueryLITSResponse, error) {
		r, err := query(s, (*peer.Federate).QueryLITS)
		return &pb.QueryLITSResponse{Result: r}, err
	})
	on(func(s *Session, _ *pb.QueryLogicalTimeRequest) (*pb.QueryLogicalTimeResponse, error) {
		var r *pb.LogicalTime
		err := s.with(func(f *peer.Federate) error {
			t, err := f.QueryLogicalTime()
			if err == nil {
				r = pbTime(f, t)
			}
			return err
		})
		return &pb.QueryLogicalTimeResponse{Result: r}, err
	})
	on(func(s *Session, _ *pb.QueryLookaheadRequest) (*pb.QueryLookaheadResponse, error) {
		var r *pb.LogicalTimeInterval
		err := s.with(func(f *peer.Federate) error {
			l, err := f.QueryLookahead()
			if err == nil {
				r = pbInterval(f, l)
			}
			return err
		})
		return &pb.QueryLookaheadResponse{Result: r}, err
	})
	on(func(s *Session, req *pb.ModifyLookaheadRequest) (*pb.ModifyLookaheadResponse, error) {
		return &pb.ModifyLookaheadResponse{}, s.with(func(f *peer.Federate) error {
			l, err := lookahead(f, req.GetLookahead().GetData())
			if err != nil {
				return err
			}
			return f.ModifyLookahead(l)
		})
	})
	on(func(s *Session, req *pb.RetractRequest) (*pb.RetractResponse, error) {
		return &pb.RetractResponse{}, s.with(func(f *peer.Federate) error {
			h, err := retractionHandle(req.GetRetraction())
			if err != nil {
				return err
			}
			return f.Retract(h)
		})
	})
	on(func(s *Session, req *pb.ChangeAttributeOrderTypeRequest) (*pb.ChangeAttributeOrderTypeResponse, error) {
		return &pb.ChangeAttributeOrderTypeResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			attrs, err := attrSet(req.GetAttributes())
			if err != nil {
				return err
			}
			return f.ChangeAttributeOrderType(obj, orderOf(req.GetOrderType()), attrs...)
		})
	})
	on(func(s *Session, req *pb.ChangeInteractionOrderTypeRequest) (*pb.ChangeInteractionOrderTypeResponse, error) {
		return &pb.ChangeInteractionOrderTypeResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
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
