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

// transportCalls adds the calls that change and query transportation
// types to t.
func transportCalls(t callTable) {
	act(t, func(f *peer.Federate, req *pb.RequestAttributeTransportationTypeChangeRequest) error {
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
	act(t, func(f *peer.Federate, req *pb.QueryAttributeTransportationTypeRequest) error {
		obj, a, err := objAttr(req.GetObjectInstance(), req.GetAttribute())
		if err != nil {
			return err
		}
		return f.QueryAttributeTransportationType(obj, a)
	})
	act(t, func(f *peer.Federate, req *pb.RequestInteractionTransportationTypeChangeRequest) error {
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
	act(t, func(f *peer.Federate, req *pb.QueryInteractionTransportationTypeRequest) error {
		fed, err := fedHandle(req.GetFederate())
		if err != nil {
			return err
		}
		return withInteraction(f, req.GetInteractionClass(), func(f *peer.Federate, ic peer.InteractionClassHandle) error {
			return f.QueryInteractionTransportationType(fed, ic)
		})
	})
	ask(t, func(f *peer.Federate, req *pb.GetTransportationTypeHandleRequest) (*pb.TransportationTypeHandle, error) {
		return encode(pbTransport)(f.GetTransportationType(req.GetTransportationTypeName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetTransportationTypeNameRequest) (string, error) {
		return then(f.GetTransportationName)(transportHandle(req.GetTransportationType()))
	})
}
