/**
 * The audio job: an AUDIO link becomes the spec's `audio` object.
 *  - bytes: a prefix of at most LINKPREVIEW_MEDIA_PROBE_BYTES (Range, or a bounded download);
 *  - ffprobe for the codec, sample rate, channels and bit rate; music-metadata for the tags
 *    (title, artist, album, date), the embedded picture, and the duration of a prefix (it is told
 *    the total size, so CBR/Xing files still give the whole duration);
 *  - `creationDate`: the tagged date, else the Last-Modified header, else the time of fetching;
 *  - `waveform`: about 100 peaks (0..1 of full scale) of the decoded audio, over at most
 *    LINKPREVIEW_MEDIA_MAX_DURATION_S seconds of the downloaded part;
 *  - `albumArtwork`: the embedded picture, hosted as an ImageSet.
 */
import type { Audio } from '../contract/link.js';
import { ExpectedFailure } from '../errors.js';
import type { JobContext } from '../jobs/context.js';
import type { AudioJobResult, MediaJobInput } from '../jobs/kinds.js';
import { type AudioTags, computeWaveform, readAudioTags, tagDate } from './audio.js';
import { MediaRejected } from './failures.js';
import { hostImageBytes } from './hosted-bytes.js';
import { mediaBytes, withTempFile } from './media-fetch.js';
import { type ProbeResult, probeFile, sniffMedia, tag } from './probe.js';

export async function runAudioJob(input: MediaJobInput, ctx: JobContext): Promise<AudioJobResult> {
  try {
    return { audio: await describeAudio(input, ctx) };
  } catch (err) {
    if (err instanceof ExpectedFailure) return { reason: err.message };
    throw err;
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

async function describeAudio(input: MediaJobInput, ctx: JobContext): Promise<Audio> {
  const cfg = ctx.config;
  const media = await mediaBytes(input, ctx, Math.min(cfg.mediaProbeBytes, cfg.maxMediaBytes));
  const size = media.totalSize ?? media.bytes.length;
  const sniffed = await sniffMedia(media.bytes);
  const format = sniffed?.ext;
  const tags: AudioTags = await readAudioTags(media.bytes, { ext: sniffed?.ext, totalSize: size }).catch(() => ({}));

  return withTempFile(media.bytes, 'input.bin', async (file) => {
    const tool = { timeoutMs: cfg.mediaDecodeTimeoutMs, signal: ctx.signal, ffmpegPath: cfg.ffmpegPath, ffprobePath: cfg.ffprobePath };
    let probe: ProbeResult | undefined;
    try {
      probe = await probeFile(file, tool);
    } catch (err) {
      if (!(err instanceof ExpectedFailure)) throw err;
    }
    const audioCodec = probe?.audio?.codec ?? (tags.codec ? tags.codec.toLowerCase() : undefined);
    if (audioCodec === undefined) throw new MediaRejected('no audio stream found');

    const duration = (media.complete ? (probe?.duration ?? tags.duration) : prefixDuration(tags, probe, media.bytes.length, size)) ?? 0;
    const bitRate = probe?.audio?.bitRate ?? (media.complete ? probe?.bitRate : undefined) ?? tags.bitRate ?? (duration > 0 ? (size * 8) / duration : 0);
    const audio: Audio = {
      duration: round3(duration),
      creationDate: creationDate(tags, probe, media.lastModified, input.fetchedAt),
      size,
      bitRate: Math.round(bitRate),
      audioCodec,
    };
    const fmt = format ?? probe?.formatName.split(',')[0] ?? tags.container?.toLowerCase();
    if (fmt) audio.format = fmt;
    const title = tags.title ?? (probe && tag(probe.tags, 'title'));
    if (title) audio.title = title;
    const artist = tags.artist ?? (probe && (tag(probe.tags, 'artist') ?? tag(probe.tags, 'album_artist')));
    if (artist) audio.artist = artist;
    const album = tags.album ?? (probe && tag(probe.tags, 'album'));
    if (album) audio.album = album;
    const sampleRate = probe?.audio?.sampleRate ?? tags.sampleRate;
    if (sampleRate) audio.sampleRate = sampleRate;
    const channels = probe?.audio?.channels ?? tags.channels;
    if (channels) audio.channels = channels;

    const [waveform, artwork] = await Promise.all([
      probe?.audio
        ? computeWaveform(file, { ...tool, maxSeconds: cfg.mediaMaxDurationSeconds }).catch((err: unknown) => {
            if (err instanceof ExpectedFailure) return undefined;
            throw err;
          })
        : undefined,
      tags.picture ? hostImageBytes(tags.picture.data, ctx) : undefined,
    ]);
    if (waveform) audio.waveform = waveform;
    if (artwork) audio.albumArtwork = artwork;
    return audio;
  });
}

/**
 * The duration of a file of which only a prefix was read. Both readers can only under-estimate
 * (a header says the whole; a header-less stream is measured on the prefix), so the larger wins;
 * when that equals what the prefix holds at the stream's bit rate, the prefix was measured, and
 * the total size at that bit rate is the better figure (PCM WAV, CBR MP3 without a Xing header).
 */
function prefixDuration(tags: AudioTags, probe: ProbeResult | undefined, prefixBytes: number, totalBytes: number): number | undefined {
  const measured = Math.max(tags.duration ?? 0, probe?.duration ?? 0);
  const bitRate = probe?.audio?.bitRate ?? tags.bitRate;
  if (bitRate && measured && Math.abs((measured * bitRate) / 8 - prefixBytes) < 0.1 * prefixBytes) return (totalBytes * 8) / bitRate;
  return measured || undefined;
}

/** The tagged date, else the Last-Modified header, else the time of fetching. */
function creationDate(tags: AudioTags, probe: ProbeResult | undefined, lastModified: string | undefined, fetchedAt: string): string {
  const tagged = tags.date ?? (probe && (tagDate(tag(probe.tags, 'creation_time')) ?? tagDate(tag(probe.tags, 'date'))));
  if (tagged) return tagged;
  if (lastModified) {
    const d = new Date(lastModified);
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  return fetchedAt;
}
