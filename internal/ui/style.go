package ui

// Style colours text unless colours are off (NO_COLOR, --no-color, not a
// terminal).
type Style struct{ Color bool }

func (s Style) wrap(code, text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Red is for failures.
func (s Style) Red(t string) string { return s.wrap("31", t) }

// Green is for success.
func (s Style) Green(t string) string { return s.wrap("32", t) }

// Yellow is for warnings and skips.
func (s Style) Yellow(t string) string { return s.wrap("33", t) }

// Dim is for what matters less.
func (s Style) Dim(t string) string { return s.wrap("2", t) }

// Bold is for headings.
func (s Style) Bold(t string) string { return s.wrap("1", t) }
