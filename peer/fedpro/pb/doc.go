// Package pb holds the Protocol Buffers messages of the HLA 4 (IEEE
// 1516-2025) Federate Protocol ("FedPro"), protobuf package
// rti1516_2025.fedpro, and the Go code generated from them.
//
// A Federate Protocol client (the federate) and server (the RTI) exchange
// four kinds of payload:
//
//   - CallRequest: one RTI ambassador call (178 cases, from
//     connectRequest = 1 to getNonRegulatedGrantSwitchRequest = 178);
//   - CallResponse: its answer, the matching response (case number of
//     the call plus one) or exceptionData = 1 (ExceptionData: the
//     exception's name and details);
//   - CallbackRequest: one federate ambassador callback (62 cases, from
//     connectionLost = 1 to requestRetraction = 62);
//   - CallbackResponse: callbackSucceeded = 1 or callbackFailed = 2
//     (ExceptionData).
//
// The session layer around them (message header, sequence numbers, the
// session control messages) is not Protocol Buffers and is not here.
//
// # Where the schema comes from
//
// Message names, field names, field numbers, field types and oneof case
// numbers are interoperability facts fixed by the Federate Protocol schema
// of IEEE 1516.1-2025 ("Reprinted with permission from IEEE
// 1516.1(TM)-2025", the attribution under which IEEE licenses that schema).
// They were taken from the public schema files datatypes.proto,
// RTIambassador.proto and FederateAmbassador.proto in
// github.com/Pitch-Technologies/FedProClient (java/protobuf/resources/,
// commit cf62d927356ad9dae694faffe7ae5c89ba87319d; the files last changed
// in b983267946ce96e0e5a7bf76e6fa8199a7de6714), and checked against the
// descriptors compiled into MAK's public Python client,
// github.com/VTMAK/Python-Federate-Protocol (libsrc/FedProProtobuf/,
// commit 423ce97ab432b3421c401224d91659c26fdeec86): the two agree on every
// message, field, number, type, oneof and enum value, and so do these
// files. The file names, the order of declarations, the grouping and the
// comments are meshrti's own.
//
// The three files keep the standard's split: fedpro_datatypes.proto
// (handles, sets, maps, FOM modules, logical time, enums),
// fedpro_rti_ambassador.proto (CallRequest, CallResponse and their
// payloads) and fedpro_federate_ambassador.proto (CallbackRequest,
// CallbackResponse and their payloads).
//
// # Regenerating
//
// The generated files were made with protoc (libprotoc) 3.21.12 and
// protoc-gen-go v1.36.12, and use the google.golang.org/protobuf v1.36.12
// runtime:
//
//	apt-get install -y protobuf-compiler   # protoc 3.21.12 on Debian 12
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	cd peer/fedpro/pb && go generate .
//
// The //go:generate line is in generate.go.
package pb
