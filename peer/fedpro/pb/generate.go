package pb

// The .pb.go files of this package are generated from the .proto files
// beside them and committed, so that building and testing need no protoc.
// After changing a .proto file, regenerate them from this directory with
// `go generate .` (protoc 3.21.12 and protoc-gen-go v1.36.12 on PATH; see
// doc.go).

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative fedpro_datatypes.proto fedpro_rti_ambassador.proto fedpro_federate_ambassador.proto
