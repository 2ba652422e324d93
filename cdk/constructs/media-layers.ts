import path from 'node:path';
import { AssetHashType, DockerImage, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { buildFfmpegLayer, buildSharpLayer, layerVersions } from '../../layers/build-layers.js';
import { PROJECT_ROOT } from './bundling.js';

export interface MediaLayersProps {
  /** Replaces the built layer contents (tests pass tiny folders; bundling is skipped there anyway). */
  code?: { ffmpeg: lambda.Code; sharp: lambda.Code };
}

/**
 * The worker's layers for x86_64 Lambda: ffprobe and ffmpeg in /opt/bin (on PATH), and sharp with
 * libvips in /opt/nodejs/node_modules. Built locally from npm packages (layers/build-layers.ts),
 * without Docker; the asset hash is the package versions, so an unchanged layer is not rebuilt.
 */
export class MediaLayers extends Construct {
  readonly ffmpeg: lambda.LayerVersion;
  readonly sharp: lambda.LayerVersion;

  constructor(scope: Construct, id: string, props: MediaLayersProps = {}) {
    super(scope, id);
    const versions = layerVersions();
    const local = (build: (out: string) => void, hash: string) =>
      lambda.Code.fromAsset(path.join(PROJECT_ROOT, 'layers'), {
        assetHashType: AssetHashType.CUSTOM,
        assetHash: hash,
        bundling: {
          // Never used: local bundling always succeeds or throws. CDK requires an image.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          local: { tryBundle: (outputDir: string) => { build(outputDir); return true; } },
        },
      });
    const common = {
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.DESTROY,
    };
    this.ffmpeg = new lambda.LayerVersion(this, 'Ffmpeg', {
      ...common,
      description: `ffprobe + ffmpeg static builds in /opt/bin (${versions.ffmpeg})`,
      code: props.code?.ffmpeg ?? local(buildFfmpegLayer, versions.ffmpeg),
    });
    this.sharp = new lambda.LayerVersion(this, 'Sharp', {
      ...common,
      description: `sharp + libvips for linux-x64 glibc in /opt/nodejs/node_modules (${versions.sharp})`,
      code: props.code?.sharp ?? local(buildSharpLayer, versions.sharp),
    });
  }
}
