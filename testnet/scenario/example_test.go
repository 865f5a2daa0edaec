package scenario_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/testnet/scenario"
)

// A step function that adds numbers: the second step's expected output
// is wrong, so Run reports it and the rewritten script corrects it.
func ExampleRun() {
	script := `# Sums.
add 1 2
----
3

add 2 2
----
5
`
	add := func(cmd string) ([]string, error) {
		f := strings.Fields(cmd)
		sum := 0
		for _, s := range f[1:] {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, err
			}
			sum += n
		}
		return []string{strconv.Itoa(sum)}, nil
	}
	res, err := scenario.Run(strings.NewReader(script), os.Stdout, add)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d steps differ; rewritten:\n%s", res.Mismatches, res.Steps, res.Rewritten)
	// Output:
	// line 6: add 2 2
	//   + 4
	//   - 5
	// 1 of 2 steps differ; rewritten:
	// # Sums.
	// add 1 2
	// ----
	// 3
	//
	// add 2 2
	// ----
	// 4
}
