#!/usr/bin/env node
// A stand-in for a person's browser, for a program that opens a sign-in
// URL with $BROWSER (as xdg-open does): `hydra-browser.mjs URL` signs in
// through the Hydra that startHydra started, in headless Chromium
// (signIn: "Sign in", then "Allow"), and exits 0 once the browser has been
// sent back to the client's redirect URI, writing that URL's page text to
// stderr; it exits 1 with the reason otherwise. It learns which Hydra
// from the environment startHydra's browserEnv() gives:
//
//   spawn(cmd, args, { env: { ...process.env, ...as.browserEnv(), BROWSER: hydraBrowser } })
import { launchBrowser } from "./browser.mjs";
import { signIn } from "./hydra.mjs";

const url = process.argv[2];
const publicURL = process.env.HYDRA_SIGNIN_PUBLIC_URL;
const consentURL = process.env.HYDRA_SIGNIN_CONSENT_URL;
if (!url || !publicURL || !consentURL) {
  process.stderr.write("usage: HYDRA_SIGNIN_PUBLIC_URL=… HYDRA_SIGNIN_CONSENT_URL=… hydra-browser.mjs URL\n");
  process.exit(2);
}

const browser = await launchBrowser();
try {
  const { url: landed, text } = await signIn(browser, url, { publicURL, consentApp: { url: consentURL } });
  const error = new URL(landed).searchParams.get("error");
  if (error) throw new Error(`the authorization server answered ${error}: ${new URL(landed).searchParams.get("error_description") ?? ""}`);
  process.stderr.write(`hydra-browser: signed in, sent to ${new URL(landed).origin}${new URL(landed).pathname}: ${text}\n`);
} catch (err) {
  process.stderr.write(`hydra-browser: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
