// Package record reads and writes meshrti recordings: the files that
// "federate-node record" writes and "federate-node replay" plays back.
// docs/record.md describes the format byte by byte.
//
// A recording is a preamble (magic and format version), then frames.
// Each frame holds whole records, is compressed on its own (DEFLATE) and
// carries its lengths and a CRC-32C, so the file streams: a Writer emits
// a frame at a time with one Write call, and a file cut anywhere (a
// crash, a full disk) still reads up to its last whole frame. The first
// record is the Header (the federation, its time representation, its MIM
// and FOM modules, so a recording decodes without the federation); then
// come events (discoveries, updates, interactions, removals), and a clean
// close ends with an end record.
//
//	w, err := record.NewWriter(file, hdr) // writes and flushes the header
//	for each event {
//		err = w.Write(&ev)                 // buffered; a full frame goes out
//		if idle { err = w.Flush() }        // everything so far is on disk
//	}
//	err = w.Close()                        // the end record
//
//	r, err := record.NewReader(file)       // *VersionError for another version
//	for {
//		ev, err := r.Next()                // io.EOF after the end record
//		...                                // *DamageError: where it stopped
//	}
//
// A Recorder records a federation through a federate of its own, and a
// Player plays a recording back into a federation in logical time: the
// commands "federate-node record" and "federate-node replay" are these
// two, and a Go program embeds them the same way:
//
//	rec := &record.Recorder{Ready: func(*peer.Federate) { log.Print("recording") }}
//	st, err := rec.RecordFile(ctx, cfg, "flight.mrec") // until ctx ends
//
//	res, err := (&record.Player{Speed: 1}).PlayFile(ctx, cfg, "flight.mrec")
//
// Names (classes, instances, attributes, parameters, federates,
// transportations) are written once per file and referred to by number
// afterwards, which keeps an update of one attribute to its value plus a
// few bytes.
//
// # Concurrency properties
//
// A Writer, Reader, Recorder or Player is not safe for concurrent use;
// its owner serializes calls. None starts goroutines of its own (a
// Recorder's and a Player's federate runs its own, and closes them).
package record
