import path from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { layerCode, PROJECT_ROOT } from './bundling.js';
import { LAMBDA_RUNTIME } from './lambda-runtime.js';
import { closureFingerprint, fingerprint, type PackageRoot, packageClosure, shipPackages } from './package-closure.js';
import { prebuilt } from './prebuilt.js';

/**
 * The packaged browser: @sparticuz/chromium ships a brotli-packed Chromium for Lambda (x86_64,
 * Amazon Linux 2023) in npm. Its Chromium major must be the one playwright-core (beside the
 * browser worker's bundle) was released for: @sparticuz/chromium 153 with playwright-core 1.63
 * (Chromium 153). test/cdk/layers.test.ts checks the pair.
 */
export const BROWSER_PACKAGE = '@sparticuz/chromium';

export function browserPackageVersion(root: PackageRoot = PROJECT_ROOT): string {
  return packageClosure([BROWSER_PACKAGE], root).find((p) => p.name === BROWSER_PACKAGE)?.version ?? 'x';
}

/** Copies @sparticuz/chromium and its dependencies into `outDir/nodejs/node_modules` (the layer's Node path). */
export function buildBrowserLayer(outDir: string, root: PackageRoot = PROJECT_ROOT): void {
  shipPackages([BROWSER_PACKAGE], root, path.join(outDir, 'nodejs'));
}

/** The layer's asset hash: this build code plus the exact packages it ships. */
export function browserLayerHash(root = PROJECT_ROOT): string {
  return fingerprint([__filename, path.join(__dirname, 'package-closure.ts')], ['chromium', closureFingerprint(packageClosure([BROWSER_PACKAGE], root))]);
}

export interface BrowserLayerProps {
  /** Replaces the built layer contents (tests). */
  code?: lambda.Code;
}

/**
 * The browser worker's layer: /opt/nodejs/node_modules/@sparticuz/chromium, which unpacks
 * Chromium (and its fonts and libraries) to /tmp on a container's first job.
 * Built locally from node_modules, without Docker.
 */
export class BrowserLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  constructor(scope: Construct, id: string, props: BrowserLayerProps = {}) {
    super(scope, id);
    // From the construct package: its installed dependency, under the hash it was built with.
    const pre = prebuilt();
    const version = pre ? pre.manifest.layers.chromium.versions : browserPackageVersion();
    this.layer = new lambda.LayerVersion(this, 'Chromium', {
      compatibleRuntimes: [LAMBDA_RUNTIME],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.DESTROY,
      description: `headless Chromium for Lambda: ${BROWSER_PACKAGE} ${version} in /opt/nodejs/node_modules`,
      code: props.code ?? layerCode((out) => buildBrowserLayer(out, pre?.source), pre ? pre.manifest.layers.chromium.hash : browserLayerHash()),
    });
  }
}
