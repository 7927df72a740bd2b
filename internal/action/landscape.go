package action

import (
	"context"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// isLandscape reports whether src names a sow landscape.
func isLandscape(src Source) bool {
	_, ok := landscape.IsLandscape(src.Manifest)
	return ok
}

// elaborateSource elaborates what src names: a stack manifest, an
// elaborated file, or a sow landscape (its folder or its acre.yaml, DESIGN
// 2.6), which becomes a stack like any other. A landscape's manifest is its
// acre.yaml, so its state lies next to it (acre.yaml.state).
func elaborateSource(src *Source, partial bool) (*elaborate.Result, manifest.Diagnostics) {
	root, ok := landscape.IsLandscape(src.Manifest)
	if !ok {
		return elaborate.Load(src.Manifest, elaborate.Options{ParamsFiles: src.ParamsFiles, Partial: partial})
	}
	src.Manifest = filepath.Join(root, landscape.AcreFile)
	if len(src.ParamsFiles) > 0 {
		var d manifest.Diagnostics
		d.Errorf(manifest.Pos{File: src.ParamsFiles[0]}, "", "a sow landscape takes no params files: its configuration is %s", src.Manifest)
		return nil, d
	}
	return landscape.Load(context.Background(), src.Manifest, landscape.Options{Graph: src.GraphOnly, HandlerLater: src.HandlerLater, HandlerCalled: src.HandlerCalled, Records: src.Records})
}
