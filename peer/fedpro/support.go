package fedpro

import (
	"fmt"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Support services (1516.1 §10): names and handles, update rates, order
// types. (Dimensions and regions are in ddm.go, transportation types in
// transport.go, switches and normalization in switches.go.)

// then calls fn with what a decoder returned, unless it failed:
// then(fn)(decode(x)).
func then[H, T any](fn func(H) (T, error)) func(H, error) (T, error) {
	return func(h H, err error) (T, error) {
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(h)
	}
}

// do calls fn with what a decoder returned, unless it failed:
// do(fn)(decode(x)).
func do[H any](fn func(H) error) func(H, error) error {
	return func(h H, err error) error {
		if err != nil {
			return err
		}
		return fn(h)
	}
}

// encode encodes with enc what a service returned, unless it failed:
// encode(enc)(service(x)).
func encode[H, P any](enc func(H) P) func(H, error) (P, error) {
	return func(h H, err error) (P, error) {
		if err != nil {
			var zero P
			return zero, err
		}
		return enc(h), nil
	}
}

// supportCalls adds the support services' name and handle lookups (1516.1
// §10) to t.
func supportCalls(t callTable) {
	ask(t, func(f *peer.Federate, req *pb.GetFederateHandleRequest) (*pb.FederateHandle, error) {
		return encode(pbFed)(f.GetFederateHandle(req.GetFederateName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetFederateNameRequest) (string, error) {
		return then(f.GetFederateName)(fedHandle(req.GetFederate()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetObjectClassHandleRequest) (*pb.ObjectClassHandle, error) {
		return encode(pbClass)(f.GetObjectClassHandle(req.GetObjectClassName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetObjectClassNameRequest) (string, error) {
		return then(f.GetObjectClassName)(classHandle(req.GetObjectClass()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetKnownObjectClassHandleRequest) (*pb.ObjectClassHandle, error) {
		return encode(pbClass)(then(f.GetKnownObjectClassHandle)(objHandle(req.GetObjectInstance())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetObjectInstanceHandleRequest) (*pb.ObjectInstanceHandle, error) {
		return encode(pbObj)(f.GetObjectInstanceHandle(req.GetObjectInstanceName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetObjectInstanceNameRequest) (string, error) {
		return then(f.GetObjectInstanceName)(objHandle(req.GetObjectInstance()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetAttributeHandleRequest) (*pb.AttributeHandle, error) {
		return encode(pbAttr)(then(func(class peer.ObjectClassHandle) (peer.AttributeHandle, error) {
			return f.GetAttributeHandle(class, req.GetAttributeName())
		})(classHandle(req.GetObjectClass())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetAttributeNameRequest) (string, error) {
		class, err := classHandle(req.GetObjectClass())
		if err != nil {
			return "", err
		}
		return then(func(a peer.AttributeHandle) (string, error) { return f.GetAttributeName(class, a) })(attrHandle(req.GetAttribute()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetUpdateRateValueRequest) (float64, error) {
		return f.GetUpdateRateValue(req.GetUpdateRateDesignator())
	})
	ask(t, func(f *peer.Federate, req *pb.GetUpdateRateValueForAttributeRequest) (float64, error) {
		obj, a, err := objAttr(req.GetObjectInstance(), req.GetAttribute())
		if err != nil {
			return 0, err
		}
		return f.GetUpdateRateValueForAttribute(obj, a)
	})
	ask(t, func(f *peer.Federate, req *pb.GetInteractionClassHandleRequest) (*pb.InteractionClassHandle, error) {
		return encode(pbInteraction)(f.GetInteractionClassHandle(req.GetInteractionClassName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetInteractionClassNameRequest) (string, error) {
		return then(f.GetInteractionClassName)(interactionHandle(req.GetInteractionClass()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetParameterHandleRequest) (*pb.ParameterHandle, error) {
		return encode(pbParam)(then(func(ic peer.InteractionClassHandle) (peer.ParameterHandle, error) {
			return f.GetParameterHandle(ic, req.GetParameterName())
		})(interactionHandle(req.GetInteractionClass())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetParameterNameRequest) (string, error) {
		ic, err := interactionHandle(req.GetInteractionClass())
		if err != nil {
			return "", err
		}
		return then(func(p peer.ParameterHandle) (string, error) { return f.GetParameterName(ic, p) })(paramHandle(req.GetParameter()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetOrderTypeRequest) (pb.OrderType, error) {
		return encode(pbOrder)(f.GetOrderType(req.GetOrderTypeName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetOrderNameRequest) (string, error) {
		switch req.GetOrderType() {
		case pb.OrderType_RECEIVE, pb.OrderType_TIMESTAMP:
		default:
			return "", fmt.Errorf("%w: %v", peer.ErrInvalidOrderType, req.GetOrderType())
		}
		return f.GetOrderName(orderOf(req.GetOrderType()))
	})
}
