package fedpro

import (
	"fmt"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Support services (1516.1 §10): names and handles, update rates, order
// types. (Dimensions and regions are in ddm.go, transportation types in
// transport.go, switches and normalization in switches.go.)

// lookup runs fn with the session's federate and returns its result.
func lookup[T any](s *Session, fn func(*peer.Federate) (T, error)) (T, error) {
	var out T
	err := s.with(func(f *peer.Federate) error {
		var err error
		out, err = fn(f)
		return err
	})
	return out, err
}

func init() {
	on(func(s *Session, req *pb.GetFederateHandleRequest) (*pb.GetFederateHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.FederateHandle, error) { return f.GetFederateHandle(req.GetFederateName()) })
		return &pb.GetFederateHandleResponse{Result: pbFed(h)}, err
	})
	on(func(s *Session, req *pb.GetFederateNameRequest) (*pb.GetFederateNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			h, err := fedHandle(req.GetFederate())
			if err != nil {
				return "", err
			}
			return f.GetFederateName(h)
		})
		return &pb.GetFederateNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetObjectClassHandleRequest) (*pb.GetObjectClassHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.ObjectClassHandle, error) {
			return f.GetObjectClassHandle(req.GetObjectClassName())
		})
		return &pb.GetObjectClassHandleResponse{Result: pbClass(h)}, err
	})
	on(func(s *Session, req *pb.GetObjectClassNameRequest) (*pb.GetObjectClassNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			h, err := classHandle(req.GetObjectClass())
			if err != nil {
				return "", err
			}
			return f.GetObjectClassName(h)
		})
		return &pb.GetObjectClassNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetKnownObjectClassHandleRequest) (*pb.GetKnownObjectClassHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.ObjectClassHandle, error) {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return 0, err
			}
			return f.GetKnownObjectClassHandle(obj)
		})
		return &pb.GetKnownObjectClassHandleResponse{Result: pbClass(h)}, err
	})
	on(func(s *Session, req *pb.GetObjectInstanceHandleRequest) (*pb.GetObjectInstanceHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.ObjectInstanceHandle, error) {
			return f.GetObjectInstanceHandle(req.GetObjectInstanceName())
		})
		return &pb.GetObjectInstanceHandleResponse{Result: pbObj(h)}, err
	})
	on(func(s *Session, req *pb.GetObjectInstanceNameRequest) (*pb.GetObjectInstanceNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return "", err
			}
			return f.GetObjectInstanceName(obj)
		})
		return &pb.GetObjectInstanceNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetAttributeHandleRequest) (*pb.GetAttributeHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.AttributeHandle, error) {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return 0, err
			}
			return f.GetAttributeHandle(class, req.GetAttributeName())
		})
		return &pb.GetAttributeHandleResponse{Result: pbAttr(h)}, err
	})
	on(func(s *Session, req *pb.GetAttributeNameRequest) (*pb.GetAttributeNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return "", err
			}
			a, err := attrHandle(req.GetAttribute())
			if err != nil {
				return "", err
			}
			return f.GetAttributeName(class, a)
		})
		return &pb.GetAttributeNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetUpdateRateValueRequest) (*pb.GetUpdateRateValueResponse, error) {
		v, err := lookup(s, func(f *peer.Federate) (float64, error) { return f.GetUpdateRateValue(req.GetUpdateRateDesignator()) })
		return &pb.GetUpdateRateValueResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.GetUpdateRateValueForAttributeRequest) (*pb.GetUpdateRateValueForAttributeResponse, error) {
		v, err := lookup(s, func(f *peer.Federate) (float64, error) {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return 0, err
			}
			a, err := attrHandle(req.GetAttribute())
			if err != nil {
				return 0, err
			}
			return f.GetUpdateRateValueForAttribute(obj, a)
		})
		return &pb.GetUpdateRateValueForAttributeResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.GetInteractionClassHandleRequest) (*pb.GetInteractionClassHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.InteractionClassHandle, error) {
			return f.GetInteractionClassHandle(req.GetInteractionClassName())
		})
		return &pb.GetInteractionClassHandleResponse{Result: pbInteraction(h)}, err
	})
	on(func(s *Session, req *pb.GetInteractionClassNameRequest) (*pb.GetInteractionClassNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return "", err
			}
			return f.GetInteractionClassName(ic)
		})
		return &pb.GetInteractionClassNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetParameterHandleRequest) (*pb.GetParameterHandleResponse, error) {
		h, err := lookup(s, func(f *peer.Federate) (peer.ParameterHandle, error) {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return 0, err
			}
			return f.GetParameterHandle(ic, req.GetParameterName())
		})
		return &pb.GetParameterHandleResponse{Result: pbParam(h)}, err
	})
	on(func(s *Session, req *pb.GetParameterNameRequest) (*pb.GetParameterNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return "", err
			}
			p, err := paramHandle(req.GetParameter())
			if err != nil {
				return "", err
			}
			return f.GetParameterName(ic, p)
		})
		return &pb.GetParameterNameResponse{Result: n}, err
	})
	on(func(s *Session, req *pb.GetOrderTypeRequest) (*pb.GetOrderTypeResponse, error) {
		o, err := lookup(s, func(f *peer.Federate) (peer.OrderType, error) { return f.GetOrderType(req.GetOrderTypeName()) })
		return &pb.GetOrderTypeResponse{Result: pbOrder(o)}, err
	})
	on(func(s *Session, req *pb.GetOrderNameRequest) (*pb.GetOrderNameResponse, error) {
		n, err := lookup(s, func(f *peer.Federate) (string, error) {
			switch req.GetOrderType() {
			case pb.OrderType_RECEIVE, pb.OrderType_TIMESTAMP:
			default:
				return "", fmt.Errorf("%w: %v", peer.ErrInvalidOrderType, req.GetOrderType())
			}
			return f.GetOrderName(orderOf(req.GetOrderType()))
		})
		return &pb.GetOrderNameResponse{Result: n}, err
	})
}
