// Package peer is the embeddable HLA 1516e federate API of meshrti.
//
// A program joins a federation execution with Join and receives the
// FederateAmbassador side of the standard as one ordered stream of events
// from Next. The package owns every goroutine, clock and socket of a
// federate node; the protocol cores (lbts, ddm, ownership) are pure state
// machines that it drives.
//
// The federation services land issue by issue; until then this package
// holds only its documentation.
package peer
