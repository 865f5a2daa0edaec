package record

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"time"
)

// Reader reads a recording, event by event.
type Reader struct {
	r        *bufio.Reader
	off      int64 // offset of the next frame
	frameOff int64 // offset of the current frame
	hdr      Header
	body     []byte // the current frame's records; a new slice per frame
	pos      int
	names    []string
	events   int64
	done     bool
	err      error // sticky
	zr       io.ReadCloser
}

// NewReader reads the preamble and the header. It returns ErrNotRecording
// for another kind of file, a *VersionError for another format version
// and a *DamageError when the header cannot be read.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{r: bufio.NewReaderSize(r, 64<<10)}
	pre := make([]byte, preambleLen)
	n, err := io.ReadFull(rd.r, pre)
	if err != nil {
		if n < len(Magic) && bytes.HasPrefix([]byte(Magic), pre[:n]) || n >= len(Magic) && string(pre[:len(Magic)]) == Magic {
			return nil, &DamageError{Reason: fmt.Sprintf("the file ends inside its %d-byte preamble", preambleLen)}
		}
		return nil, ErrNotRecording
	}
	if string(pre[:len(Magic)]) != Magic {
		return nil, ErrNotRecording
	}
	if v := int(binary.BigEndian.Uint16(pre[len(Magic):])); v != Version {
		return nil, &VersionError{Got: v}
	}
	rd.off = int64(preambleLen)
	if err := rd.nextFrame(); err != nil {
		return nil, err
	}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header returns the recording's header.
func (r *Reader) Header() Header { return r.hdr }

// Events returns how many events Next has returned.
func (r *Reader) Events() int64 { return r.events }

// Next returns the next event. It returns io.EOF after the end record of
// a cleanly closed recording, and a *DamageError where a damaged or
// unfinished file stops; every later call returns the same error.
func (r *Reader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for r.pos == len(r.body) {
		if err := r.nextFrame(); err != nil {
			return nil, err
		}
	}
	c := cursor{b: r.body, pos: r.pos}
	kind := c.byte()
	var ev *Event
	switch kind {
	case recEnd:
		n := c.uvarint()
		if c.err == nil && n != uint64(r.events) {
			c.err = fmt.Errorf("the end record counts %d events, the file holds %d", n, r.events)
		}
		if c.err == nil {
			r.done = true
			r.err = io.EOF
			return nil, io.EOF
		}
	case recDiscover, recUpdate, recInteraction, recRemove:
		ev = r.readEvent(&c, kind)
	case recHeader:
		c.err = errors.New("a second header")
	default:
		c.err = fmt.Errorf("unknown record kind 0x%02x", kind)
	}
	if c.err != nil {
		return nil, r.damage(r.frameOff, fmt.Sprintf("bad record at offset %d of the frame's body: %v", r.pos, c.err))
	}
	r.pos = c.pos
	r.events++
	return ev, nil
}

func (r *Reader) readEvent(c *cursor, kind byte) *Event {
	ev := &Event{}
	switch kind {
	case recDiscover:
		ev.Kind = KindDiscover
	case recUpdate:
		ev.Kind = KindUpdate
	case recInteraction:
		ev.Kind = KindInteraction
	default:
		ev.Kind = KindRemove
	}
	flags := c.byte()
	if flags&^(flagTime|flagTSO|flagSentTSO) != 0 && c.err == nil {
		c.err = fmt.Errorf("unknown event flags 0x%02x", flags)
	}
	ev.HasTime, ev.TSO, ev.SentTSO = flags&flagTime != 0, flags&flagTSO != 0, flags&flagSentTSO != 0
	if ev.HasTime {
		ev.Time = math.Float64frombits(c.uint64())
	}
	ev.Federate = r.name(c)
	ev.Class = r.name(c)
	if ev.Kind != KindInteraction {
		ev.Object = r.name(c)
	}
	if ev.Kind == KindUpdate || ev.Kind == KindInteraction {
		ev.Transportation = r.name(c)
	}
	if ev.Kind != KindDiscover {
		ev.Tag = c.bytes()
	}
	if ev.Kind == KindUpdate || ev.Kind == KindInteraction {
		n := c.uvarint()
		// Each value takes at least two bytes, which bounds n by what
		// is left before allocating.
		if n > uint64(len(c.b)-c.pos)/2 {
			if c.err == nil {
				c.err = fmt.Errorf("%d values in %d bytes", n, len(c.b)-c.pos)
			}
			return nil
		}
		ev.Values = make([]Value, 0, n)
		for i := uint64(0); i < n && c.err == nil; i++ {
			name := r.name(c)
			ev.Values = append(ev.Values, Value{Name: name, Data: c.bytes()})
		}
	}
	return ev
}

// name reads a string-table reference (see Writer.appendName).
func (r *Reader) name(c *cursor) string {
	x := c.uvarint()
	if c.err != nil {
		return ""
	}
	if x == 0 {
		s := c.string()
		if c.err == nil {
			r.names = append(r.names, s)
		}
		return s
	}
	if x > uint64(len(r.names)) {
		c.err = fmt.Errorf("name %d of a table of %d", x-1, len(r.names))
		return ""
	}
	return r.names[x-1]
}

