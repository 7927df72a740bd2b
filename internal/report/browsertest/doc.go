// Package browsertest tests gantry's reports in a real browser: headless
// Chromium (Debian's chromium package, which scripts/browser/ensure.sh
// installs when missing) driven with chromedp. It holds tests only, in a
// package of their own so that the core's tests neither build chromedp
// nor wait for a browser.
//
// The tests read the browser's path from GANTRY_TEST_CHROMIUM, which
// scripts/test.sh sets; without it they skip, except in CI (CI=true),
// where they fail. GANTRY_TEST_SCREENSHOTS=DIR keeps their screenshots.
package browsertest
