// Package dis carries IEEE 1278.1 Distributed Interactive Simulation
// (DIS) into an HLA federation that uses the RPR FOM 2.0, and back, so
// that DIS simulators and HLA federates take part in one exercise.
//
// It has three layers, each usable on its own:
//
//   - a PDU codec (Decode, Encode): Entity State, Fire, Detonation and
//     Attribute PDUs of protocol versions 5, 6 and 7;
//   - a Mapper: the pure mapping between those PDUs and the attribute
//     and parameter values of the RPR FOM's classes (SISO-STD-001), each
//     value encoded with fomxml/codec by the FDD's data types;
//   - a Gateway: one federate (package peer) and one DIS socket, which
//     registers DIS entities as object instances and sends the other
//     federates' instances out as PDUs.
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
// # The mapping
//
// An Entity State PDU is an instance of the class its entity type names
// (Mapper.ClassFor: Aircraft, GroundVehicle, ..., Human, Munition, ...,
// BaseEntity as the fallback; ClassRule overrides), with EntityType,
// AlternateEntityType, EntityIdentifier, Spatial (the variant record the
// dead-reckoning algorithm selects), ForceIdentifier, Marking,
// ArticulatedParametersArray, and the appearance and capability fields
// the class has attributes for (DamageState, IsConcealed, HeadLightsOn,
// ...). Mapper.EntityValues gives the values (only the changed ones,
// given the previous PDU), Mapper.ApplyEntityValues takes reflected
// values back into a PDU. Fire and Detonation PDUs are WeaponFire and
// MunitionDetonation, their entity IDs turned into object names through
// Names. Attributes without an Entity State field travel in Attribute
// PDU records: by name (record types from 252200: name length, data
// length, name, value) or bound to a record type (MapperConfig.Records).
// A value that does not encode or decode by its FOM type is a
// *ValueError: it is dropped alone, the rest of its PDU or update goes.
//
// # The gateway
//
// A Gateway runs two goroutines: one reads the DIS socket (DIS to HLA:
// registers, updates, deletes the instances of DIS entities, sends the
// interactions), one reads the federate's events (HLA to DIS: every
// BaseEntity instance of another federate goes out as Entity State PDUs,
// WeaponFire and MunitionDetonation as Fire and Detonation). Each owns
// its direction's state; they share only the table of entity IDs and
// names, under a lock. An HLA update is sent at once when it moves the
// entity beyond the dead-reckoning thresholds of where its last PDU
// dead-reckons to (Config.PositionThreshold, OrientationThreshold, with
// the update conditions of peer/updatecond) or changes another field,
// and every Config.Heartbeat in any case. A DIS entity not heard for
// Config.Timeout, or deactivated, is deleted. The gateway's own PDUs,
// heard back, are echoes, not entities, and instances it registered are
// never sent back out.
//
//	fed, err := peer.Join(ctx, peer.Config{
//		Federation: "exercise", FOMFiles: rprModules, Create: true,
//		FOMModules: []*fomxml.Document{dis.StatusModule()}, // optional: counters in the federation
//	})
//	if err != nil {
//		return err
//	}
//	defer fed.Close()
//	reg := prometheus.NewRegistry() // served at /metrics with promhttp
//	g, err := dis.New(dis.Config{
//		Federate: fed, DIS: "239.1.2.3:3000", Exercise: 1, Site: 10, Application: 1,
//		Registerer: reg,
//	})
//	if err != nil {
//		return err
//	}
//	defer g.Close() // waits for its goroutines, deactivates what it sent
//	<-ctx.Done()
//
// Config's zero values are the defaults: a 12 s timeout (2.4
// heartbeats), a 5 s heartbeat, thresholds of 1 m and 3 degrees,
// version 7 sent, multicast on lo with TTL 0. Stats and the Prometheus
// metrics (Config.Registerer) count PDUs in and out by type, entities
// each way, datagrams dropped by reason, and values dropped.
//
// # Concurrency
//
// Decode, Encode and the PDU types' methods are pure functions of their
// arguments. A Mapper is immutable and safe for concurrent use. A
// Gateway's methods are safe for concurrent use; Close blocks until its
// goroutines have ended.
package dis
