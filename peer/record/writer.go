package record

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// FrameSize is the body size at which Write emits a frame by itself.
// Larger frames compress a little better; smaller ones lose less when the
// process dies between flushes.
const FrameSize = 64 << 10

// skipFrames is how many frames are stored uncompressed after one of at
// least 4 KiB that DEFLATE shrank by less than an eighth.
const skipFrames = 8

// Writer writes a recording. Events are buffered into a frame; a frame
// goes to the underlying writer in one Write call when it reaches
// FrameSize, on Flush and on Close.
type Writer struct {
	w      io.Writer
	body   []byte         // records of the frame being filled
	names  map[string]int // string table: name to its number
	order  []string       // string table: number to name
	zbuf   bytes.Buffer
	zw     *flate.Writer
	frame  []byte // header and stored body of the frame being written
	skip   int    // frames to store without trying to compress them
	events int64
	closed bool
	err    error // sticky: after a failed write the file's tail is unknown
}

// NewWriter writes the preamble and h, as a frame of its own, to w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	zw, err := flate.NewWriter(nil, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	rw := &Writer{w: w, names: map[string]int{}, zw: zw}
	pre := binary.BigEndian.AppendUint16([]byte(Magic), Version)
	if _, err := w.Write(pre); err != nil {
		return nil, fmt.Errorf("record: writing the preamble: %w", err)
	}
	b := append(rw.body, recHeader)
	for _, s := range []string{h.Federation, h.Recorder} {
		b = appendString(b, s)
	}
	var started int64
	if !h.Started.IsZero() {
		started = h.Started.UnixNano()
	}
	b = binary.AppendVarint(b, started)
	b = appendString(b, h.TimeRepresentation)
	b = appendString(b, h.MIM.Designator)
	b = appendString(b, h.MIM.Text)
	b = binary.AppendUvarint(b, uint64(len(h.Modules)))
	for _, m := range h.Modules {
		b = appendString(b, m.Designator)
		b = appendString(b, m.Text)
	}
	rw.body = b
	if err := rw.Flush(); err != nil {
		return nil, err
	}
	return rw, nil
}

// Events returns how many events were written.
func (w *Writer) Events() int64 { return w.events }

// Buffered returns the size of the body not yet written out.
func (w *Writer) Buffered() int { return len(w.body) }

// Write adds ev to the current frame, and writes the frame out when it
// is full.
func (w *Writer) Write(ev *Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("record: write after Close")
	}
	kind, ok := eventRecord(ev.Kind)
	if !ok {
		return fmt.Errorf("record: unknown event kind %d", ev.Kind)
	}
	mark, known := len(w.body), len(w.order)
	b := append(w.body, kind, ev.flags())
	if ev.HasTime {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(ev.Time))
	}
	b = w.appendName(b, ev.Federate)
	b = w.appendName(b, ev.Class)
	if ev.Kind != KindInteraction {
		b = w.appendName(b, ev.Object)
	}
	if ev.Kind == KindUpdate || ev.Kind == KindInteraction {
		b = w.appendName(b, ev.Transportation)
	}
	if ev.Kind != KindDiscover {
		b = appendBytes(b, ev.Tag)
	}
	if ev.Kind == KindUpdate || ev.Kind == KindInteraction {
		b = binary.AppendUvarint(b, uint64(len(ev.Values)))
		for _, v := range ev.Values {
			b = w.appendName(b, v.Name)
			b = appendBytes(b, v.Data)
		}
	}
	if len(b)-mark > MaxFrame {
		// The table must match what goes to disk: forget the names
		// this event defined.
		w.body = b[:mark]
		for _, s := range w.order[known:] {
			delete(w.names, s)
		}
		w.order = w.order[:known]
		return fmt.Errorf("record: event of %d bytes exceeds the frame limit %d", len(b)-mark, MaxFrame)
	}
	w.body = b
	w.events++
	if len(w.body) >= FrameSize {
		return w.Flush()
	}
	return nil
}

func eventRecord(k Kind) (byte, bool) {
	switch k {
	case KindDiscover:
		return recDiscover, true
	case KindUpdate:
		return recUpdate, true
	case KindInteraction:
		return recInteraction, true
	case KindRemove:
		return recRemove, true
	}
	return 0, false
}

func (ev *Event) flags() byte {
	var f byte
	if ev.HasTime {
		f |= flagTime
	}
	if ev.TSO {
		f |= flagTSO
	}
	if ev.SentTSO {
		f |= flagSentTSO
	}
	return f
}

// appendName appends a reference to s: its number plus one when the
// table has it, else 0 and the string, which gets the next number.
func (w *Writer) appendName(b []byte, s string) []byte {
	if n, ok := w.names[s]; ok {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	w.names[s] = len(w.order)
	w.order = append(w.order, s)
	b = append(b, 0)
	return appendString(b, s)
}

// Flush writes out the buffered events as a frame.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.body) == 0 {
		return nil
	}
	enc, stored := byte(encStored), w.body
	if w.skip > 0 {
		w.skip--
	} else {
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
		if _, err := w.zw.Write(w.body); err != nil {
			return w.fail(err)
		}
		if err := w.zw.Close(); err != nil {
			return w.fail(err)
		}
		if z := w.zbuf.Bytes(); len(z) < len(w.body) {
			enc, stored = encDeflate, z
		}
		if len(w.body) >= 4<<10 && len(stored) > len(w.body)*7/8 {
			// Values that do not compress (encrypted, already
			// compressed, noise) would cost the compressor's time for
			// nothing: store the next frames as they are, and try
			// again after them.
			w.skip = skipFrames
		}
	}
	f := w.frame[:0]
	f = binary.BigEndian.AppendUint32(f, uint32(len(stored)))
	f = binary.BigEndian.AppendUint32(f, uint32(len(w.body)))
	f = append(f, enc)
	crc := crc32.Update(crc32.Checksum(f, castagnoli), castagnoli, stored)
	f = binary.BigEndian.AppendUint32(f, crc)
	f = append(f, stored...)
	w.frame = f
	if _, err := w.w.Write(f); err != nil {
		return w.fail(err)
	}
	w.body = w.body[:0]
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("record: writing a frame: %w", err)
	return w.err
}

// Close writes the end record and flushes. It does not close the
// underlying writer. A file without the end record reads as unfinished.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	w.closed = true
	w.body = append(w.body, recEnd)
	w.body = binary.AppendUvarint(w.body, uint64(w.events))
	return w.Flush()
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}
