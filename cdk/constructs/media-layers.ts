import { RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { buildFfmpegLayer, buildSharpLayer, layerHashes, layerVersions } from '../../layers/build-layers.js';
import { layerCode } from './bundling.js';
import { LAMBDA_RUNTIME } from './lambda-runtime.js';

type LayerCode = { ffmpeg: lambda.Code; sharp: lambda.Code };

export interface MediaLayersProps {
  /** Replaces the built layer contents (tests pass tiny folders; bundling is skipped there anyway). */
  code?: LayerCode;
}

/** The layers built from npm packages, each keyed by its asset hash. */
function builtLayerCode(): LayerCode {
  const hashes = layerHashes();
  return {
    ffmpeg: layerCode((out) => buildFfmpegLayer(out), hashes.ffmpeg),
    sharp: layerCode((out) => buildSharpLayer(out), hashes.sharp),
  };
}

/**
 * The worker's layers for x86_64 Lambda: ffprobe and ffmpeg in /opt/bin (on PATH), and sharp with
 * libvips in /opt/nodejs/node_modules. Built locally from npm packages (layers/build-layers.ts),
 * without Docker. The asset hash covers the build code and each package's locked version and
 * integrity: an unchanged layer is neither rebuilt nor re-uploaded, a changed one always is.
 */
export class MediaLayers extends Construct {
  readonly ffmpeg: lambda.LayerVersion;
  readonly sharp: lambda.LayerVersion;

  constructor(scope: Construct, id: string, props: MediaLayersProps = {}) {
    super(scope, id);
    const versions = layerVersions();
    const code = props.code ?? builtLayerCode();
    const common = {
      compatibleRuntimes: [LAMBDA_RUNTIME],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.DESTROY,
    };
    this.ffmpeg = new lambda.LayerVersion(this, 'Ffmpeg', {
      ...common,
      description: `ffprobe + ffmpeg static builds in /opt/bin (${versions.ffmpeg})`,
      code: code.ffmpeg,
    });
    this.sharp = new lambda.LayerVersion(this, 'Sharp', {
      ...common,
      description: `sharp + libvips for linux-x64 glibc in /opt/nodejs/node_modules (${versions.sharp})`,
      code: code.sharp,
    });
  }
}
