/**
 * The video job: a VIDEO link becomes the spec's `video` object.
 *  - bytes: a prefix of at most LINKPREVIEW_MEDIA_PROBE_BYTES (Range, or a bounded download); an
 *    MP4 index after the media data is read from the end with a second Range request (mp4-tail.ts);
 *  - ffprobe: duration, codecs, size in pixels, frame rate, bit rate, tags;
 *  - ffmpeg: the poster (10% in) and `videoSnapshots` frames spread over the part that was
 *    downloaded (and at most LINKPREVIEW_MEDIA_MAX_DURATION_S in), each hosted as an ImageSet;
 *    a video whose frames exceed LINKPREVIEW_MAX_IMAGE_PIXELS is not decoded (no frames, no clip);
 *  - `video.thumbnail`: a 3-second, 320-pixel, silent H.264 clip starting at the poster, stored
 *    as an asset; the poster frame when the clip cannot be made.
 * A file that cannot be probed is a `{reason}` result; the record keeps `type` VIDEO without it.
 */
import type { ImageSet, Video } from '../contract/link.js';
import { ExpectedFailure } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import type { MediaJobInput, VideoJobResult } from '../jobs/kinds.js';
import { videoDecodeMb } from '../jobs/memory.js';
import { IMMUTABLE_CACHE } from '../ports.js';
import { assetKeyOf } from '../storage-keys.js';
import { MediaRejected } from './failures.js';
import { type FrameOptions, frameTimestamps, grabFrames, makeClip } from './frames.js';
import { hostImageBytes } from './hosted-bytes.js';
import { mediaBytes, withTempFile } from './media-fetch.js';
import { fillIndexTail, indexOffsetBeyond } from './mp4-tail.js';
import { containerName, probeFile, tag } from './probe.js';

export async function runVideoJob(input: MediaJobInput, ctx: JobContext): Promise<VideoJobResult> {
  try {
    return { video: await describeVideo(input, ctx) };
  } catch (err) {
    if (err instanceof ExpectedFailure) return { reason: err.message };
    throw err;
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

async function describeVideo(input: MediaJobInput, ctx: JobContext): Promise<Video> {
  const cfg = ctx.config;
  const media = await mediaBytes(input, ctx, Math.min(cfg.mediaProbeBytes, cfg.maxMediaBytes));
  return withTempFile(media.bytes, 'input.bin', async (file, dir) => {
    const tool = { timeoutMs: cfg.mediaDecodeTimeoutMs, signal: ctx.signal, dir, ffmpegPath: cfg.ffmpegPath, ffprobePath: cfg.ffprobePath };
    // An MP4 whose index is after the media data (no faststart): its index from the end of the file.
    const totalSize = !media.complete && media.ranged ? media.totalSize : undefined;
    const indexAt = totalSize ? indexOffsetBeyond(media.bytes, totalSize) : undefined;
    if (totalSize && indexAt !== undefined) {
      const tail = { url: input.url, offset: indexAt, total: totalSize, maxBytes: Math.min(cfg.mediaProbeBytes, cfg.maxMediaBytes) };
      await fillIndexTail(file, tail, ctx).catch((err: unknown) => {
        if (err instanceof ExpectedFailure) return false;
        throw err;
      });
    }
    const probe = await probeFile(file, tool);
    if (!probe.video) throw new MediaRejected('no video stream found');
    const size = media.totalSize ?? media.bytes.length;
    const duration = probe.duration ?? 0;
    // Frames can only come from the bytes we have, and from at most the decode cap.
    const available = media.complete || !size ? duration : duration * Math.min(1, media.bytes.length / size);
    const span = Math.min(available, cfg.mediaMaxDurationSeconds);
    const { poster, snapshots } = frameTimestamps(span, span > 0 ? cfg.videoSnapshots : 0);
    // A frame larger than the image pixel cap could not be hosted: it is not decoded at all.
    const pixels = (probe.video.width ?? 0) * (probe.video.height ?? 0);
    const decodable = pixels <= cfg.maxImagePixels;
    const decode = { ...tool, maxPixels: cfg.maxImagePixels };

    // The decodes (frames, then the clip) under one memory hold, sized from the probed frame size.
    let frames: (Buffer | undefined)[] = [];
    let thumbnail: { width: number; height: number; url: string } | undefined;
    if (decodable) {
      const release = await ctx.memory?.hold(videoDecodeMb(pixels || cfg.maxImagePixels), ctx.signal);
      try {
        frames = await grabFrames(file, [poster, ...snapshots], decode);
        thumbnail = await clipAsset({ file, start: poster, video: probe.video, tool: decode }, ctx).catch((err: unknown) => {
          if (err instanceof ExpectedFailure) return undefined;
          throw err;
        });
      } finally {
        release?.();
      }
    }

    // One frame at a time: each render holds its own memory (a 50 MP frame takes hundreds of MB).
    const images: (ImageSet | undefined)[] = [];
    for (const jpeg of frames) images.push(jpeg ? await hostImageBytes(jpeg, ctx) : undefined);
    const posterImage = images[0];
    const snapshotImages = snapshots
      .map((timestamp, i) => ({ timestamp, image: images[i + 1] }))
      .filter((s): s is { timestamp: number; image: ImageSet } => !!s.image);

    const bitRate = media.complete ? probe.bitRate : undefined;
    const video: Video = {
      duration: round3(duration),
      size,
      frameRate: probe.video.frameRate ?? 0,
      videoCodec: probe.video.codec,
      hasAudio: !!probe.audio,
    };
    if (input.name) video.name = input.name;
    const title = tag(probe.tags, 'title');
    if (title) video.title = title;
    const author = tag(probe.tags, 'artist') ?? tag(probe.tags, 'author') ?? tag(probe.tags, 'album_artist') ?? tag(probe.tags, 'composer');
    if (author) video.author = author;
    if (probe.video.width) video.width = probe.video.width;
    if (probe.video.height) video.height = probe.video.height;
    const format = await containerName(media.bytes, probe.formatName);
    if (format) video.format = format;
    const rate = bitRate ?? (duration > 0 ? Math.round((size * 8) / duration) : undefined);
    if (rate) video.bitRate = Math.round(rate);
    if (posterImage) video.image = posterImage;
    if (snapshotImages.length) video.snapshots = snapshotImages;

    if (thumbnail) video.video = { thumbnail };
    else if (posterImage) video.video = { thumbnail: { ...posterImage.medium } };
    return video;
  });
}

/** The preview clip to make: from the file at `start` (s), of a video stream of this size, with these tools. */
interface ClipRequest {
  file: string;
  start: number;
  video: { width?: number; height?: number };
  tool: FrameOptions;
}

/** The preview clip, stored as an asset; undefined when the stream's size is unknown or no clip could be made. */
async function clipAsset({ file, start, video, tool }: ClipRequest, ctx: JobContext): Promise<{ width: number; height: number; url: string } | undefined> {
  if (!video.width || !video.height) return undefined;
  const clip = await makeClip(file, start, { width: video.width, height: video.height }, tool);
  if (!clip) return undefined;
  const key = assetKeyOf(clip.mp4, 'preview.mp4');
  if (!(await ctx.blobs.has(key))) await ctx.blobs.put(key, clip.mp4, { contentType: 'video/mp4', cacheControl: IMMUTABLE_CACHE });
  return { width: clip.width, height: clip.height, url: ctx.blobs.publicUrl(key) };
}
