/** The ffmpeg/ffprobe installer packages ship no types: each exports the binary's path and version. */
declare module '@ffmpeg-installer/ffmpeg' {
  export const path: string;
  export const version: string;
  export const url: string;
}
declare module '@ffprobe-installer/ffprobe' {
  export const path: string;
  export const version: string;
  export const url: string;
}
