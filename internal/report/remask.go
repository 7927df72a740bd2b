package report

import "github.com/gantry-dev/gantry/internal/ui"

// Remask masks the report's texts again with mask: a secret the run learned
// only after a line had named it (a token a component printed before the
// Outputs: block that declares it secret), or one the state knows, is
// masked in the logs, reasons, step titles, outputs and summary already
// written.
func (m *Model) Remask(mask func(string) string) {
	if m == nil || mask == nil {
		return
	}
	m.Summary, m.Why = mask(m.Summary), mask(m.Why)
	for _, c := range m.Components {
		c.Reason, c.Why = mask(c.Reason), mask(c.Why)
		for _, s := range c.Steps {
			s.Title, s.Reason, s.Warning, s.Info = mask(s.Title), mask(s.Reason), mask(s.Warning), mask(s.Info)
		}
		for i := range c.Outputs {
			c.Outputs[i].Value = mask(c.Outputs[i].Value)
		}
		if l := c.Log; l != nil {
			for i := range l.Lines {
				l.Lines[i] = mask(l.Lines[i])
			}
			for i := range l.Failing {
				l.Failing[i].Text = mask(l.Failing[i].Text)
			}
		}
	}
}

// sanitizeLogs makes the logs' lines what the terminal shows of them:
// without escape sequences (colours, titles, cursor moves) and controls,
// which the page would show as text. After Remask, which matches secrets
// in the lines as they were printed.
func (m *Model) sanitizeLogs() {
	for _, c := range m.Components {
		if l := c.Log; l != nil {
			for i := range l.Lines {
				l.Lines[i] = ui.Sanitize(l.Lines[i])
			}
			for i := range l.Failing {
				l.Failing[i].Text = ui.Sanitize(l.Failing[i].Text)
			}
		}
	}
}
