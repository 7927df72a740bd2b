package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

func newElaborateCmd(a *app) *cobra.Command {
	var out, platform string
	var env []string
	cmd := &cobra.Command{
		Use:   "elaborate [STACK] [PARAMS...]",
		Short: "Assemble a stack, its base stacks, params files and components into one manifest",
		Long: `elaborate assembles the stack manifest, its base stacks (meta.fromStack), the
params files given after it and every component's hub-component.yaml into one
multi-document YAML: the stack with its merged parameters first, then one document
per component. The result is deterministic: the same inputs give the same bytes.

With -s, the stack is elaborated over a platform stack's state (gantry's, or one
the Hub CLI wrote, read only), as the Hub CLI's elaborate -s does: the platform's
stack outputs and parameters give values to this stack's top-level parameters
that have none, and its provides become platform.provides. Deploy the elaborated file.`,
		Example: `  gantry elaborate hub.yaml params.yaml
  gantry elaborate hub.yaml params.yaml -o hub.yaml.elaborate
  gantry elaborate hub.yaml -e DB_PASSWORD=secret
  gantry elaborate hub.yaml -s ../platform/hub.yaml.state -o hub.yaml.elaborate`,
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
			if platform != "" && !diags.HasErrors() {
				st, from, err := readPlatformState(cmd.Context(), platform)
				if err != nil {
					return err
				}
				diags = append(diags, res.OverPlatform(st, from)...)
			}
			if !diags.HasErrors() {
				diags = append(diags, reservedNames(res)...)
			}
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
			// Values given with -e or read from a state may be secrets: keep
			// the file to its owner, as one that holds a secret parameter's
			// value.
			mode := res.FileMode()
			if len(overrides) > 0 || platform != "" {
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
	cmd.Flags().StringVarP(&platform, "state", "s", "", "a platform stack's state, gantry's or the Hub CLI's (a file, file://PATH or postgres://...; of a list, the first): its outputs and parameters fill empty parameters, its provides become platform.provides")
	return cmd
}

// readPlatformState reads the state elaborate -s names, without taking its
// lock: it is read, never written. It may be a Hub CLI state, of a platform
// still deployed with the Hub. A state that is not there is an error, not
// an empty platform: the parameters it should fill would be empty.
func readPlatformState(ctx context.Context, location string) (*state.State, string, error) {
	store, _, err := action.OpenState(location, "", "")
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	files, err := store.Read(ctx)
	if err != nil {
		return nil, "", withCode(ExitInvalid, err)
	}
	st, err := files.DecodePlatform(store.String())
	if err != nil {
		return nil, "", withCode(ExitInvalid, err)
	}
	if st == nil {
		return nil, "", withCode(ExitInvalid, fmt.Errorf("-s %s: no state there: deploy the platform stack first, or point -s at its state; nothing was written", store))
	}
	return st, store.String(), nil
}

// writeFileAtomic writes data to a temporary file next to path and renames it
// into place, so that readers never see half a file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode, false)
}

// reservedNames warns of the components named like one of the plan's own
// groups: elaborate only assembles the stack, and the plan builder refuses
// them when it is deployed, planned or validated (unless the state
// records them).
func reservedNames(res *elaborate.Result) manifest.Diagnostics {
	var diags manifest.Diagnostics
	for _, c := range res.Stack.Components {
		if manifest.ReservedComponentName(c.Name) {
			diags.Warnf(c.Pos, manifest.ItemPath("components", c.Item)+".name", "%s (deploy, plan and validate refuse it)", manifest.ReservedNameMessage(c.Name))
		}
	}
	return diags
}
