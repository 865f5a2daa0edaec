// Package fomxml reads HLA FOM modules (IEEE 1516.2 OMT XML, FDD/DIF),
// merges them into one federation object model, and answers questions
// about it.
//
// # Reading and merging
//
// Parse (or ParseFile, ParseBytes) reads one module in either edition:
// 1516-2010, where properties are child elements (<order>TimeStamp</order>),
// or 1516-2000, where they are XML attributes (order="TimeStamp"). A
// Document is checked on its own: names present, sizes and values
// numeric, cardinalities well formed.
//
// Merge combines documents after the embedded standard MIM (see
// StandardMIM), following IEEE 1516-2010: a module may name a parent class
// with no attributes only to place its subclasses under it (scaffolding);
// identical definitions in two modules are one definition; different ones
// are an ErrInconsistent error that names both places. Only structure is
// compared: prose such as semantics or a basic type's interpretation may
// differ. After merging, every reference (to data types, dimensions and
// transportations, and the interaction classes of HLA 4
// <directedInteraction> declarations) is checked across the whole. Load
// does both for files.
//
// An object class's <directedInteraction>s (IEEE 1516.2-2025) combine
// across modules, are inherited by its subclasses, and each covers its
// interaction class only, not that class's subclasses; see
// DirectedInteraction and docs/fom.md.
//
// # Leniencies and warnings
//
// Modules in the field are often slightly off the OMT schema. What makes
// the federation ambiguous is refused: conflicting definitions, unknown
// types, recursion that cannot end, a discriminant value that two
// alternatives would claim. Defects that leave one clear reading are
// accepted and each gives a Warning ("file:line: message"):
//
//   - a variant-record alternative with no <dataType>, or an empty one,
//     carries no data, as with NA;
//   - an enumerator without a value (no <value>, or an empty one) takes
//     the previous enumerator's last value plus one, 0 for the first;
//   - an enumerator name written twice is one enumerator with the values
//     of both; it encodes as its first value;
//   - a value written for two enumerators decodes as the first written
//     with it;
//   - a switch that a later module sets differently keeps the first
//     module's setting.
//
// Document.Warnings and FDD.Warnings list them (an FDD keeps its
// documents' warnings and adds the merge's own). The package-level
// functions are lenient; Options{Strict: true} turns every warning into
// an error at the same place. docs/fom.md has the full list.
//
// # Handles
//
// Handles are 64-bit hashes of what they denote (kind and fully qualified
// name), so every process that merges the same modules, in any order, gets
// the same handles, and a module added at join time never renumbers
// anything already there. Collisions are detected at merge time.
//
// # Errors
//
// Every error wraps one of ErrCouldNotOpen, ErrReading or ErrInconsistent
// (the HLA exceptions CouldNotOpenFDD, ErrorReadingFDD, InconsistentFDD).
// A pass reports every problem it finds, up to a limit, as an ErrorList of
// *Error values, each printing as "file:line: message".
//
// # Hostile input
//
// A module is read only up to MaxModuleBytes, with at most MaxElements
// elements nested at most MaxDepth deep; text and attribute values are
// bounded by MaxTextBytes. Data types that contain themselves are
// rejected. Nothing in this package panics on input.
//
// # Concurrency
//
// Parse and Merge may be called from any goroutine. A merged *FDD is never
// changed afterwards and is safe for concurrent reads.
//
// The HLA data encoding (IEEE 1516.2 §4.13) driven by a merged FDD lives
// in the subpackage fomxml/codec.
package fomxml
