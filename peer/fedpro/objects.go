package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Declaration and object management (1516.1 §5, §6).

// classAttrs decodes a class and an attribute set.
func classAttrs(c *pb.ObjectClassHandle, as *pb.AttributeHandleSet) (peer.ObjectClassHandle, []peer.AttributeHandle, error) {
	return decodeBoth(c, classHandle, as, attrSet)
}

// retraction is the answer of a timestamped call: its retraction handle
// (none when it was sent receive order), or its error.
func retraction(h peer.MessageRetractionHandle, err error) (*pb.MessageRetractionReturn, error) {
	if err != nil {
		return nil, err
	}
	return retractionReturn(h), nil
}

func retractionReturn(h peer.MessageRetractionHandle) *pb.MessageRetractionReturn {
	if h == (peer.MessageRetractionHandle{}) {
		return &pb.MessageRetractionReturn{}
	}
	return &pb.MessageRetractionReturn{RetractionHandleIsValid: true, MessageRetractionHandle: pbRetraction(h)}
}

// objAttr decodes an instance and an attribute.
func objAttr(o *pb.ObjectInstanceHandle, a *pb.AttributeHandle) (peer.ObjectInstanceHandle, peer.AttributeHandle, error) {
	return decodeBoth(o, objHandle, a, attrHandle)
}

// objValues decodes an instance and attribute values.
func objValues(o *pb.ObjectInstanceHandle, m *pb.AttributeHandleValueMap) (peer.ObjectInstanceHandle, peer.AttributeValues, error) {
	return decodeBoth(o, objHandle, m, attrValues)
}

// interactionValues decodes an interaction class and parameter values.
func interactionValues(c *pb.InteractionClassHandle, m *pb.ParameterHandleValueMap) (peer.InteractionClassHandle, peer.ParameterValues, error) {
	return decodeBoth(c, interactionHandle, m, paramValues)
}

// withClass decodes a class and calls fn with it.
func withClass(f *peer.Federate, c *pb.ObjectClassHandle, fn func(*peer.Federate, peer.ObjectClassHandle) error) error {
	class, err := classHandle(c)
	if err != nil {
		return err
	}
	return fn(f, class)
}

// withInteraction decodes an interaction class and calls fn with it.
func withInteraction(f *peer.Federate, c *pb.InteractionClassHandle, fn func(*peer.Federate, peer.InteractionClassHandle) error) error {
	ic, err := interactionHandle(c)
	if err != nil {
		return err
	}
	return fn(f, ic)
}

// withClassAttrs decodes a class and an attribute set and calls fn with
// them.
func withClassAttrs(f *peer.Federate, c *pb.ObjectClassHandle, as *pb.AttributeHandleSet, fn func(*peer.Federate, peer.ObjectClassHandle, ...peer.AttributeHandle) error) error {
	class, attrs, err := classAttrs(c, as)
	if err != nil {
		return err
	}
	return fn(f, class, attrs...)
}

// withObj decodes an instance and calls fn with it.
func withObj(o *pb.ObjectInstanceHandle, fn func(peer.ObjectInstanceHandle) error) error {
	obj, err := objHandle(o)
	if err != nil {
		return err
	}
	return fn(obj)
}

// timed decodes a logical time and calls fn with it.
func timed[T any](f *peer.Federate, t *pb.LogicalTime, fn func(peer.LogicalTime) (T, error)) (T, error) {
	lt, err := logicalTime(f, t.GetData())
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(lt)
}

