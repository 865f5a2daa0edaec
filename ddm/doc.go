// Package ddm implements HLA Data Distribution Management: normalized
// dimensions, regions as sets of range sets, and the mapping of region
// cells to multicast groups for sender-side filtering. It is a pure state
// machine with no I/O.
//
// The region model lands with DDM; until then this package holds only its
// documentation.
package ddm
