package demo

import _ "embed" // the FOM modules

// FOM is the demo FOM module (demo.xml): Aircraft with a Position and a
// Blob, Ping and Pong interactions. The built-in federates of
// `federate-node node`, the benchmarks and the radar demo use it.
//
//go:embed demo.xml
var FOM []byte

// DDMFOM is the FOM module of the regions demo (demo_ddm.xml).
//
//go:embed demo_ddm.xml
var DDMFOM []byte

// MultirateFOM is the FOM module of the multirate demo
// (demo_multirate.xml).
//
//go:embed demo_multirate.xml
var MultirateFOM []byte
