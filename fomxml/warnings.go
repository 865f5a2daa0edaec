package fomxml

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
)

// Warning is a defect that was accepted because it leaves the federation
// unambiguous: a module off the OMT schema in a way other RTIs also
// accept (docs/fom.md, "Leniencies", lists each case). Msg says what is
// wrong and what was made of it.
type Warning struct {
	Pos Pos
	Msg string
}

// String formats w as "file:line: message", leaving out the line when
// there is none.
func (w Warning) String() string { return w.Pos.where() + ": " + w.Msg }

// where is "file:line", or "file" when the line is unknown.
func (p Pos) where() string {
	if p.Line > 0 {
		return p.File + ":" + strconv.Itoa(p.Line)
	}
	return p.File
}

// Options choose how strictly modules are read and merged. The zero value
// is what the package-level Parse, ParseBytes, ParseFile, Merge,
// MergeWithMIM and Load use: lenient, with warnings. Options are used by
// value, as in fomxml.Options{Strict: true}.Load(paths...).
type Options struct {
	// Strict refuses what would otherwise be accepted with a warning:
	// each warning becomes an error at the same place (ErrReading for a
	// module's own defects, ErrInconsistent for a disagreement between
	// modules), and the error states only the defect. A strict Merge
	// also refuses documents that were parsed with warnings.
	Strict bool
}

// ParseFile reads and parses one module file.
func (o Options) ParseFile(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), kind: ErrCouldNotOpen}
	}
	defer f.Close()
	return o.Parse(path, f)
}

// ParseBytes parses a module held in memory; file names it in errors.
func (o Options) ParseBytes(file string, data []byte) (*Document, error) {
	return o.Parse(file, bytes.NewReader(data))
}

// Parse reads one module; see the package-level Parse.
func (o Options) Parse(file string, r io.Reader) (*Document, error) {
	return parse(file, r, o.Strict)
}

// Merge merges modules after the standard MIM; see the package-level
// Merge.
func (o Options) Merge(docs ...*Document) (*FDD, error) {
	return o.MergeWithMIM(StandardMIM(), docs...)
}

// MergeWithMIM is Merge with a MIM of the caller's choice.
func (o Options) MergeWithMIM(mim *Document, docs ...*Document) (*FDD, error) {
	return mergeAll(o.Strict, mim, docs)
}

// Load parses module files and merges them after the standard MIM.
func (o Options) Load(paths ...string) (*FDD, error) {
	var docs []*Document
	var all ErrorList
	for _, p := range paths {
		d, err := o.ParseFile(p)
		if err != nil {
			all = appendErr(all, err)
			continue
		}
		docs = append(docs, d)
	}
	if len(all) > 0 {
		return nil, all
	}
	return o.Merge(docs...)
}

// Warnings returns the defects accepted while parsing d, in the order
// found. It returns a new slice on each call.
func (d *Document) Warnings() []Warning { return slices.Clone(d.warnings) }

// Warnings returns the defects accepted while building f: those of each
// document in merge order (the MIM first), then those the merge found
// between modules. It returns a new slice on each call.
func (f *FDD) Warnings() []Warning { return slices.Clone(f.warnings) }

// maxWarnings bounds how many warnings one pass records, as maxErrors
// bounds errors.
const maxWarnings = 100

// warns collects warnings up to maxWarnings. defects holds, for each, the
// defect alone: what Strict reports as the error.
type warns struct {
	list    []Warning
	defects []string
}

// add records the warning "defect; outcome", or just defect when outcome
// is empty.
func (c *warns) add(p Pos, defect, outcome string) {
	msg := defect
	if outcome != "" {
		msg += "; " + outcome
	}
	switch {
	case len(c.list) > maxWarnings:
		return
	case len(c.list) == maxWarnings:
		defect = "too many warnings; the rest are not listed"
		msg = defect
	}
	c.list = append(c.list, Warning{Pos: p, Msg: msg})
	c.defects = append(c.defects, defect)
}
