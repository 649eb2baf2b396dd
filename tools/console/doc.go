// Package console holds the console's tests in a real browser (headless
// Chromium driven by chromedp) against the example server, and the npm
// pins of the browser libraries the console vendors (make console). It is
// a module of its own so chromedp stays out of the root go.mod.
package console
