// Package dis carries IEEE 1278.1 Distributed Interactive Simulation
// (DIS) into an HLA federation that uses the RPR FOM 2.0, and back.
//
// # PDUs
//
// Decode reads one datagram as one PDU: *EntityState, *Fire,
// *Detonation or *Attribute, from protocol version 5 or 6 (IEEE
// 1278.1-1995 and 1278.1a-1998, the same layouts) or 7 (1278.1-2012).
// Encode, or the PDU's Append, writes it back; Header.Version says which
// header to write (0 means 7). Records keep what the two versions share:
// variable parameters (1278.1-1995's articulation parameters) are 16
// octets each, read as articulated or attached parts by
// VariableParameter.Articulated and Attached.
//
// A datagram that does not decode gives a *DecodeError whose Reason says
// why: short (fewer octets than the header, the length field or the
// fields call for), length (more octets than the length field, or than
// the fields call for), type (a PDU type this package does not decode),
// family (a protocol family that is not the type's), version (not 5, 6
// or 7), or exercise (DecodeExercise, another exercise). errors.Is
// matches it against ErrShort, ErrLength, ErrUnknownType,
// ErrUnknownFamily, ErrUnknownVersion and ErrOtherExercise. The decoder
// never panics and never allocates for more records than the datagram
// holds; FuzzDecode checks it.
//
// # Concurrency
//
// Decode, Encode and the PDU types' methods are pure functions of their
// arguments: any goroutine may call them.
package dis
