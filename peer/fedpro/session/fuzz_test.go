package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzParseHeader checks that any bytes either decode to a header that
// encodes back to the same 24 bytes, or are refused as a bad message;
// never a panic. Its seed corpus runs in every go test.
func FuzzParseHeader(f *testing.F) {
	f.Add(encodeMsg(0, 0, tNone, tNewSession, be32(1)))
	f.Add(encodeMsg(1, 0xfedcba9876543210, tNone, tNewSessionStatus, be32(0)))
	f.Add(encodeMsg(tNone, 42, 7, tResumeRequest, be32(7, 1)))
	f.Add(encodeMsg(0x7fffffff, 1, 0x7fffffff, tCallbackResponse, nil))
	f.Add(encodeMsg(1, 1, 1, 99, nil))
	f.Add([]byte{0, 0, 0, 5})
	f.Add(bytes.Repeat([]byte{0xff}, 24))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %v does not wrap ErrBadMessage", err)
			}
			return
		}
		if len(b) < HeaderSize {
			t.Fatalf("parsed %d bytes", len(b))
		}
		if h.Size < HeaderSize || h.Size != binary.BigEndian.Uint32(b) || !h.Type.known() {
			t.Fatalf("parsed %+v from %x", h, b[:HeaderSize])
		}
		if got := AppendHeader(nil, h); !bytes.Equal(got, b[:HeaderSize]) {
			t.Fatalf("re-encoded %x, want %x", got, b[:HeaderSize])
		}
	})
}

func TestSeqArithmetic(t *testing.T) {
	for _, tc := range []struct {
		a, b   uint32
		before bool
	}{
		{1, 2, true},
		{2, 1, false},
		{5, 5, false},
		{0x7fffffff, 0, true}, // wraps
		{0, 0x7fffffff, false},
		{0x7ffffff0, 3, true},
		{0, 1<<30 - 1, true},
		{0, 1 << 30, false},
	} {
		if got := seqBefore(tc.a, tc.b); got != tc.before {
			t.Errorf("seqBefore(%#x, %#x) = %v", tc.a, tc.b, got)
		}
	}
	if nextSeq(0x7fffffff) != 0 || prevSeq(0) != 0x7fffffff || nextSeq(1) != 2 {
		t.Error("nextSeq/prevSeq do not wrap over 31 bits")
	}
	if validSeq(tNone) || !validSeq(0) || !validSeq(0x7fffffff) {
		t.Error("validSeq")
	}
}
