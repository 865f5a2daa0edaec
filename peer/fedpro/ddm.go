package fedpro

import (
	"fmt"
	"math"
	"slices"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Data distribution management (1516.1 §9) and the dimension and region
// support services (§10.23-§10.30).
//
// Subscribe Object Class Attributes With Regions And Rate maps onto
// peer's passive subscription with a rate when it is passive; peer has no
// active subscription with regions and a rate, so an active one with a
// rate is refused (RTIinternalError) rather than made without the rate.
// Range bounds and dimension upper bounds are 32 bits in the protocol and
// 64 in meshrti: a value that does not fit is refused, not cut.

func regionSet(s *pb.RegionHandleSet) ([]peer.RegionHandle, error) {
	return decodeAll(s.GetRegionHandle(), regionHandle)
}

func dimSet(s *pb.DimensionHandleSet) ([]peer.DimensionHandle, error) {
	return decodeAll(s.GetDimensionHandle(), dimHandle)
}

func pbDimSet(ds []peer.DimensionHandle) *pb.DimensionHandleSet {
	return &pb.DimensionHandleSet{DimensionHandle: encodeAll(ds, pbDim)}
}

// attrRegions decodes an attribute-set/region-set pair list.
func attrRegions(l *pb.AttributeSetRegionSetPairList) ([]peer.AttributeRegions, error) {
	out := make([]peer.AttributeRegions, 0, len(l.GetAttributeSetRegionSetPair()))
	for _, p := range l.GetAttributeSetRegionSetPair() {
		attrs, err := attrSet(p.GetAttributeSet())
		if err != nil {
			return nil, err
		}
		regions, err := regionSet(p.GetRegionSet())
		if err != nil {
			return nil, err
		}
		out = append(out, peer.AttributeRegions{Attributes: attrs, Regions: regions})
	}
	return out, nil
}

// classPairs decodes a class and a pair list.
func classPairs(c *pb.ObjectClassHandle, l *pb.AttributeSetRegionSetPairList) (peer.ObjectClassHandle, []peer.AttributeRegions, error) {
	return decodeBoth(c, classHandle, l, attrRegions)
}

// uint32Of is v for a 32-bit field of the protocol, or an
// RTIinternalError saying what does not fit.
func uint32Of(v uint64, what string) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %s %d does not fit the protocol's 32 bits", peer.ErrRTIinternalError, what, v)
	}
	return uint32(v), nil
}

// fits32 is uint32Of(v, what) for the v a service returned, unless it
// failed: fits32(what)(service(x)).
func fits32(what string) func(uint64, error) (uint32, error) {
	return func(v uint64, err error) (uint32, error) {
		if err != nil {
			return 0, err
		}
		return uint32Of(v, what)
	}
}

// regionDim decodes a region and a dimension.
func regionDim(r *pb.RegionHandle, d *pb.DimensionHandle) (peer.RegionHandle, peer.DimensionHandle, error) {
	return decodeBoth(r, regionHandle, d, dimHandle)
}

// interactionRegions decodes an interaction class and a region set.
func interactionRegions(c *pb.InteractionClassHandle, rs *pb.RegionHandleSet) (peer.InteractionClassHandle, []peer.RegionHandle, error) {
	return decodeBoth(c, interactionHandle, rs, regionSet)
}

