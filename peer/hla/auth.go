package hla

import "errors"

// The exceptions of HLA 4 (IEEE 1516.1-2025) that 1516e has not: a
// Connect whose credentials the RTI refuses.
var (
	// ErrUnauthorized: the credentials are missing, of a type the RTI
	// does not take, or wrong.
	ErrUnauthorized = errors.New("hla: unauthorized")
	// ErrInvalidCredentials: the credentials do not decode as their
	// type says (an HLAplainTextPassword that is no HLAunicodeString).
	ErrInvalidCredentials = errors.New("hla: invalid credentials")
)
