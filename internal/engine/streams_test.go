package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
)

// maskingRecorder masks pieces as the display's masker does, keeping what
// it would show.
type maskingRecorder struct {
	recorder
	m *secret.Masker
}

func (r *maskingRecorder) LogPiece(n *plan.Node, piece string, continued, continues bool, at time.Time) {
	r.Log(n, r.m.Piece(piece, continued, continues), at)
}

// TestPiecesOfOneStreamAcrossAnother: a line of a step's stderr between two
// pieces of a long stdout line does not end the cut one. A secret cut at
// the pieces' edge is masked in both (its second half was shown in clear
// when the masker took any line of the step for the end of the cut line).
func TestPiecesOfOneStreamAcrossAnother(t *testing.T) {
	const pw = "Sup3r-Secret-Pw"
	obs := &maskingRecorder{m: secret.NewMasker(pw)}
	step := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		out, errs := env.Stream(), env.Stream()
		head := strings.Repeat("x", lines.MaxLine-6) + pw[:6]
		for _, w := range []struct {
			to interface{ Write([]byte) (int, error) }
			s  string
		}{{out, head + pw[6:] + " tail"}, {errs, "between"}, {errs, "\n"}, {out, "\n"}} {
			if _, err := w.to.Write([]byte(w.s)); err != nil {
				return plan.Fail(err)
			}
		}
		return plan.Ok()
	})
	mustRun(context.Background(), build([]string{"a"}, nil, map[string]plan.Runner{"a": step}), Options{Observer: obs})
	shown := strings.Join(obs.logs, "\n")
	if strings.Contains(shown, pw[6:]) || strings.Contains(shown, pw[:6]) {
		t.Errorf("a part of the secret was shown:\n%s", shown[len(shown)-80:])
	}
	if !strings.Contains(shown, "a: between") || !strings.HasSuffix(shown, "***** tail") {
		t.Errorf("the lines were not shown as they came:\n%s", shown[len(shown)-80:])
	}
}
