package browsertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is the path of the browser the tests drive.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GANTRY_TEST_CHROMIUM")
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true, but GANTRY_TEST_CHROMIUM is not set: scripts/test.sh sets it (with scripts/browser/ensure.sh)")
		}
		t.Skip("GANTRY_TEST_CHROMIUM is not set: scripts/test.sh sets it (GANTRY_TEST_BROWSER=0 skips the browser tests)")
	}
	return path
}

// browser starts a headless Chromium for one test, and returns the
// context of its first tab; it is stopped when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // root in a container has no user namespaces for the sandbox
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now: the tests time pages, not Chromium's start.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start %s: %v", chromium(t), err)
	}
	return ctx
}

// open loads a report file and waits until its script has drawn it.
func open(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+abs),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
}

// screenshot takes a screenshot of the page, checks that it is a PNG
// image, and writes it into the test's folder (and GANTRY_TEST_SCREENSHOTS
// when set).
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the screenshot is not a PNG image (%d bytes)", len(png))
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("GANTRY_TEST_SCREENSHOTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		}
	}
	return path
}

// eval evaluates a JavaScript expression in the page.
func eval(t *testing.T, ctx context.Context, expr string, out any) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, out)); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
}