// objectCalls adds the declaration and object management calls (1516.1
// §5, §6) to t.
func objectCalls(t callTable) {
	// §5 Declaration management.
	act(t, func(f *peer.Federate, req *pb.PublishObjectClassAttributesRequest) error {
		return withClassAttrs(f, req.GetObjectClass(), req.GetAttributes(), (*peer.Federate).PublishObjectClassAttributes)
	})
	act(t, func(f *peer.Federate, req *pb.UnpublishObjectClassRequest) error {
		return withClass(f, req.GetObjectClass(), (*peer.Federate).UnpublishObjectClass)
	})
	act(t, func(f *peer.Federate, req *pb.UnpublishObjectClassAttributesRequest) error {
		return withClassAttrs(f, req.GetObjectClass(), req.GetAttributes(), (*peer.Federate).UnpublishObjectClassAttributes)
	})
	act(t, func(f *peer.Federate, req *pb.PublishInteractionClassRequest) error {
		return withInteraction(f, req.GetInteractionClass(), (*peer.Federate).PublishInteractionClass)
	})
	act(t, func(f *peer.Federate, req *pb.UnpublishInteractionClassRequest) error {
		return withInteraction(f, req.GetInteractionClass(), (*peer.Federate).UnpublishInteractionClass)
	})
	subscribe := func(f *peer.Federate, c *pb.ObjectClassHandle, as *pb.AttributeHandleSet, rate string, active bool) error {
		return withClassAttrs(f, c, as, func(f *peer.Federate, class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error {
			return f.SubscribeObjectClassAttributesWithRate(class, rate, active, attrs...)
		})
	}
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributes(), "", true)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesWithRateRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributes(), req.GetUpdateRateDesignator(), true)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesPassivelyRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributes(), "", false)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesPassivelyWithRateRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributes(), req.GetUpdateRateDesignator(), false)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeObjectClassRequest) error {
		return withClass(f, req.GetObjectClass(), (*peer.Federate).UnsubscribeObjectClass)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeObjectClassAttributesRequest) error {
		return withClassAttrs(f, req.GetObjectClass(), req.GetAttributes(), (*peer.Federate).UnsubscribeObjectClassAttributes)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeInteractionClassRequest) error {
		return withInteraction(f, req.GetInteractionClass(), (*peer.Federate).SubscribeInteractionClass)
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeInteractionClassPassivelyRequest) error {
		return withInteraction(f, req.GetInteractionClass(), (*peer.Federate).SubscribeInteractionClassPassively)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeInteractionClassRequest) error {
		return withInteraction(f, req.GetInteractionClass(), (*peer.Federate).UnsubscribeInteractionClass)
	})

	// §6 Object management.
	act(t, func(f *peer.Federate, req *pb.ReserveObjectInstanceNameRequest) error {
		return f.ReserveObjectInstanceName(req.GetObjectInstanceName())
	})
	act(t, func(f *peer.Federate, req *pb.ReleaseObjectInstanceNameRequest) error {
		return f.ReleaseObjectInstanceName(req.GetObjectInstanceName())
	})
	act(t, func(f *peer.Federate, req *pb.ReserveMultipleObjectInstanceNamesRequest) error {
		return f.ReserveMultipleObjectInstanceName(req.GetObjectInstanceNames()...)
	})
	act(t, func(f *peer.Federate, req *pb.ReleaseMultipleObjectInstanceNamesRequest) error {
		return f.ReleaseMultipleObjectInstanceName(req.GetObjectInstanceNames()...)
	})
	register := func(f *peer.Federate, c *pb.ObjectClassHandle, name string) (*pb.ObjectInstanceHandle, error) {
		class, err := classHandle(c)
		if err != nil {
			return nil, err
		}
		h, err := f.RegisterObjectInstance(class, name)
		return pbObj(h), err
	}
	ask(t, func(f *peer.Federate, req *pb.RegisterObjectInstanceRequest) (*pb.ObjectInstanceHandle, error) {
		return register(f, req.GetObjectClass(), "")
	})
	ask(t, func(f *peer.Federate, req *pb.RegisterObjectInstanceWithNameRequest) (*pb.ObjectInstanceHandle, error) {
		return register(f, req.GetObjectClass(), req.GetObjectInstanceName())
	})
	act(t, func(f *peer.Federate, req *pb.UpdateAttributeValuesRequest) error {
		obj, vs, err := objValues(req.GetObjectInstance(), req.GetAttributeValues())
		if err != nil {
			return err
		}
		return f.UpdateAttributeValues(obj, vs, req.GetUserSuppliedTag())
	})
	ask(t, func(f *peer.Federate, req *pb.UpdateAttributeValuesWithTimeRequest) (*pb.MessageRetractionReturn, error) {
		obj, vs, err := objValues(req.GetObjectInstance(), req.GetAttributeValues())
		if err != nil {
			return nil, err
		}
		return timed(f, req.GetTime(), func(t peer.LogicalTime) (*pb.MessageRetractionReturn, error) {
			return retraction(f.UpdateAttributeValuesWithTimeRetractable(obj, vs, req.GetUserSuppliedTag(), t))
		})
	})
	act(t, func(f *peer.Federate, req *pb.SendInteractionRequest) error {
		ic, vs, err := interactionValues(req.GetInteractionClass(), req.GetParameterValues())
		if err != nil {
			return err
		}
		return f.SendInteraction(ic, vs, req.GetUserSuppliedTag())
	})
	ask(t, func(f *peer.Federate, req *pb.SendInteractionWithTimeRequest) (*pb.MessageRetractionReturn, error) {
		ic, vs, err := interactionValues(req.GetInteractionClass(), req.GetParameterValues())
		if err != nil {
			return nil, err
		}
		return timed(f, req.GetTime(), func(t peer.LogicalTime) (*pb.MessageRetractionReturn, error) {
			return retraction(f.SendInteractionWithTimeRetractable(ic, vs, req.GetUserSuppliedTag(), t))
		})
	})
	act(t, func(f *peer.Federate, req *pb.DeleteObjectInstanceRequest) error {
		return withObj(req.GetObjectInstance(), func(obj peer.ObjectInstanceHandle) error {
			return f.DeleteObjectInstance(obj, req.GetUserSuppliedTag())
		})
	})
	ask(t, func(f *peer.Federate, req *pb.DeleteObjectInstanceWithTimeRequest) (*pb.MessageRetractionReturn, error) {
		obj, err := objHandle(req.GetObjectInstance())
		if err != nil {
			return nil, err
		}
		return timed(f, req.GetTime(), func(t peer.LogicalTime) (*pb.MessageRetractionReturn, error) {
			return retraction(f.DeleteObjectInstanceWithTimeRetractable(obj, req.GetUserSuppliedTag(), t))
		})
	})
	act(t, func(f *peer.Federate, req *pb.LocalDeleteObjectInstanceRequest) error {
		return withObj(req.GetObjectInstance(), f.LocalDeleteObjectInstance)
	})
	act(t, func(f *peer.Federate, req *pb.RequestInstanceAttributeValueUpdateRequest) error {
		obj, attrs, err := objAttrs(req.GetObjectInstance(), req.GetAttributes())
		if err != nil {
			return err
		}
		return f.RequestAttributeValueUpdate(obj, req.GetUserSuppliedTag(), attrs...)
	})
	act(t, func(f *peer.Federate, req *pb.RequestClassAttributeValueUpdateRequest) error {
		return withClassAttrs(f, req.GetObjectClass(), req.GetAttributes(), func(f *peer.Federate, class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error {
			return f.RequestAttributeValueUpdateForClass(class, req.GetUserSuppliedTag(), attrs...)
		})
	})
}
