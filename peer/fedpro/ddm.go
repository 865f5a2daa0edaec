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
	out := make([]peer.RegionHandle, 0, len(s.GetRegionHandle()))
	for _, h := range s.GetRegionHandle() {
		r, err := regionHandle(h)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func dimSet(s *pb.DimensionHandleSet) ([]peer.DimensionHandle, error) {
	out := make([]peer.DimensionHandle, 0, len(s.GetDimensionHandle()))
	for _, h := range s.GetDimensionHandle() {
		d, err := dimHandle(h)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func pbDimSet(ds []peer.DimensionHandle) *pb.DimensionHandleSet {
	s := &pb.DimensionHandleSet{}
	for _, d := range ds {
		s.DimensionHandle = append(s.DimensionHandle, pbDim(d))
	}
	return s
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
	class, err := classHandle(c)
	if err != nil {
		return 0, nil, err
	}
	pairs, err := attrRegions(l)
	return class, pairs, err
}

// uint32Of is v for a 32-bit field of the protocol, or an
// RTIinternalError saying what does not fit.
func uint32Of(v uint64, what string) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %s %d does not fit the protocol's 32 bits", peer.ErrRTIinternalError, what, v)
	}
	return uint32(v), nil
}

func init() {
	// §9.2-§9.4 Regions.
	on(func(s *Session, req *pb.CreateRegionRequest) (*pb.CreateRegionResponse, error) {
		var r peer.RegionHandle
		err := s.with(func(f *peer.Federate) error {
			dims, err := dimSet(req.GetDimensions())
			if err != nil {
				return err
			}
			r, err = f.CreateRegion(dims...)
			return err
		})
		if err != nil {
			return &pb.CreateRegionResponse{}, err
		}
		return &pb.CreateRegionResponse{Result: pbRegion(r)}, nil
	})
	on(func(s *Session, req *pb.CommitRegionModificationsRequest) (*pb.CommitRegionModificationsResponse, error) {
		return &pb.CommitRegionModificationsResponse{}, s.with(func(f *peer.Federate) error {
			regions, err := regionSet(req.GetRegions())
			if err != nil {
				return err
			}
			return f.CommitRegionModifications(regions...)
		})
	})
	on(func(s *Session, req *pb.DeleteRegionRequest) (*pb.DeleteRegionResponse, error) {
		return &pb.DeleteRegionResponse{}, s.with(func(f *peer.Federate) error {
			r, err := regionHandle(req.GetRegion())
			if err != nil {
				return err
			}
			return f.DeleteRegion(r)
		})
	})

	// §9.5 Register Object Instance With Regions.
	register := func(s *Session, c *pb.ObjectClassHandle, l *pb.AttributeSetRegionSetPairList, name string) (*pb.ObjectInstanceHandle, error) {
		var h peer.ObjectInstanceHandle
		err := s.with(func(f *peer.Federate) error {
			class, pairs, err := classPairs(c, l)
			if err != nil {
				return err
			}
			h, err = f.RegisterObjectInstanceWithRegions(class, pairs, name)
			return err
		})
		if err != nil {
			return nil, err
		}
		return pbObj(h), nil
	}
	on(func(s *Session, req *pb.RegisterObjectInstanceWithRegionsRequest) (*pb.RegisterObjectInstanceWithRegionsResponse, error) {
		h, err := register(s, req.GetObjectClass(), req.GetAttributesAndRegions(), "")
		return &pb.RegisterObjectInstanceWithRegionsResponse{Result: h}, err
	})
	on(func(s *Session, req *pb.RegisterObjectInstanceWithNameAndRegionsRequest) (*pb.RegisterObjectInstanceWithNameAndRegionsResponse, error) {
		h, err := register(s, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetObjectInstanceName())
		return &pb.RegisterObjectInstanceWithNameAndRegionsResponse{Result: h}, err
	})

	// §9.6-§9.7 Associating regions with updates.
	associate := func(s *Session, o *pb.ObjectInstanceHandle, l *pb.AttributeSetRegionSetPairList, fn func(*peer.Federate, peer.ObjectInstanceHandle, ...peer.AttributeRegions) error) error {
		return s.with(func(f *peer.Federate) error {
			obj, err := objHandle(o)
			if err != nil {
				return err
			}
			pairs, err := attrRegions(l)
			if err != nil {
				return err
			}
			return fn(f, obj, pairs...)
		})
	}
	on(func(s *Session, req *pb.AssociateRegionsForUpdatesRequest) (*pb.AssociateRegionsForUpdatesResponse, error) {
		return &pb.AssociateRegionsForUpdatesResponse{}, associate(s, req.GetObjectInstance(), req.GetAttributesAndRegions(), (*peer.Federate).AssociateRegionsForUpdates)
	})
	on(func(s *Session, req *pb.UnassociateRegionsForUpdatesRequest) (*pb.UnassociateRegionsForUpdatesResponse, error) {
		return &pb.UnassociateRegionsForUpdatesResponse{}, associate(s, req.GetObjectInstance(), req.GetAttributesAndRegions(), (*peer.Federate).UnassociateRegionsForUpdates)
	})

	// §9.8-§9.9 Object class subscriptions with regions.
	subscribe := func(s *Session, c *pb.ObjectClassHandle, l *pb.AttributeSetRegionSetPairList, active bool, rate string) error {
		return s.with(func(f *peer.Federate) error {
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
		})
	}
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesWithRegionsRequest) (*pb.SubscribeObjectClassAttributesWithRegionsResponse, error) {
		return &pb.SubscribeObjectClassAttributesWithRegionsResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetActive(), "")
	})
	on(func(s *Session, req *pb.SubscribeObjectClassAttributesWithRegionsAndRateRequest) (*pb.SubscribeObjectClassAttributesWithRegionsAndRateResponse, error) {
		return &pb.SubscribeObjectClassAttributesWithRegionsAndRateResponse{}, subscribe(s, req.GetObjectClass(), req.GetAttributesAndRegions(), req.GetActive(), req.GetUpdateRateDesignator())
	})
	on(func(s *Session, req *pb.UnsubscribeObjectClassAttributesWithRegionsRequest) (*pb.UnsubscribeObjectClassAttributesWithRegionsResponse, error) {
		return &pb.UnsubscribeObjectClassAttributesWithRegionsResponse{}, s.with(func(f *peer.Federate) error {
			class, pairs, err := classPairs(req.GetObjectClass(), req.GetAttributesAndRegions())
			if err != nil {
				return err
			}
			return f.UnsubscribeObjectClassAttributesWithRegions(class, pairs...)
		})
	})

	// §9.10-§9.11 Interaction class subscriptions with regions.
	on(func(s *Session, req *pb.SubscribeInteractionClassWithRegionsRequest) (*pb.SubscribeInteractionClassWithRegionsResponse, error) {
		return &pb.SubscribeInteractionClassWithRegionsResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			regions, err := regionSet(req.GetRegions())
			if err != nil {
				return err
			}
			if !req.GetActive() {
				return f.SubscribeInteractionClassPassivelyWithRegions(ic, regions...)
			}
			return f.SubscribeInteractionClassWithRegions(ic, regions...)
		})
	})
	on(func(s *Session, req *pb.UnsubscribeInteractionClassWithRegionsRequest) (*pb.UnsubscribeInteractionClassWithRegionsResponse, error) {
		return &pb.UnsubscribeInteractionClassWithRegionsResponse{}, s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			regions, err := regionSet(req.GetRegions())
			if err != nil {
				return err
			}
			return f.UnsubscribeInteractionClassWithRegions(ic, regions...)
		})
	})

	// §9.12 Send Interaction With Regions.
	interaction := func(c *pb.InteractionClassHandle, vs *pb.ParameterHandleValueMap, rs *pb.RegionHandleSet) (peer.InteractionClassHandle, peer.ParameterValues, []peer.RegionHandle, error) {
		ic, err := interactionHandle(c)
		if err != nil {
			return 0, nil, nil, err
		}
		values, err := paramValues(vs)
		if err != nil {
			return 0, nil, nil, err
		}
		regions, err := regionSet(rs)
		return ic, values, regions, err
	}
	on(func(s *Session, req *pb.SendInteractionWithRegionsRequest) (*pb.SendInteractionWithRegionsResponse, error) {
		return &pb.SendInteractionWithRegionsResponse{}, s.with(func(f *peer.Federate) error {
			ic, values, regions, err := interaction(req.GetInteractionClass(), req.GetParameterValues(), req.GetRegions())
			if err != nil {
				return err
			}
			return f.SendInteractionWithRegions(ic, values, regions, req.GetUserSuppliedTag())
		})
	})
	on(func(s *Session, req *pb.SendInteractionWithRegionsAndTimeRequest) (*pb.SendInteractionWithRegionsAndTimeResponse, error) {
		var h peer.MessageRetractionHandle
		err := s.with(func(f *peer.Federate) error {
			ic, values, regions, err := interaction(req.GetInteractionClass(), req.GetParameterValues(), req.GetRegions())
			if err != nil {
				return err
			}
			t, err := logicalTime(f, req.GetTime().GetData())
			if err != nil {
				return err
			}
			h, err = f.SendInteractionWithRegionsAndTime(ic, values, regions, req.GetUserSuppliedTag(), t)
			return err
		})
		return &pb.SendInteractionWithRegionsAndTimeResponse{Result: retractionReturn(h)}, err
	})

	// §9.13 Request Attribute Value Update With Regions.
	on(func(s *Session, req *pb.RequestAttributeValueUpdateWithRegionsRequest) (*pb.RequestAttributeValueUpdateWithRegionsResponse, error) {
		return &pb.RequestAttributeValueUpdateWithRegionsResponse{}, s.with(func(f *peer.Federate) error {
			class, pairs, err := classPairs(req.GetObjectClass(), req.GetAttributesAndRegions())
			if err != nil {
				return err
			}
			return f.RequestAttributeValueUpdateWithRegions(class, pairs, req.GetUserSuppliedTag())
		})
	})

	// §10.23-§10.30 Dimensions and regions.
	on(func(s *Session, req *pb.GetAvailableDimensionsForObjectClassRequest) (*pb.GetAvailableDimensionsForObjectClassResponse, error) {
		var dims []peer.DimensionHandle
		err := s.with(func(f *peer.Federate) error {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return err
			}
			c, ok := f.FDD().ObjectClassByHandle(class)
			if !ok {
				return fmt.Errorf("%w: %d", peer.ErrInvalidObjectClassHandle, class)
			}
			// The class's dimensions: those of any of its attributes
			// (inherited ones included), sorted.
			for _, a := range c.AllAttributes() {
				ds, err := f.GetAvailableDimensionsForClassAttribute(class, a.Handle)
				if err != nil {
					return err
				}
				dims = append(dims, ds...)
			}
			slices.Sort(dims)
			dims = slices.Compact(dims)
			return nil
		})
		return &pb.GetAvailableDimensionsForObjectClassResponse{Result: pbDimSet(dims)}, err
	})
	on(func(s *Session, req *pb.GetAvailableDimensionsForInteractionClassRequest) (*pb.GetAvailableDimensionsForInteractionClassResponse, error) {
		var dims []peer.DimensionHandle
		err := s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			dims, err = f.GetAvailableDimensionsForInteractionClass(ic)
			return err
		})
		return &pb.GetAvailableDimensionsForInteractionClassResponse{Result: pbDimSet(dims)}, err
	})
	on(func(s *Session, req *pb.GetDimensionHandleRequest) (*pb.GetDimensionHandleResponse, error) {
		var d peer.DimensionHandle
		err := s.with(func(f *peer.Federate) (err error) {
			d, err = f.GetDimensionHandle(req.GetDimensionName())
			return err
		})
		if err != nil {
			return &pb.GetDimensionHandleResponse{}, err
		}
		return &pb.GetDimensionHandleResponse{Result: pbDim(d)}, nil
	})
	on(func(s *Session, req *pb.GetDimensionNameRequest) (*pb.GetDimensionNameResponse, error) {
		var name string
		err := s.with(func(f *peer.Federate) error {
			d, err := dimHandle(req.GetDimension())
			if err != nil {
				return err
			}
			name, err = f.GetDimensionName(d)
			return err
		})
		return &pb.GetDimensionNameResponse{Result: name}, err
	})
	on(func(s *Session, req *pb.GetDimensionUpperBoundRequest) (*pb.GetDimensionUpperBoundResponse, error) {
		var bound uint32
		err := s.with(func(f *peer.Federate) error {
			d, err := dimHandle(req.GetDimension())
			if err != nil {
				return err
			}
			b, err := f.GetDimensionUpperBound(d)
			if err != nil {
				return err
			}
			bound, err = uint32Of(b, "the dimension's upper bound")
			return err
		})
		return &pb.GetDimensionUpperBoundResponse{Result: bound}, err
	})
	on(func(s *Session, req *pb.GetDimensionHandleSetRequest) (*pb.GetDimensionHandleSetResponse, error) {
		var dims []peer.DimensionHandle
		err := s.with(func(f *peer.Federate) error {
			r, err := regionHandle(req.GetRegion())
			if err != nil {
				return err
			}
			dims, err = f.GetDimensionHandleSet(r)
			return err
		})
		return &pb.GetDimensionHandleSetResponse{Result: pbDimSet(dims)}, err
	})
	on(func(s *Session, req *pb.GetRangeBoundsRequest) (*pb.GetRangeBoundsResponse, error) {
		var out *pb.RangeBounds
		err := s.with(func(f *peer.Federate) error {
			r, err := regionHandle(req.GetRegion())
			if err != nil {
				return err
			}
			d, err := dimHandle(req.GetDimension())
			if err != nil {
				return err
			}
			b, err := f.GetRangeBounds(r, d)
			if err != nil {
				return err
			}
			lower, err := uint32Of(b.Lower, "the lower bound")
			if err != nil {
				return err
			}
			upper, err := uint32Of(b.Upper, "the upper bound")
			if err != nil {
				return err
			}
			out = &pb.RangeBounds{Lower: lower, Upper: upper}
			return nil
		})
		return &pb.GetRangeBoundsResponse{Result: out}, err
	})
	on(func(s *Session, req *pb.SetRangeBoundsRequest) (*pb.SetRangeBoundsResponse, error) {
		return &pb.SetRangeBoundsResponse{}, s.with(func(f *peer.Federate) error {
			r, err := regionHandle(req.GetRegion())
			if err != nil {
				return err
			}
			d, err := dimHandle(req.GetDimension())
			if err != nil {
				return err
			}
			b := req.GetRangeBounds()
			if b == nil {
				return fmt.Errorf("%w: no range bounds", peer.ErrInvalidRangeBound)
			}
			return f.SetRangeBounds(r, d, peer.RangeBounds{Lower: uint64(b.GetLower()), Upper: uint64(b.GetUpper())})
		})
	})
}
