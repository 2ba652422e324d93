import { RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { buildFfmpegLayer, buildSharpLayer, layerHashes, layerVersions } from '../../layers/build-layers.js';
import { layerCode } from './bundling.js';
import { LAMBDA_RUNTIME } from './lambda-runtime.js';
import { prebuilt } from './prebuilt.js';

type LayerCode = { ffmpeg: lambda.Code; sharp: lambda.Code };

export interface MediaLayersProps {
  /** Replaces the built layer contents (tests pass tiny folders; bundling is skipped there anyway). */
  code?: LayerCode;
}

/**
 * The layers built from npm packages, each keyed by its asset hash: from this repository's
 * node_modules, or (the construct package) from its installed dependencies under the hashes it was built with.
 */
function builtLayerCode(): LayerCode {
  const pre = prebuilt();
  const root = pre?.source;
  const hashes = pre ? { ffmpeg: pre.manifest.layers.ffmpeg.hash, sharp: pre.manifest.layers.sharp.hash } : layerHashes();
  return {
    ffmpeg: layerCode((out) => buildFfmpegLayer(out, root), hashes.ffmpeg),
    sharp: layerCode((out) => buildSharpLayer(out, root), hashes.sharp),
  };
}

function versions(): { ffmpeg: string; sharp: string } {
  const pre = prebuilt();
  return pre ? { ffmpeg: pre.manifest.layers.ffmpeg.versions, sharp: pre.manifest.layers.sharp.versions } : layerVersions();
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
    const v = versions();
    const code = props.code ?? builtLayerCode();
    const common = {
      compatibleRuntimes: [LAMBDA_RUNTIME],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.DESTROY,
    };
    this.ffmpeg = new lambda.LayerVersion(this, 'Ffmpeg', {
      ...common,
      description: `ffprobe + ffmpeg static builds in /opt/bin (${v.ffmpeg})`,
      code: code.ffmpeg,
    });
    this.sharp = new lambda.LayerVersion(this, 'Sharp', {
      ...common,
      description: `sharp + libvips for linux-x64 glibc in /opt/nodejs/node_modules (${v.sharp})`,
      code: code.sharp,
    });
  }
}
