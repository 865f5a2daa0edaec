package core

import "github.com/meshrti/meshrti/peer/hla"

// The vocabulary of package hla under short names, for this package's
// code and tests.
type (
	FederateHandle          = hla.FederateHandle
	ObjectInstanceHandle    = hla.ObjectInstanceHandle
	ObjectClassHandle       = hla.ObjectClassHandle
	AttributeHandle         = hla.AttributeHandle
	InteractionClassHandle  = hla.InteractionClassHandle
	ParameterHandle         = hla.ParameterHandle
	AttributeValues         = hla.AttributeValues
	ParameterValues         = hla.ParameterValues
	OrderType               = hla.OrderType
	ResignAction            = hla.ResignAction
	LogicalTime             = hla.LogicalTime
	MessageRetractionHandle = hla.MessageRetractionHandle
	RegionHandle            = hla.RegionHandle
	DimensionHandle         = hla.DimensionHandle
	RangeBounds             = hla.RangeBounds
	AttributeRegions        = hla.AttributeRegions
	Event                   = hla.Event
)

const (
	Receive   = hla.Receive
	TimeStamp = hla.TimeStamp
)
