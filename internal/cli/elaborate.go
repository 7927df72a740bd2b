package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/elaborate"
)

func newElaborateCmd(a *app) *cobra.Command {
	var out string
	var env []string
	cmd := &cobra.Command{
		Use:   "elaborate [STACK] [PARAMS...]",
		Short: "Assemble a stack, its base stacks, params files and components into one manifest",
		Long: `elaborate assembles the stack manifest, its base stacks (meta.fromStack), the
params files given after it and every component's hub-component.yaml into one
multi-document YAML: the stack with its merged parameters first, then one document
per component. The result is deterministic: the same inputs give the same bytes.`,
		Example: `  gantry elaborate hub.yaml params.yaml
  gantry elaborate hub.yaml params.yaml -o hub.yaml.elaborate
  gantry elaborate hub.yaml -e DB_PASSWORD=secret`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			overrides, err := envOverrides(env)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(out); out != "" && out != "-" && err == nil && fi.IsDir() {
				return usageError("-o %s is a directory: expected the path of the file to write", out)
			}
			if err := fileNotFormat(out, "elaborate writes YAML"); err != nil {
				return err
			}
			res, diags := elaborate.Load(args[0], elaborate.Options{ParamsFiles: args[1:], Env: overrides})
			if err := reportDiags(a.stderr, diags, "nothing was written"); err != nil {
				return err
			}
			if out != "" && out != "-" {
				// Writing over a file it was made from would lose that file.
				if to, err := os.Stat(out); err == nil {
					for _, f := range res.Files {
						if from, err := os.Stat(f); err == nil && os.SameFile(from, to) {
							return usageError("-o %s is %s, which the elaborated stack is made from: expected another file (hub.yaml.elaborate)", out, relPath(f))
						}
					}
				}
			}
			baseDir := filepath.Dir(args[0])
			if out != "" && out != "-" {
				baseDir = filepath.Dir(out)
			}
			data, err := elaborate.Marshal(res.ForWrite(), baseDir)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = a.stdout.Write(data)
				return err
			}
			// Values given with -e may be secrets: keep the file to its owner,
			// as one that holds a secret parameter's value.
			mode := res.FileMode()
			if len(overrides) > 0 {
				mode = 0o600
			}
			if err := writeFileAtomic(out, data, mode); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output-file", "o", "", "write to FILE instead of stdout")
	cmd.Flags().StringArrayVarP(&env, "env", "e", nil, "NAME=VALUE: the value of parameters whose fromEnv is NAME (repeat or separate with commas)")
	return cmd
}

// writeFileAtomic writes data to a temporary file next to path and renames it
// into place, so that readers never see half a file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode, false)
}
