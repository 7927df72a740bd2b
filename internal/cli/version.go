package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X .../internal/cli.version=v1.2.3".
var version = ""

// Version returns gantry's version: the one set at build time, else the module
// version or VCS revision recorded by the Go toolchain.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}

func newVersionCmd(app *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gantry's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(app.stdout, "gantry %s %s/%s %s\n", Version(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}
