package exitcode

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagError turns a flag the command line got wrong into a usage error (exit 2) that
// names the flag and what it takes, instead of the parser's words
// (`strconv.ParseBool: parsing "server": invalid syntax`).
func FlagError(cmd *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return With(Usage, err)
	}
	f, v := iv.GetFlag(), iv.GetValue()
	name := "--" + f.Name
	if len(f.Name) == 1 { // klog's -v
		name = "-" + f.Name
	}
	var num *strconv.NumError
	typ := f.Value.Type()
	if errors.As(err, &num) && typ != "bool" && num.Func != "ParseBool" && !strings.HasPrefix(typ, "float") {
		typ = "int"
	}
	switch typ {
	case "bool":
		if f.Name == "dry-run" {
			return UsageErrorf("invalid %s %q: %s's dry run is a switch, --dry-run (or --dry-run=false); it has no client or server mode",
				name, v, cmd.CommandPath())
		}
		return UsageErrorf("invalid %s %q: must be true or false", name, v)
	case "duration":
		return UsageErrorf("invalid %s %q: must be a duration such as 90s, 5m or 1h", name, v)
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return UsageErrorf("invalid %s %q: must be a whole number", name, v)
	case "float32", "float64":
		return UsageErrorf("invalid %s %q: must be a number", name, v)
	}
	return UsageErrorf("invalid %s %q: %v", name, v, errors.Unwrap(iv))
}
