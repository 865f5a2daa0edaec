package hla

import (
	"fmt"

	"github.com/meshrti/meshrti/fomxml"
)

// Handles. Class, attribute, interaction, parameter and dimension handles
// are the FDD's (see fomxml: hashes of names, the same in every process).
type (
	ObjectClassHandle      = fomxml.ObjectClassHandle
	AttributeHandle        = fomxml.AttributeHandle
	InteractionClassHandle = fomxml.InteractionClassHandle
	ParameterHandle        = fomxml.ParameterHandle
	DimensionHandle        = fomxml.DimensionHandle
)

// FederateHandle identifies a joined federate. It is decided once, through
// the federation's agreement register, when the federate joins, and is the
// same in every member's view.
type FederateHandle uint64

// ObjectInstanceHandle identifies an object instance: the federate that
// registered it and a serial number of that federate's.
type ObjectInstanceHandle struct {
	//lint:ignore U1000 msgpack reads it: the struct tag encodes the handle as an array
	_msgpack struct{} `msgpack:",as_array"`
	Federate FederateHandle
	Serial   uint64
}

func (h ObjectInstanceHandle) String() string { return fmt.Sprintf("%d.%d", h.Federate, h.Serial) }

// IsZero reports whether h is the zero handle, which no instance has.
func (h ObjectInstanceHandle) IsZero() bool { return h.Federate == 0 && h.Serial == 0 }

// AttributeValues maps attributes to their encoded values.
type AttributeValues map[AttributeHandle][]byte

// ParameterValues maps parameters to their encoded values.
type ParameterValues map[ParameterHandle][]byte

// OrderType is a message's delivery order.
type OrderType int

const (
	Receive OrderType = iota + 1
	TimeStamp
)

func (o OrderType) String() string {
	if s := enumName(o, orderNames[:], ""); s != "" {
		return s
	}
	return fmt.Sprintf("OrderType(%d)", int(o))
}

var orderNames = [...]string{Receive: "Receive", TimeStamp: "TimeStamp"}

// ResignAction is what resigning does with the federate's objects and
// attributes.
type ResignAction int

const (
	UnconditionallyDivestAttributes ResignAction = iota + 1
	DeleteObjects
	CancelPendingOwnershipAcquisitions
	DeleteObjectsThenDivest
	CancelThenDeleteThenDivest
	NoAction
)

// Valid reports whether a is one of the six actions.
func (a ResignAction) Valid() bool { return a >= UnconditionallyDivestAttributes && a <= NoAction }

// Deletes reports whether a deletes the objects the federate may delete.
func (a ResignAction) Deletes() bool {
	return a == DeleteObjects || a == DeleteObjectsThenDivest || a == CancelThenDeleteThenDivest
}
