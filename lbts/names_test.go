package lbts

import "testing"

// TestRequestKindNames: each kind prints as its HLA abbreviation, an
// unknown one by number.
func TestRequestKindNames(t *testing.T) {
	for k, want := range map[RequestKind]string{
		NoRequest: "none", TimeAdvanceRequest: "TAR", TimeAdvanceRequestAvailable: "TARA",
		NextMessageRequest: "NMR", NextMessageRequestAvailable: "NMRA", FlushQueueRequest: "FQR",
		FlushQueueRequest + 1: "RequestKind(6)", 255: "RequestKind(255)",
	} {
		if got := k.String(); got != want {
			t.Errorf("RequestKind %d: %q, want %q", uint8(k), got, want)
		}
	}
}
