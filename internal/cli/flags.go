package cli

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits of the CLI's own flags. A usage error names the flag and its
// range: distpass refuses a value rather than running out of time or
// memory on it.
const (
	// MaxCheckSteps is the most training steps check runs.
	MaxCheckSteps = 1000
	// MaxExampleLayers is the most layers an example model has.
	MaxExampleLayers = 1000
	// MaxExampleSize bounds an example's sizes (hidden, batch, heads,
	// vocab, seq, experts, capacity).
	MaxExampleSize = 1 << 20
)

// intFlag is an int flag with a range, that knows whether it was given.
// A value out of range is a usage error from the flag package, which
// names the flag: invalid value "-1" for flag -steps: want 1 to 1000.
type intFlag struct {
	v        int
	min, max int
	set      bool
}

// rangeInt defines an int flag on fs that takes values in [min, max].
func rangeInt(fs *flag.FlagSet, name string, def, min, max int, usage string) *intFlag {
	f := &intFlag{v: def, min: min, max: max}
	fs.Var(f, name, usage)
	return f
}

func (f *intFlag) String() string {
	if f == nil {
		return ""
	}
	return strconv.Itoa(f.v)
}

func (f *intFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want an integer")
	}
	if v < f.min || v > f.max {
		if f.max == math.MaxInt {
			return fmt.Errorf("want %d or more", f.min)
		}
		return fmt.Errorf("want %d to %d", f.min, f.max)
	}
	f.v, f.set = v, true
	return nil
}

// floatFlag is a float flag that takes finite values of min or more.
type floatFlag struct {
	v   float64
	min float64
}

func rangeFloat(fs *flag.FlagSet, name string, def, min float64, usage string) *floatFlag {
	f := &floatFlag{v: def, min: min}
	fs.Var(f, name, usage)
	return f
}

func (f *floatFlag) String() string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *floatFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < f.min {
		return fmt.Errorf("want a finite number, %g or more", f.min)
	}
	f.v = v
	return nil
}

// choiceFlag is a string flag that takes one of a few values; another is
// a usage error naming the flag: invalid value "x" for flag -format: want
// dpir or pdmodel.
type choiceFlag struct {
	v      string
	values []string
}

func choice(fs *flag.FlagSet, name string, values []string, usage string) *choiceFlag {
	f := &choiceFlag{v: values[0], values: values}
	fs.Var(f, name, usage)
	return f
}

func (f *choiceFlag) String() string {
	if f == nil {
		return ""
	}
	return f.v
}

func (f *choiceFlag) Set(s string) error {
	if !slices.Contains(f.values, s) {
		return fmt.Errorf("want %s or %s", strings.Join(f.values[:len(f.values)-1], ", "), f.values[len(f.values)-1])
	}
	f.v = s
	return nil
}
