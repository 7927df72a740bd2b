package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/ui"
)

// ttyPrompter asks for parameter values on the terminal; secrets are read
// without echo.
type ttyPrompter struct {
	in  *os.File
	out io.Writer
	rd  *bufio.Reader
	// interrupted names the parameter whose prompt was interrupted: no
	// other is asked for, and the command exits 130 (app.failure).
	interrupted string
}

// prompter returns a prompter when stdin is a terminal, else nil: gantry never
// prompts in CI or with piped input.
func (a *app) prompter() *ttyPrompter {
	a.ttyOnce.Do(func() {
		f, ok := a.stdin.(*os.File)
		if ok && term.IsTerminal(int(f.Fd())) {
			a.tty = &ttyPrompter{in: f, out: a.rawStderr(), rd: bufio.NewReader(f)}
		}
	})
	return a.tty
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func (p *ttyPrompter) Prompt(param *manifest.Parameter, current string) (string, error) {
	if p.interrupted != "" {
		return "", errPromptInterrupted
	}
	label := param.QName()
	if param.Brief != "" {
		label += " (" + param.Brief + ")"
	}
	if current != "" {
		if param.IsSecret() {
			label += " [Enter keeps the current value]"
		} else {
			label += " [" + current + "]"
		}
	}
	if param.IsSecret() {
		b, err := readSecret(int(p.in.Fd()), p.out, label+": ")
		fmt.Fprintln(p.out)
		if errors.Is(err, errPromptInterrupted) {
			p.interrupted = param.QName()
		}
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	fmt.Fprintf(p.out, "%s: ", label)
	line, err := p.rd.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// ask asks a gate's or a pause's question (the step logged it) and reads
// the answer. The display shows the step's log on stdout: when that is not
// the terminal (deploy > run.log), the question goes to stderr too, as the
// parameter prompts do, or the run would wait with nothing on the screen.
func (a *app) ask(question string) (string, error) {
	if a.stdoutTerminal() == nil {
		fmt.Fprintf(a.stderr, "%s ", ui.Sanitize(question))
	}
	return a.readLine()
}

// readLine reads an answer from the terminal.
func (a *app) readLine() (string, error) {
	p := a.prompter()
	if p == nil {
		return "", errors.New("stdin is not a terminal")
	}
	line, err := p.rd.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