func (r *Reader) readHeader() error {
	c := cursor{b: r.body}
	if k := c.byte(); c.err == nil && k != recHeader {
		return r.damage(r.frameOff, fmt.Sprintf("the first record is of kind 0x%02x, not the header", k))
	}
	h := &r.hdr
	h.Federation, h.Recorder = c.string(), c.string()
	if ns := c.varint(); ns != 0 {
		h.Started = time.Unix(0, ns)
	}
	h.TimeRepresentation = c.string()
	h.MIM.Designator, h.MIM.Text = c.string(), c.string()
	n := c.uvarint()
	if n > uint64(len(c.b)-c.pos)/2 && c.err == nil {
		c.err = fmt.Errorf("%d modules in %d bytes", n, len(c.b)-c.pos)
	}
	for i := uint64(0); i < n && c.err == nil; i++ {
		h.Modules = append(h.Modules, Module{Designator: c.string(), Text: c.string()})
	}
	if c.err != nil {
		return r.damage(r.frameOff, fmt.Sprintf("bad header: %v", c.err))
	}
	r.pos = c.pos
	return nil
}

// nextFrame reads, checks and decompresses the frame at r.off.
func (r *Reader) nextFrame() error {
	at := r.off
	var hdr [frameHeaderLen]byte
	n, err := io.ReadFull(r.r, hdr[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return r.damage(at, "the file ends without its end record (the recorder did not close it)")
	case err != nil && (errors.Is(err, io.ErrUnexpectedEOF)):
		return r.damage(at, fmt.Sprintf("the file ends inside a frame header (%d of %d bytes)", n, frameHeaderLen))
	case err != nil:
		return r.damage(at, fmt.Sprintf("reading a frame header: %v", err))
	}
	storedLen := binary.BigEndian.Uint32(hdr[0:4])
	rawLen := binary.BigEndian.Uint32(hdr[4:8])
	enc := hdr[8]
	sum := binary.BigEndian.Uint32(hdr[9:13])
	if storedLen > MaxFrame || rawLen > MaxFrame {
		return r.damage(at, fmt.Sprintf("frame lengths %d (stored) and %d (raw) exceed the limit %d", storedLen, rawLen, MaxFrame))
	}
	stored := make([]byte, storedLen)
	if n, err := io.ReadFull(r.r, stored); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return r.damage(at, fmt.Sprintf("the file ends inside a frame (%d of %d bytes)", frameHeaderLen+n, frameHeaderLen+int(storedLen)))
		}
		return r.damage(at, fmt.Sprintf("reading a frame: %v", err))
	}
	if got := crc32.Update(crc32.Checksum(hdr[:9], castagnoli), castagnoli, stored); got != sum {
		return r.damage(at, fmt.Sprintf("frame CRC-32C is %08x, the frame says %08x", got, sum))
	}
	var body []byte
	switch enc {
	case encStored:
		if rawLen != storedLen {
			return r.damage(at, fmt.Sprintf("a stored frame of %d bytes says %d raw", storedLen, rawLen))
		}
		body = stored
	case encDeflate:
		if r.zr == nil {
			r.zr = flate.NewReader(bytes.NewReader(stored))
		} else if err := r.zr.(flate.Resetter).Reset(bytes.NewReader(stored), nil); err != nil {
			return r.damage(at, fmt.Sprintf("decompressing a frame: %v", err))
		}
		body = make([]byte, rawLen)
		if _, err := io.ReadFull(r.zr, body); err != nil {
			return r.damage(at, fmt.Sprintf("decompressing a frame: %v", err))
		}
		if n, err := r.zr.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			return r.damage(at, fmt.Sprintf("a compressed frame holds more than its %d raw bytes", rawLen))
		}
	default:
		return r.damage(at, fmt.Sprintf("unknown frame encoding %d", enc))
	}
	r.frameOff = at
	r.off = at + frameHeaderLen + int64(storedLen)
	r.body, r.pos = body, 0
	return nil
}

func (r *Reader) damage(at int64, reason string) error {
	r.err = &DamageError{Offset: at, Events: r.events, Reason: reason}
	return r.err
}

// cursor decodes a frame's body; the first error sticks and every later
// read returns zero values.
type cursor struct {
	b   []byte
	pos int
	err error
}

func (c *cursor) short(what string) {
	if c.err == nil {
		c.err = fmt.Errorf("%s runs past the end of the body", what)
	}
}

func (c *cursor) byte() byte {
	if c.err != nil || c.pos >= len(c.b) {
		c.short("a byte")
		return 0
	}
	c.pos++
	return c.b[c.pos-1]
}

func (c *cursor) uint64() uint64 {
	if c.err != nil || len(c.b)-c.pos < 8 {
		c.short("a time")
		return 0
	}
	c.pos += 8
	return binary.BigEndian.Uint64(c.b[c.pos-8:])
}

func (c *cursor) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.pos:])
	return c.advance(v, n)
}

func (c *cursor) varint() int64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Varint(c.b[c.pos:])
	return int64(c.advance(uint64(v), n))
}

// advance moves past a varint of n bytes (binary.Uvarint's n: 0 for too
// few bytes, negative for an overflow) and returns v, or 0 on an error.
func (c *cursor) advance(v uint64, n int) uint64 {
	if n < 0 {
		c.err = errors.New("a number overflows 64 bits")
	}
	if n <= 0 {
		c.short("a number")
		return 0
	}
	c.pos += n
	return v
}

func (c *cursor) bytes() []byte {
	n := c.uvarint()
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.b)-c.pos) {
		c.short(fmt.Sprintf("a %d-byte value", n))
		return nil
	}
	if n == 0 {
		return nil
	}
	c.pos += int(n)
	return c.b[c.pos-int(n) : c.pos : c.pos]
}

func (c *cursor) string() string { return string(c.bytes()) }
