package fedpro

import (
	"encoding/binary"
	"fmt"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Transportation types (1516.1 §6.23-§6.29, §10.21-§10.22). They travel
// as handles (pbTransport): HLAreliable is 1, HLAbestEffort 2, in 4
// bytes (8 are accepted too); any other handle is HLA 4's
// InvalidTransportationTypeHandle. Change Default
// Attribute Transportation Type is not served: meshrti has no such
// service.

func transportHandle(h *pb.TransportationTypeHandle) (peer.TransportationType, error) {
	var v uint64
	var err error
	if b := h.GetData(); len(b) == 4 {
		v = uint64(binary.BigEndian.Uint32(b)) // the form the clients make
	} else {
		v, err = decodeHandle[uint64](b, peer.ErrInvalidTransportationType)
	}
	if err == nil && v != uint64(peer.HLAreliable) && v != uint64(peer.HLAbestEffort) {
		err = fmt.Errorf("%w: %d", peer.ErrInvalidTransportationType, v)
	}
	if err != nil {
		return 0, err // reported as HLA 4's InvalidTransportationTypeHandle
	}
	return peer.TransportationType(v), nil
}

func init() {
	on(func(s *Session, req *pb.RequestAttributeTransportationTypeChangeRequest) (*pb.RequestAttributeTransportationTypeChangeResponse, error) {
		return &pb.RequestAttributeTransportationTypeChangeResponse{}, s.with(func(f *peer.Federate) error {
			obj, attrs, err := objAttrs(req.GetObjectInstance(), req.GetAttributes())
			if err != nil {
				return err
			}
			t, err := transportHandle(req.GetTransportationType())
			if err != nil {
				return err
			}
			return f.RequestAttributeTransportationTypeChange(obj, t, attrs...)
		})
	})
	on(func(s *Session, req *pb.QueryAttributeTransportationTypeRequest) (*pb.QueryAttributeTransportationTypeResponse, error) {
		return &pb.QueryAttributeTransportationTypeResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			a, err := attrHandle(req.GetAttribute())
			if err != nil {
				return err
			}
			return f.QueryAttributeTransportationType(obj, a)
		})
	})
	on(func(s *Session, req *pb.RequestInteractionTransportationTypeChangeRequest) (*pb.RequestInteractionTransportationTypeChangeResponse, error) {
		return &pb.RequestInteractionTransportationTypeChangeResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			t, err := transportHandle(req.GetTransportationType())
			if err != nil {
				return err
			}
			return f.RequestInteractionTransportationTypeChange(ic, t)
		})
	})
	on(func(s *Session, req *pb.QueryInteractionTransportationTypeRequest) (*pb.QueryInteractionTransportationTypeResponse, error) {
		return &pb.QueryInteractionTransportationTypeResponse{}, s.with(func(f *peer.Federate) error {
			fed, err := fedHandle(req.GetFederate())
			if err != nil {
				return err
			}
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.QueryInteractionTransportationType(fed, ic)
		})
	})
	on(func(s *Session, req *pb.GetTransportationTypeHandleRequest) (*pb.GetTransportationTypeHandleResponse, error) {
		var t peer.TransportationType
		err := s.with(func(f *peer.Federate) (err error) {
			t, err = f.GetTransportationType(req.GetTransportationTypeName())
			return err
		})
		if err != nil {
			return &pb.GetTransportationTypeHandleResponse{}, err
		}
		return &pb.GetTransportationTypeHandleResponse{Result: pbTransport(t)}, nil
	})
	on(func(s *Session, req *pb.GetTransportationTypeNameRequest) (*pb.GetTransportationTypeNameResponse, error) {
		var name string
		err := s.with(func(f *peer.Federate) error {
			t, err := transportHandle(req.GetTransportationType())
			if err != nil {
				return err
			}
			name, err = f.GetTransportationName(t)
			return err
		})
		return &pb.GetTransportationTypeNameResponse{Result: name}, err
	})
}
