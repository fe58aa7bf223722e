// A real headless Chromium for the end-to-end suite: Debian's chromium
// package (.ci/run installs it when it is missing), driven by
// playwright-core, which downloads no browser of its own.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { e2eDir } from "./helpers.mjs";

export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

// Screenshots and other files a run leaves for people to look at
// (git-ignored).
export const artifactsDir = path.join(e2eDir, "artifacts");

// browserMissing is why the browser tests cannot run here, or "" when
// they can. In CI (CI=true) a missing browser is a failure, not a reason
// to skip: launchBrowser throws.
export const browserMissing = existsSync(chromiumPath)
  ? ""
  : `${chromiumPath} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`;

export const skipBrowser = browserMissing && process.env.CI !== "true" ? browserMissing : false;

// launchBrowser starts a headless Chromium with a fresh temporary profile
// (playwright's launch makes a new user-data-dir and deletes it on
// close), so no cookie or session outlives the browser.
export async function launchBrowser() {
  if (browserMissing) throw new Error(browserMissing);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

// screenshot saves a full-page screenshot of page under artifacts/.
export async function screenshot(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
