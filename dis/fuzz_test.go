package dis

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds the decoder arbitrary datagrams: it never panics,
// every error is a *DecodeError with a reason, and what decodes encodes
// to a datagram of the same length that decodes and encodes to the same
// octets again (padding octets are written as zeros, so the first
// encoding may differ from the input there).
// The seeds, the hand-laid PDUs of pdu_test.go, run under plain go
// test; go test -fuzz FuzzDecode ./dis explores further.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{espduV6, espduV7, firePDU, detonationPDU, attributePDU} {
		f.Add(hx(f, s))
	}
	f.Add([]byte{7, 1, 1, 1, 0, 0, 0, 0, 0, 12, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if _, ok := ReasonOf(err); !ok {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		out, err := Encode(p)
		if err != nil {
			t.Fatalf("decoded PDU does not encode: %v", err)
		}
		if len(out) != len(b) {
			t.Fatalf("re-encoded %d octets from %d", len(out), len(b))
		}
		q, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded PDU does not decode: %v", err)
		}
		// Compared as octets: a NaN field is not equal to itself.
		again, err := Encode(q)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("round trip changed the PDU (%v):\n%+v\n%+v", err, p, q)
		}
	})
}
