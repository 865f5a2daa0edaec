// Package gossip is meshrti's control plane: one memberlist cluster per
// federation execution carrying membership, failure detection, the
// replicated per-federate declarations, and the quorum register used for
// everything that must be unique federation-wide.
//
// The cluster code lands with the end-to-end federation; until then this
// package holds only its documentation.
package gossip
