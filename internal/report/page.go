package report

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/plan"
)

//go:embed assets/page.html assets/page.css assets/page.js
var assets embed.FS

var (
	page   = template.Must(template.ParseFS(assets, "assets/page.html"))
	css    = mustRead("assets/page.css")
	script = mustRead("assets/page.js")
)

func mustRead(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Write writes the page of a model: HTML with its styles, script and data
// inline. The data is JSON in a script element; encoding/json escapes <, >
// and &, so no text of a log can end the element.
func Write(w io.Writer, m *Model) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode the report's data: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := execute(bw, m, data); err != nil {
		return err
	}
	return bw.Flush()
}

// execute writes the page of a model whose data is encoded.
func execute(w io.Writer, m *Model, data []byte) error {
	title := m.Stack + " — " + m.Verb
	if m.Kind == KindRun {
		title += " " + m.Status + " (run " + m.Run + ")"
	} else {
		title += " plan"
	}
	err := page.Execute(w, struct {
		Title string
		CSS   template.CSS
		JS    template.JS
		Data  template.JS
	}{Title: title + " — gantry", CSS: template.CSS(css), JS: template.JS(script), Data: template.JS(data)})
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// WriteFile writes the page of a model to a file, replacing it whole.
func WriteFile(path string, m *Model) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode the report's data: %w", err)
	}
	// The page is its data and its assets: one buffer of the right size.
	var b bytes.Buffer
	b.Grow(len(data) + len(css) + len(script) + 8<<10)
	if err := execute(&b, m, data); err != nil {
		return err
	}
	if err := atomicfile.Write(path, b.Bytes(), 0o600, false); err != nil {
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	return nil
}

// WriteRun writes the report of the run whose folder is dir into the
// folder (report.html), and returns its path. p is the run's plan, or nil
// to read it from the folder; heard has what the run wrote there (logs,
// events, parameters), or is nil to read it from the folder (LoadRunOf).
func WriteRun(dir string, p *plan.Plan, heard *Heard) (string, error) {
	var m *Model
	var err error
	if p != nil {
		m, err = LoadRunOf(dir, p, heard)
	} else {
		m, err = LoadRun(dir)
	}
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, ReportFile)
	return path, WriteFile(path, m)
}
