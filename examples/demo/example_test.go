package demo_test

import (
	"fmt"
	"os"

	"github.com/meshrti/meshrti/examples/demo"
)

// A Go program runs a demo as `federate-node demo multirate -steps 6`
// does: the arguments after "demo", and where to print; the result is
// the command's exit code.
func Example() {
	if code := demo.Main([]string{"multirate", "-steps", "6"}, os.Stdout, os.Stderr); code != 0 {
		fmt.Println("the demo failed:", code)
	}
}