// ddmCalls adds the data distribution management calls (1516.1 §9) to t.
func ddmCalls(t callTable) {
	// §9.2-§9.4 Regions.
	ask(t, func(f *peer.Federate, req *pb.CreateRegionRequest) (*pb.RegionHandle, error) {
		dims, err := dimSet(req.GetDimensions())
		if err != nil {
			return nil, err
		}
		r, err := f.CreateRegion(dims...)
		if err != nil {
			return nil, err
		}
		return pbRegion(r), nil
	})
	act(t, func(f *peer.Federate, req *pb.CommitRegionModificationsRequest) error {
		regions, err := regionSet(req.GetRegions())
		if err != nil {
			return err
		}
		return f.CommitRegionModifications(regions...)
	})
	act(t, func(f *peer.Federate, req *pb.DeleteRegionRequest) error {
		return do(f.DeleteRegion)(regionHandle(req.GetRegion()))
	})

	// §9.5 Register Object Instance With Regions.
	register := func(f *peer.Federate, c *pb.ObjectClassHandle, l *pb.AttributeSetRegionSetPairList, name string) (*pb.ObjectInstanceHandle, error) {
		class, pairs, err := classPairs(c, l)
		if err != nil {
			return nil, err
		}
		h, err := f.RegisterObjectInstanceWithRegions(class, pairs, name)
		if err != nil {
			return nil, err
		}
		return pbObj(h), nil
	}
	ask(t, func(f *peer.Federate, req *pb.RegisterObjectInstanceWithRegionsRequest) (*pb.ObjectInstanceHandle, error) {
		return register(f, req.GetObjectClass(), req.GetAttributesAndRegions(), "")
	})
	ask(t, func(f *peer.Federate, req *pb.RegisterObjectInstanceWithNameAndRegionsRequest) (*pb.ObjectInstanceHandle, error) {
		return register(f, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetObjectInstanceName())
	})

	// §9.6-§9.7 Associating regions with updates.
	associate := func(o *pb.ObjectInstanceHandle, l *pb.AttributeSetRegionSetPairList, fn func(peer.ObjectInstanceHandle, ...peer.AttributeRegions) error) error {
		obj, err := objHandle(o)
		if err != nil {
			return err
		}
		pairs, err := attrRegions(l)
		if err != nil {
			return err
		}
		return fn(obj, pairs...)
	}
	act(t, func(f *peer.Federate, req *pb.AssociateRegionsForUpdatesRequest) error {
		return associate(req.GetObjectInstance(), req.GetAttributesAndRegions(), f.AssociateRegionsForUpdates)
	})
	act(t, func(f *peer.Federate, req *pb.UnassociateRegionsForUpdatesRequest) error {
		return associate(req.GetObjectInstance(), req.GetAttributesAndRegions(), f.UnassociateRegionsForUpdates)
	})

	// §9.8-§9.9 Object class subscriptions with regions.
	subscribe := func(f *peer.Federate, c *pb.ObjectClassHandle, l *pb.AttributeSetRegionSetPairList, active bool, rate string) error {
		class, pairs, err := classPairs(c, l)
		if err != nil {
			return err
		}
		switch {
		case !active:
			return f.SubscribeObjectClassAttributesWithRegionsPassively(class, rate, pairs...)
		case rate != "":
			return fmt.Errorf("%w: an active subscription with regions and update rate %q: %w (subscribe passively, or without a rate)", peer.ErrRTIinternalError, rate, errNotSupported)
		}
		return f.SubscribeObjectClassAttributesWithRegions(class, pairs...)
	}
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesWithRegionsRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetActive(), "")
	})
	act(t, func(f *peer.Federate, req *pb.SubscribeObjectClassAttributesWithRegionsAndRateRequest) error {
		return subscribe(f, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetActive(), req.GetUpdateRateDesignator())
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeObjectClassAttributesWithRegionsRequest) error {
		class, pairs, err := classPairs(req.GetObjectClass(), req.GetAttributesAndRegions())
		if err != nil {
			return err
		}
		return f.UnsubscribeObjectClassAttributesWithRegions(class, pairs...)
	})

	// §9.10-§9.11 Interaction class subscriptions with regions.
	act(t, func(f *peer.Federate, req *pb.SubscribeInteractionClassWithRegionsRequest) error {
		ic, regions, err := interactionRegions(req.GetInteractionClass(), req.GetRegions())
		if err != nil {
			return err
		}
		if !req.GetActive() {
			return f.SubscribeInteractionClassPassivelyWithRegions(ic, regions...)
		}
		return f.SubscribeInteractionClassWithRegions(ic, regions...)
	})
	act(t, func(f *peer.Federate, req *pb.UnsubscribeInteractionClassWithRegionsRequest) error {
		ic, regions, err := interactionRegions(req.GetInteractionClass(), req.GetRegions())
		if err != nil {
			return err
		}
		return f.UnsubscribeInteractionClassWithRegions(ic, regions...)
	})

	// §9.12 Send Interaction With Regions.
	interaction := func(c *pb.InteractionClassHandle, vs *pb.ParameterHandleValueMap, rs *pb.RegionHandleSet) (peer.InteractionClassHandle, peer.ParameterValues, []peer.RegionHandle, error) {
		ic, values, err := interactionValues(c, vs)
		if err != nil {
			return 0, nil, nil, err
		}
		regions, err := regionSet(rs)
		return ic, values, regions, err
	}
	act(t, func(f *peer.Federate, req *pb.SendInteractionWithRegionsRequest) error {
		ic, values, regions, err := interaction(req.GetInteractionClass(), req.GetParameterValues(), req.GetRegions())
		if err != nil {
			return err
		}
		return f.SendInteractionWithRegions(ic, values, regions, req.GetUserSuppliedTag())
	})
	ask(t, func(f *peer.Federate, req *pb.SendInteractionWithRegionsAndTimeRequest) (*pb.MessageRetractionReturn, error) {
		ic, values, regions, err := interaction(req.GetInteractionClass(), req.GetParameterValues(), req.GetRegions())
		if err != nil {
			return nil, err
		}
		return timed(f, req.GetTime(), func(t peer.LogicalTime) (*pb.MessageRetractionReturn, error) {
			return retraction(f.SendInteractionWithRegionsAndTime(ic, values, regions, req.GetUserSuppliedTag(), t))
		})
	})

	// §9.13 Request Attribute Value Update With Regions.
	act(t, func(f *peer.Federate, req *pb.RequestAttributeValueUpdateWithRegionsRequest) error {
		class, pairs, err := classPairs(req.GetObjectClass(), req.GetAttributesAndRegions())
		if err != nil {
			return err
		}
		return f.RequestAttributeValueUpdateWithRegions(class, pairs, req.GetUserSuppliedTag())
	})

	// §10.23-§10.30 Dimensions and regions.
	ask(t, func(f *peer.Federate, req *pb.GetAvailableDimensionsForObjectClassRequest) (*pb.DimensionHandleSet, error) {
		class, err := classHandle(req.GetObjectClass())
		if err != nil {
			return nil, err
		}
		c, ok := f.FDD().ObjectClassByHandle(class)
		if !ok {
			return nil, fmt.Errorf("%w: %d", peer.ErrInvalidObjectClassHandle, class)
		}
		// The class's dimensions: those of any of its attributes
		// (inherited ones included), sorted.
		var dims []peer.DimensionHandle
		for _, a := range c.AllAttributes() {
			ds, err := f.GetAvailableDimensionsForClassAttribute(class, a.Handle)
			if err != nil {
				return nil, err
			}
			dims = append(dims, ds...)
		}
		slices.Sort(dims)
		return pbDimSet(slices.Compact(dims)), nil
	})
	ask(t, func(f *peer.Federate, req *pb.GetAvailableDimensionsForInteractionClassRequest) (*pb.DimensionHandleSet, error) {
		return encode(pbDimSet)(then(f.GetAvailableDimensionsForInteractionClass)(interactionHandle(req.GetInteractionClass())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetDimensionHandleRequest) (*pb.DimensionHandle, error) {
		return encode(pbDim)(f.GetDimensionHandle(req.GetDimensionName()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetDimensionNameRequest) (string, error) {
		return then(f.GetDimensionName)(dimHandle(req.GetDimension()))
	})
	ask(t, func(f *peer.Federate, req *pb.GetDimensionUpperBoundRequest) (uint32, error) {
		return fits32("the dimension's upper bound")(then(f.GetDimensionUpperBound)(dimHandle(req.GetDimension())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetDimensionHandleSetRequest) (*pb.DimensionHandleSet, error) {
		return encode(pbDimSet)(then(f.GetDimensionHandleSet)(regionHandle(req.GetRegion())))
	})
	ask(t, func(f *peer.Federate, req *pb.GetRangeBoundsRequest) (*pb.RangeBounds, error) {
		r, d, err := regionDim(req.GetRegion(), req.GetDimension())
		if err != nil {
			return nil, err
		}
		b, err := f.GetRangeBounds(r, d)
		if err != nil {
			return nil, err
		}
		lower, err := uint32Of(b.Lower, "the lower bound")
		if err != nil {
			return nil, err
		}
		upper, err := uint32Of(b.Upper, "the upper bound")
		if err != nil {
			return nil, err
		}
		return &pb.RangeBounds{Lower: lower, Upper: upper}, nil
	})
	act(t, func(f *peer.Federate, req *pb.SetRangeBoundsRequest) error {
		r, d, err := regionDim(req.GetRegion(), req.GetDimension())
		if err != nil {
			return err
		}
		b := req.GetRangeBounds()
		if b == nil {
			return fmt.Errorf("%w: no range bounds", peer.ErrInvalidRangeBound)
		}
		return f.SetRangeBounds(r, d, peer.RangeBounds{Lower: uint64(b.GetLower()), Upper: uint64(b.GetUpper())})
	})
}
