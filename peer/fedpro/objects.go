package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Declaration and object management (1516.1 §5, §6).

// classAttrs decodes a class and an attribute set.
func classAttrs(c *pb.ObjectClassHandle, as *pb.AttributeHandleSet) (peer.ObjectClassHandle, []peer.AttributeHandle, error) {
	class, err := classHandle(c)
	if err != nil {
		return 0, nil, err
	}
	attrs, err := attrSet(as)
	return class, attrs, err
}

func retractionReturn(h peer.MessageRetractionHandle) *pb.MessageRetractionReturn {
	if h == (peer.MessageRetractionHandle{}) {
		return &pb.MessageRetractionReturn{}
	}
	return &pb.MessageRetractionReturn{RetractionHandleIsValid: true, MessageRetractionHandle: pbRetraction(h)}
}

func init() {
	// §5 Declaration management.
	on(func(s *Session, req *pb.PublishObjectClassAttributesRequest) (*pb.PublishObjectClassAttributesResponse, error) {
		return &pb.PublishObjectClassAttributesResponse{}, s.with(func(f *peer.Federate) error {
			class, attrs, err := classAttrs(req.GetObjectClass(), req.GetAttributes())
			if err != nil {
				return err
			}
			return f.PublishObjectClassAttributes(class, attrs...)
		})
	})
	on(func(s *Session, req *pb.UnpublishObjectClassRequest) (*pb.UnpublishObjectClassResponse, error) {
		return &pb.UnpublishObjectClassResponse{}, s.with(func(f *peer.Federate) error {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return err
			}
			return f.UnpublishObjectClass(class)
		})
	})
	on(func(s *Session, req *pb.UnpublishObjectClassAttributesRequest) (*pb.UnpublishObjectClassAttributesResponse, error) {
		return &pb.UnpublishObjectClassAttributesResponse{}, s.with(func(f *peer.Federate) error {
			class, attrs, err := classAttrs(req.GetObjectClass(), req.GetAttributes())
			if err != nil {
				return err
			}
			return f.UnpublishObjectClassAttributes(class, attrs...)
		})
	})
	on(func(s *Session, req *pb.PublishInteractionClassRequest) (*pb.PublishInteractionClassResponse, error) {
		return &pb.PublishInteractionClassResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.PublishInteractionClass(ic)
		})
	})
	on(func(s *Session, req *pb.UnpublishInteractionClassRequest) (*pb.UnpublishInteractionClassResponse, error) {
		return &pb.UnpublishInteractionClassResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.UnpublishInteractionClass(ic)
		})
	})
	subscribe := func(s *Session, c *pb.ObjectClassHandle, as *pb.AttributeHandleSet, rate string, active bool) error {
		return s.with(func(f *peer.Federate) error {
			class, attrs, err := classAttrs(c, as)
			if err != nil {
				return err
			}
			return f.SubscribeObjectClassAttributesWithRate(class, rate, active, attrs...)
		})
	}
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesRequest) (*pb.SubscribeObjectClassAttributesResponse, error) {
		return &pb.SubscribeObjectClassAttributesResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributes(), "", true)
	})
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesWithRateRequest) (*pb.SubscribeObjectClassAttributesWithRateResponse, error) {
		return &pb.SubscribeObjectClassAttributesWithRateResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributes(), req.GetUpdateRateDesignator(), true)
	})
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesPassivelyRequest) (*pb.SubscribeObjectClassAttributesPassivelyResponse, error) {
		return &pb.SubscribeObjectClassAttributesPassivelyResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributes(), "", false)
	})
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesPassivelyWithRateRequest) (*pb.SubscribeObjectClassAttributesPassivelyWithRateResponse, error) {
		return &pb.SubscribeObjectClassAttributesPassivelyWithRateResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributes(), req.GetUpdateRateDesignator(), false)
	})
	on(func(s *Session, req *pb.UnsubscribeObjectClassRequest) (*pb.UnsubscribeObjectClassResponse, error) {
		return &pb.UnsubscribeObjectClassResponse{}, s.with(func(f *peer.Federate) error {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return err
			}
			return f.UnsubscribeObjectClass(class)
		})
	})
	on(func(s *Session, req *pb.UnsubscribeObjectClassAttributesRequest) (*pb.UnsubscribeObjectClassAttributesResponse, error) {
		return &pb.UnsubscribeObjectClassAttributesResponse{}, s.with(func(f *peer.Federate) error {
			class, attrs, err := classAttrs(req.GetObjectClass(), req.GetAttributes())
			if err != nil {
				return err
			}
			return f.UnsubscribeObjectClassAttributes(class, attrs...)
		})
	})
	on(func(s *Session, req *pb.SubscribeInteractionClassRequest) (*pb.SubscribeInteractionClassResponse, error) {
		return &pb.SubscribeInteractionClassResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.SubscribeInteractionClass(ic)
		})
	})
	on(func(s *Session, req *pb.SubscribeInteractionClassPassivelyRequest) (*pb.SubscribeInteractionClassPassivelyResponse, error) {
		return &pb.SubscribeInteractionClassPassivelyResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.SubscribeInteractionClassPassively(ic)
		})
	})
	on(func(s *Session, req *pb.UnsubscribeInteractionClassRequest) (*pb.UnsubscribeInteractionClassResponse, error) {
		return &pb.UnsubscribeInteractionClassResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			return f.UnsubscribeInteractionClass(ic)
		})
	})

	// §6 Object management.
	on(func(s *Session, req *pb.ReserveObjectInstanceNameRequest) (*pb.ReserveObjectInstanceNameResponse, error) {
		return &pb.ReserveObjectInstanceNameResponse{}, s.with(func(f *peer.Federate) error {
			return f.ReserveObjectInstanceName(req.GetObjectInstanceName())
		})
	})
	on(func(s *Session, req *pb.ReleaseObjectInstanceNameRequest) (*pb.ReleaseObjectInstanceNameResponse, error) {
		return &pb.ReleaseObjectInstanceNameResponse{}, s.with(func(f *peer.Federate) error {
			return f.ReleaseObjectInstanceName(req.GetObjectInstanceName())
		})
	})
	on(func(s *Session, req *pb.ReserveMultipleObjectInstanceNamesRequest) (*pb.ReserveMultipleObjectInstanceNamesResponse, error) {
		return &pb.ReserveMultipleObjectInstanceNamesResponse{}, s.with(func(f *peer.Federate) error {
			return f.ReserveMultipleObjectInstanceName(req.GetObjectInstanceNames()...)
		})
	})
	on(func(s *Session, req *pb.ReleaseMultipleObjectInstanceNamesRequest) (*pb.ReleaseMultipleObjectInstanceNamesResponse, error) {
		return &pb.ReleaseMultipleObjectInstanceNamesResponse{}, s.with(func(f *peer.Federate) error {
			return f.ReleaseMultipleObjectInstanceName(req.GetObjectInstanceNames()...)
		})
	})
	register := func(s *Session, c *pb.ObjectClassHandle, name string) (*pb.ObjectInstanceHandle, error) {
		var h peer.ObjectInstanceHandle
		err := s.with(func(f *peer.Federate) error {
			class, err := classHandle(c)
			if err != nil {
				return err
			}
			h, err = f.RegisterObjectInstance(class, name)
			return err
		})
		return pbObj(h), err
	}
	on(func(s *Session, req *pb.RegisterObjectInstanceRequest) (*pb.RegisterObjectInstanceResponse, error) {
		h, err := register(s, req.GetObjectClass(), "")
		return &pb.RegisterObjectInstanceResponse{Result: h}, err
	})
	on(func(s *Session, req *pb.RegisterObjectInstanceWithNameRequest) (*pb.RegisterObjectInstanceWithNameResponse, error) {
		h, err := register(s, req.GetObjectClass(), req.GetObjectInstanceName())
		return &pb.RegisterObjectInstanceWithNameResponse{Result: h}, err
	})
	on(func(s *Session, req *pb.UpdateAttributeValuesRequest) (*pb.UpdateAttributeValuesResponse, error) {
		return &pb.UpdateAttributeValuesResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			vs, err := attrValues(req.GetAttributeValues())
			if err != nil {
				return err
			}
			return f.UpdateAttributeValues(obj, vs, req.GetUserSuppliedTag())
		})
	})
	on(func(s *Session, req *pb.UpdateAttributeValuesWithTimeRequest) (*pb.UpdateAttributeValuesWithTimeResponse, error) {
		var h peer.MessageRetractionHandle
		err := s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			vs, err := attrValues(req.GetAttributeValues())
			if err != nil {
				return err
			}
			t, err := logicalTime(f, req.GetTime().GetData())
			if err != nil {
				return err
			}
			h, err = f.UpdateAttributeValuesWithTimeRetractable(obj, vs, req.GetUserSuppliedTag(), t)
			return err
		})
		return &pb.UpdateAttributeValuesWithTimeResponse{Result: retractionReturn(h)}, err
	})
	on(func(s *Session, req *pb.SendInteractionRequest) (*pb.SendInteractionResponse, error) {
		return &pb.SendInteractionResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			vs, err := paramValues(req.GetParameterValues())
			if err != nil {
				return err
			}
			return f.SendInteraction(ic, vs, req.GetUserSuppliedTag())
		})
	})
	on(func(s *Session, req *pb.SendInteractionWithTimeRequest) (*pb.SendInteractionWithTimeResponse, error) {
		var h peer.MessageRetractionHandle
		err := s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			vs, err := paramValues(req.GetParameterValues())
			if err != nil {
				return err
			}
			t, err := logicalTime(f, req.GetTime().GetData())
			if err != nil {
				return err
			}
			h, err = f.SendInteractionWithTimeRetractable(ic, vs, req.GetUserSuppliedTag(), t)
			return err
		})
		return &pb.SendInteractionWithTimeResponse{Result: retractionReturn(h)}, err
	})
	on(func(s *Session, req *pb.DeleteObjectInstanceRequest) (*pb.DeleteObjectInstanceResponse, error) {
		return &pb.DeleteObjectInstanceResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			return f.DeleteObjectInstance(obj, req.GetUserSuppliedTag())
		})
	})
	on(func(s *Session, req *pb.DeleteObjectInstanceWithTimeRequest) (*pb.DeleteObjectInstanceWithTimeResponse, error) {
		var h peer.MessageRetractionHandle
		err := s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			t, err := logicalTime(f, req.GetTime().GetData())
			if err != nil {
				return err
			}
			h, err = f.DeleteObjectInstanceWithTimeRetractable(obj, req.GetUserSuppliedTag(), t)
			return err
		})
		return &pb.DeleteObjectInstanceWithTimeResponse{Result: retractionReturn(h)}, err
	})
	on(func(s *Session, req *pb.LocalDeleteObjectInstanceRequest) (*pb.LocalDeleteObjectInstanceResponse, error) {
		return &pb.LocalDeleteObjectInstanceResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			return f.LocalDeleteObjectInstance(obj)
		})
	})
	on(func(s *Session, req *pb.RequestInstanceAttributeValueUpdateRequest) (*pb.RequestInstanceAttributeValueUpdateResponse, error) {
		return &pb.RequestInstanceAttributeValueUpdateResponse{}, s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			attrs, err := attrSet(req.GetAttributes())
			if err != nil {
				return err
			}
			return f.RequestAttributeValueUpdate(obj, req.GetUserSuppliedTag(), attrs...)
		})
	})
	on(func(s *Session, req *pb.RequestClassAttributeValueUpdateRequest) (*pb.RequestClassAttributeValueUpdateResponse, error) {
		return &pb.RequestClassAttributeValueUpdateResponse{}, s.with(func(f *peer.Federate) error {
			class, attrs, err := classAttrs(req.GetObjectClass(), req.GetAttributes())
			if err != nil {
				return err
			}
			return f.RequestAttributeValueUpdateForClass(class, req.GetUserSuppliedTag(), attrs...)
		})
	})
}
