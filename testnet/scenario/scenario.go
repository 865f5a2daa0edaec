package scenario

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Result is the outcome of Run.
type Result struct {
	// Steps is how many steps ran; Mismatches how many printed something
	// other than their expected output, or had no "----" line.
	Steps, Mismatches int
	// Rewritten is the script with every expected output replaced by the
	// actual one.
	Rewritten []byte
}

// Run reads a script from r and calls step with each command, in order,
// from the calling goroutine. step returns the command's output lines;
// none may be blank or hold a newline, which the script could not hold,
// and their trailing spaces are dropped, as from the script's lines.
// For every step whose output differs from the expected one, Run writes
// to w the step's line and command and a line diff (- expected,
// + actual), as the mismatch is found.
//
// The error reports a script that cannot be parsed, a step that returned
// an error or an output the script cannot hold, located by line and
// command; Run stops there and returns no Result. Mismatches are not
// errors: they are counted in the Result.
func Run(r io.Reader, w io.Writer, step func(cmd string) ([]string, error)) (*Result, error) {
	sc, err := parse(r)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	outputs := make([][]string, len(sc.steps))
	for i := range sc.steps {
		st := &sc.steps[i]
		got, err := step(st.cmd)
		if err == nil {
			got, err = normalize(got)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", st.line, st.cmd, err)
		}
		outputs[i] = got
		res.Steps++
		if slices.Equal(got, st.expected) && st.sep {
			continue
		}
		res.Mismatches++
		fmt.Fprintf(w, "line %d: %s\n", st.line, st.cmd)
		if !st.sep {
			fmt.Fprintf(w, "  (no ---- line: expected output missing)\n")
		}
		for _, l := range diff(st.expected, got) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	res.Rewritten = sc.format(outputs)
	return res, nil
}

// RunFile runs the script in file as Run does. With rewrite it then
// writes Result.Rewritten back to file if it differs from what was read.
// Errors name the file.
func RunFile(file string, w io.Writer, rewrite bool, step func(cmd string) ([]string, error)) (*Result, error) {
	in, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	res, err := Run(bytes.NewReader(in), w, step)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if rewrite && !bytes.Equal(in, res.Rewritten) {
		if err := os.WriteFile(file, res.Rewritten, 0o644); err != nil {
			return res, err
		}
	}
	return res, nil
}

// normalize returns the output lines as a script holds them, without
// trailing spaces, tabs and carriage returns, or fails for one a script
// could not hold: a blank line would end the output early.
func normalize(got []string) ([]string, error) {
	out := make([]string, len(got))
	for i, l := range got {
		if strings.Contains(l, "\n") {
			return nil, fmt.Errorf("output line %d holds a line break: %q", i+1, l)
		}
		out[i] = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(out[i]) == "" {
			return nil, fmt.Errorf("output line %d is blank", i+1)
		}
	}
	return out, nil
}

// ---- Parsing and formatting ----

type step struct {
	pre      []string // comments and blank lines before the command, verbatim
	cmd      string
	line     int  // of the command, from 1
	sep      bool // "----" followed the command
	expected []string
}

type script struct {
	steps   []step
	trailer []string // comments and blank lines after the last step
}

func parse(r io.Reader) (*script, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " \t\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var s script
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			pre = append(pre, l)
			continue
		}
		if l == "----" {
			return nil, fmt.Errorf("line %d: ---- without a command", i+1)
		}
		st := step{pre: pre, cmd: strings.TrimSpace(l), line: i + 1}
		pre = nil
		if i+1 < len(lines) && lines[i+1] == "----" {
			st.sep = true
			i += 2
			for ; i < len(lines) && lines[i] != ""; i++ {
				st.expected = append(st.expected, lines[i])
			}
		}
		s.steps = append(s.steps, st)
	}
	s.trailer = pre
	return &s, nil
}

// format returns the script with outputs[i] as the output of step i.
func (s *script) format(outputs [][]string) []byte {
	var b bytes.Buffer
	for i, st := range s.steps {
		for _, l := range st.pre {
			b.WriteString(l + "\n")
		}
		b.WriteString(st.cmd + "\n----\n")
		for _, l := range outputs[i] {
			b.WriteString(l + "\n")
		}
		if i < len(s.steps)-1 || len(s.trailer) > 0 {
			b.WriteString("\n")
		}
	}
	for _, l := range s.trailer {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// ---- Diffs ----

// diff returns a minimal line diff of want and got: "- " for lines only
// in want, "+ " for lines only in got, "  " for common ones.
func diff(want, got []string) []string {
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			out = append(out, "  "+want[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+got[j])
			j++
		default:
			out = append(out, "- "+want[i])
			i++
		}
	}
	return out
}
