package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/elaborate"
)

// envOverrides parses -e K=V flags (each may hold several pairs separated by commas).
func envOverrides(pairs []string) (map[string]string, error) {
	env := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageError("-e %q: expected NAME=VALUE", p)
		}
		env[k] = v
	}
	return env, nil
}

func newElaborateCmd(a *app) *cobra.Command {
	var out string
	var env []string
	cmd := &cobra.Command{
		Use:   "elaborate STACK [PARAMS...]",
		Short: "Assemble a stack, its base stacks, params files and components into one manifest",
		Long: `elaborate assembles the stack manifest, its base stacks (meta.fromStack), the
params files given after it and every component's hub-component.yaml into one
multi-document YAML: the stack with its merged parameters first, then one document
per component. The result is deterministic: the same inputs give the same bytes.`,
		Example: `  gantry elaborate hub.yaml params.yaml
  gantry elaborate hub.yaml params.yaml -o hub.yaml.elaborate
  gantry elaborate hub.yaml -e DB_PASSWORD=secret`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			overrides, err := envOverrides(env)
			if err != nil {
				return err
			}
			res, diags := elaborate.Load(args[0], elaborate.Options{ParamsFiles: args[1:], Env: overrides})
			if err := reportDiags(a.stderr, diags, "nothing was written"); err != nil {
				return err
			}
			baseDir := filepath.Dir(args[0])
			if out != "" && out != "-" {
				baseDir = filepath.Dir(out)
			}
			data, err := elaborate.Marshal(res, baseDir)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = a.stdout.Write(data)
				return err
			}
			if err := writeFileAtomic(out, data, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output-file", "o", "", "write to FILE instead of stdout")
	cmd.Flags().StringSliceVarP(&env, "env", "e", nil, "NAME=VALUE: the value of parameters whose fromEnv is NAME (repeat or separate with commas)")
	return cmd
}

// writeFileAtomic writes data to a temporary file next to path and renames it
// into place, so that readers never see half a file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
