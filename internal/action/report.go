package action

import (
	"log/slog"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/report"
)

// autoReportMax is the most components a run writes its report for when
// it ends. Writing it reads the run's events and every component's log:
// at 1,000 components about a tenth of a second on a small machine, 3% of
// a run of no-op components; past this size the report is written when
// asked for (gantry report), and the run's end stays as quick as it was.
const autoReportMax = 2000

// writeReport keeps the run's parameters in its folder (masked, with where
// each value came from) and writes the run's report there, report.html
// (internal/report), unless the run has more than autoReportMax
// components. A report that cannot be written is a warning: the run is
// what it is, and gantry report can write it again from the folder.
func writeReport(st *Stack, b *built, out *Outcome) {
	if out == nil || out.LogDir == "" || out.Plan == nil {
		return
	}
	start := time.Now()
	params := runParams(st, b, out)
	if err := report.SaveParams(out.LogDir, params); err != nil {
		slog.Warn("the run's parameters could not be kept for its report", "run", out.RunID, "err", err)
	} else if out.Heard != nil {
		// The folder holds them now: the report takes them as kept.
		out.Heard.Params = params
	}
	if out.Heard != nil && !b.masker.Empty() {
		// What the run heard was masked with the secrets known then; a
		// secret it learned later is masked in the report too.
		out.Heard.Mask = b.masker.Text
	}
	if n := len(out.Plan.Components); n > autoReportMax {
		slog.Debug("report not written: gantry report writes it", "run", out.RunID, "components", n, "max", autoReportMax)
		return
	}
	path, err := report.WriteRun(out.LogDir, out.Plan, out.Heard)
	if err != nil {
		slog.Warn("the run's report could not be written (gantry report writes it from the run's folder)", "run", out.RunID, "err", err)
		return
	}
	slog.Debug("report written", "file", path, "took", time.Since(start).Round(time.Microsecond))
}

// runParams are the parameters of a run as its report shows them: the
// stack's locked ones, and each component's as its begin step expanded
// them; secrets masked.
func runParams(st *Stack, b *built, out *Outcome) *report.Params {
	mask := b.masker.Text
	p := &report.Params{Stack: []report.Param{}, Components: map[string][]report.Param{}}
	if st.Locked != nil {
		for _, v := range st.Locked.Values() {
			p.Stack = append(p.Stack, report.NewParam(v.Name, v.Component, v.Value, spreadSource(st, v.Name, v.Component, v.Source), v.Env, v.Secret, mask))
		}
	}
	if out.Engine == nil {
		return p
	}
	for name, info := range out.Plan.Components {
		if info.Settled {
			// Its plan has no begin: the values are those it was deployed
			// with, which the plan found unchanged (recordedParams).
			if ps := recordedParams(st, name, mask); len(ps) > 0 {
				p.Components[name] = ps
			}
			continue
		}
		values := steps.ExpandedParameters(out.Engine.Results[name+"/begin"].Data)
		if len(values) == 0 {
			continue
		}
		ps := make([]report.Param, len(values))
		for i, v := range values {
			ps[i] = report.NewParam(v.Name, "", v.Value, spreadSource(st, v.Name, name, v.Source), v.Env, v.Secret, mask)
		}
		p.Components[name] = ps
	}
	return p
}

// spreadSource is where a parameter's value came from as gantry params says
// it: for a leaf of a nested stack, the level whose config value or
// default won ("hub.yaml:12 (default of shop)"); else source.
func spreadSource(st *Stack, name, component, source string) string {
	if st.Res != nil {
		if s, ok := st.Res.SpreadSource(manifest.QualifiedName(name, component), source); ok {
			return s
		}
	}
	return source
}
