/**
 * Whether a browser is there, and whether records get screenshots. Kept apart from the launch
 * code (lib/browser/browser.ts) so the preview function, which only decides, carries no browser code.
 */
import { accessSync, constants } from 'node:fs';
import type { Config } from '../config.js';

/** Set by the AWS browser worker: the unpacked binary and @sparticuz/chromium's own flags. */
let override: { executablePath?: string; args?: string[] } = {};
export function configureBrowser(o: { executablePath?: string; args?: string[] }): void {
  override = o;
}

export function browserExecutable(config: Pick<Config, 'browserPath'>): string {
  return override.executablePath ?? config.browserPath;
}

/** True when an executable browser is at the configured path. */
export function browserAvailable(config: Pick<Config, 'browserPath'>): boolean {
  try {
    accessSync(browserExecutable(config), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether records get a screenshot: on, off, or (unset) on where a browser exists. */
export function screenshotsEnabled(config: Pick<Config, 'screenshots' | 'browserPath'>): boolean {
  if (config.screenshots === 'on') return true;
  if (config.screenshots === 'off') return false;
  return browserAvailable(config);
}

/**
 * Whether jobs that need a browser (a render) can run: a browser here, or on AWS the browser
 * worker behind its queue.
 */
export function browserJobsAvailable(config: Pick<Config, 'browserPath' | 'browserQueueUrl'>): boolean {
  return config.browserQueueUrl !== '' || browserAvailable(config);
}

/** Extra flags for the launch (the AWS worker's @sparticuz/chromium flags). */
export function launchArgs(): string[] {
  return override.args ?? [];
}
