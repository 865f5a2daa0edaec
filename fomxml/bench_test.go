package fomxml

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadRPR parses the 14 RPR FOM 2.0 modules and merges them with
// the MIM, from bytes already in memory.
func BenchmarkLoadRPR(b *testing.B) {
	files := glob(b, filepath.Join(sharedFOM(b), "rpr2", "*.xml"))
	data := make([][]byte, len(files))
	total := 0
	for i, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data[i] = d
		total += len(d)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		docs := make([]*Document, len(files))
		for i := range files {
			d, err := ParseBytes(files[i], data[i])
			if err != nil {
				b.Fatal(err)
			}
			docs[i] = d
		}
		if _, err := Merge(docs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeRPR merges already parsed RPR modules.
func BenchmarkMergeRPR(b *testing.B) {
	files := glob(b, filepath.Join(sharedFOM(b), "rpr2", "*.xml"))
	docs := make([]*Document, len(files))
	for i, f := range files {
		d, err := ParseFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = d
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Merge(docs...); err != nil {
			b.Fatal(err)
		}
	}
}
