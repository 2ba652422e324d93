import fs from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { installedClosure, PROJECT_ROOT } from './bundling.js';

/** The packaged browser: @sparticuz/chromium ships a brotli-packed Chromium for Lambda (x86_64, Amazon Linux 2023) in npm. */
export const BROWSER_PACKAGE = '@sparticuz/chromium';

export function browserPackageVersion(root = PROJECT_ROOT): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', BROWSER_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'x';
  }
}

/** Copies @sparticuz/chromium and its dependencies into `outDir/nodejs/node_modules` (the layer's Node path). */
export function buildBrowserLayer(outDir: string, root = PROJECT_ROOT): void {
  const packages = installedClosure([BROWSER_PACKAGE], root);
  if (!packages.includes(BROWSER_PACKAGE)) throw new Error(`${BROWSER_PACKAGE} is not installed (npm ci installs it as a devDependency)`);
  for (const p of packages) {
    const to = path.join(outDir, 'nodejs', 'node_modules', p);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(path.join(root, 'node_modules', p), to, { recursive: true });
  }
}

export interface BrowserLayerProps {
  /** Replaces the built layer contents (tests). */
  code?: lambda.Code;
}

/**
 * The screenshot worker's browser layer: /opt/nodejs/node_modules/@sparticuz/chromium, which
 * unpacks Chromium (and its fonts and libraries) to /tmp on a container's first screenshot.
 * Built locally from node_modules, without Docker; the package version is the asset hash.
 */
export class BrowserLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  constructor(scope: Construct, id: string, props: BrowserLayerProps = {}) {
    super(scope, id);
    const version = browserPackageVersion();
    this.layer = new lambda.LayerVersion(this, 'Chromium', {
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.DESTROY,
      description: `headless Chromium for Lambda: ${BROWSER_PACKAGE} ${version} in /opt/nodejs/node_modules`,
      code:
        props.code ??
        lambda.Code.fromAsset(path.join(PROJECT_ROOT, 'layers'), {
          assetHashType: AssetHashType.CUSTOM,
          assetHash: `sparticuz-chromium-${version}`,
          bundling: {
            // Never used: local bundling always succeeds or throws. CDK requires an image.
            image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
            local: { tryBundle: (outputDir: string) => { buildBrowserLayer(outputDir); return true; } },
          },
        }),
    });
  }
}
