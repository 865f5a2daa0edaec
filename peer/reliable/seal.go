package reliable

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Sealing frames.
//
// Without a key, every frame ends with a CRC-32C of the bytes before it,
// so that a corrupted datagram is dropped (ErrChecksum), never delivered.
//
// With a key, every frame is sealed with AES-256-GCM: the body is
// encrypted, and the header, key id and frame counter are authenticated
// with it. The AES key is derived per sender run with HKDF-SHA256 from
// the federation key, the sender's NodeID and its incarnation, so each
// (sender, incarnation) has a key of its own and the 96-bit nonce can be
// the frame counter alone: a counter never repeats within one run, and a
// run never repeats its incarnation. Receivers derive the same keys.
//
// Keys have ids. An endpoint seals with its current key and opens frames
// sealed with any key it accepts, so a federation rotates its key without
// losing frames: first every node accepts the new key, then every node
// sends with it, then every node retires the old one (Endpoint.SetKeys).
// Retransmissions are sealed anew with the key current at the time.

// Key is one federation key and the id frames sealed with it carry.
type Key struct {
	ID     uint8
	Secret []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// nonceLen is the GCM nonce length: 4 zero bytes, then the counter.
const nonceLen = 12

// aadLen is the additional data: the header, then the key id and counter.
const aadLen = HeaderLen + 1 + counterLen

// deriveAEAD returns the AES-GCM of sender run (id, inc) under secret.
func deriveAEAD(secret []byte, id NodeID, inc uint64) (cipher.AEAD, error) {
	var info [8 + 8]byte
	binary.BigEndian.PutUint64(info[:], uint64(id))
	binary.BigEndian.PutUint64(info[8:], inc)
	k, err := hkdf.Key(sha256.New, secret, []byte("meshrti reliable v2"), string(info[:]), 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// checkKeys validates a key list for Config.Keys or SetKeys.
func checkKeys(keys []Key) error {
	seen := map[uint8]bool{}
	for _, k := range keys {
		if len(k.Secret) < MinKeyLen {
			return fmt.Errorf("reliable: key %d of %d bytes, want at least %d", k.ID, len(k.Secret), MinKeyLen)
		}
		if seen[k.ID] {
			return fmt.Errorf("reliable: key id %d given twice", k.ID)
		}
		seen[k.ID] = true
	}
	return nil
}

// sealer seals outgoing frames and opens incoming ones for an Endpoint.
type sealer struct {
	keys []Key // nil: unkeyed; keys[0] seals
	// own are this run's AEADs, by key id.
	own map[uint8]cipher.AEAD
	// counter is the last frame counter used.
	counter uint64
	nonce   [nonceLen]byte
	aad     [aadLen]byte
}

func (s *sealer) keyed() bool { return s.keys != nil }

// trailerLen is what sealing adds to a frame.
func (s *sealer) trailerLen() int {
	if s.keyed() {
		return TrailerLen
	}
	return crcLen
}

// setKeys installs keys for sender run (self, inc).
func (s *sealer) setKeys(keys []Key, self NodeID, inc uint64) error {
	if err := checkKeys(keys); err != nil {
		return err
	}
	own := make(map[uint8]cipher.AEAD, len(keys))
	for _, k := range keys {
		a, err := deriveAEAD(k.Secret, self, inc)
		if err != nil {
			return fmt.Errorf("reliable: key %d: %w", k.ID, err)
		}
		own[k.ID] = a
	}
	s.keys, s.own = keys, own
	return nil
}

// seal finishes frame f, whose last trailerLen bytes are room for the
// trailer: it writes the CRC, or encrypts the body and writes the tag,
// key id and counter.
func (s *sealer) seal(f []byte) {
	n := len(f)
	if !s.keyed() {
		binary.BigEndian.PutUint32(f[n-crcLen:], crc32.Checksum(f[:n-crcLen], castagnoli))
		return
	}
	s.counter++
	id := s.keys[0].ID
	body := f[HeaderLen : n-TrailerLen]
	tail := f[n-1-counterLen:]
	tail[0] = id
	binary.BigEndian.PutUint64(tail[1:], s.counter)
	binary.BigEndian.PutUint64(s.nonce[4:], s.counter)
	copy(s.aad[:], f[:HeaderLen])
	copy(s.aad[HeaderLen:], tail)
	s.own[id].Seal(body[:0], s.nonce[:], body, s.aad[:])
}

// open checks frame f and returns its body (decrypted in place when
// keyed) and, when keyed, its frame counter. p is the sending peer (nil
// unless keyed; its cached AEADs are used and filled in).
func (s *sealer) open(f []byte, auth bool, p *peer) (body []byte, counter uint64, err error) {
	n := len(f)
	if !s.keyed() {
		if auth {
			return nil, 0, fmt.Errorf("%w: authenticated frame but no key configured", ErrAuth)
		}
		if n < HeaderLen+crcLen {
			return nil, 0, fmt.Errorf("%w: no checksum", ErrMalformed)
		}
		if binary.BigEndian.Uint32(f[n-crcLen:]) != crc32.Checksum(f[:n-crcLen], castagnoli) {
			return nil, 0, ErrChecksum
		}
		return f[HeaderLen : n-crcLen], 0, nil
	}
	if !auth || n < HeaderLen+TrailerLen {
		return nil, 0, fmt.Errorf("%w: not authenticated", ErrAuth)
	}
	tail := f[n-1-counterLen:]
	id := tail[0]
	a, err := p.aeadFor(s.keys, id)
	if err != nil {
		return nil, 0, err
	}
	counter = binary.BigEndian.Uint64(tail[1:])
	var nonce [nonceLen]byte
	binary.BigEndian.PutUint64(nonce[4:], counter)
	var aad [aadLen]byte
	copy(aad[:], f[:HeaderLen])
	copy(aad[HeaderLen:], tail)
	// Open into a new buffer: the frame may be shared (a transport may
	// hand one datagram to several endpoints), so it is not modified.
	ct := f[HeaderLen : n-1-counterLen]
	body, err = a.Open(make([]byte, 0, max(len(ct)-tagLen, 0)), nonce[:], ct, aad[:])
	if err != nil {
		return nil, 0, fmt.Errorf("%w: bad tag from %d with key %d", ErrAuth, p.id, id)
	}
	return body, counter, nil
}

// open checks frame f of header h and returns its body and, when keyed,
// its frame counter. It changes no state but caches.
func (e *Endpoint) open(h header, f []byte) ([]byte, uint64, error) {
	var p *peer
	if e.seal.keyed() {
		if p = e.peers[h.sender]; p == nil || p.inc != h.inc {
			p = e.newPeer(h.sender, h.inc)
		}
	}
	return e.seal.open(f, h.auth, p)
}

// newPeer returns a fresh record of sender run (id, inc). A record made
// for authenticating a run not known yet is kept, with its derived keys,
// until another run needs one: frames are authenticated before a new
// sender or incarnation changes any state.
func (e *Endpoint) newPeer(id NodeID, inc uint64) *peer {
	if c := e.cand; c != nil && c.id == id && c.inc == inc {
		e.cand = nil
		return c
	}
	c := &peer{id: id, inc: inc}
	e.cand = c
	return c
}

// errUnknownKey: a frame sealed with a key id this endpoint does not
// accept.
var errUnknownKey = errors.New("unknown key id")

// aeadFor returns the AEAD opening p's frames sealed with key id,
// deriving and caching it.
func (p *peer) aeadFor(keys []Key, id uint8) (cipher.AEAD, error) {
	for i := range p.aeads {
		if p.aeads[i].id == id {
			return p.aeads[i].a, nil
		}
	}
	for _, k := range keys {
		if k.ID == id {
			a, err := deriveAEAD(k.Secret, p.id, p.inc)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrAuth, err)
			}
			p.aeads = append(p.aeads, peerAEAD{id, a})
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: %w %d from %d", ErrAuth, errUnknownKey, id, p.id)
}

// peerAEAD is a cached AEAD of a peer's run.
type peerAEAD struct {
	id uint8
	a  cipher.AEAD
}
