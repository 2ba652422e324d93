/** The Link record and every object of the spec (../shared/spec/link-preview-spec.md), as types. */

export const LINK_TYPES = [
  'UNKNOWN', 'IMAGE', 'VIDEO', 'AUDIO', 'DOCUMENT', 'TEXT', 'PAGE',
  'VIDEOHOST_USER', 'MICROBLOG_USER', 'MICROBLOG_POST', 'PHOTOSHARE_USER', 'PHOTOSHARE_POST',
  'VIDEOHOST_VIDEO', 'RETAILER_PRODUCT', 'MARKETPLACE_PRODUCT', 'FORUM_USER', 'FORUM_POST',
  'FORUM_COMMUNITY', 'CLIPS_USER', 'CLIPS_VIDEO', 'CODEHOST_REPOSITORY',
] as const;
export type LinkType = (typeof LINK_TYPES)[number];

export interface ImageAsset { width: number; height: number; url: string }
export interface ImageSet { thumbnail: ImageAsset; medium: ImageAsset; large: ImageAsset; original: ImageAsset }
export interface MediaImage extends ImageSet {
  width: number; height: number; size: number; format: string; hasAlphaChannel: boolean;
}
export interface VideoAsset { width: number; height: number; url: string }
export type Visibility = 'PUBLIC' | 'PRIVATE';

export interface Icon { width: number; height: number; backgroundColor?: string; url?: string }

export interface Video {
  name?: string; title?: string; duration: number; width?: number; height?: number; format?: string;
  size: number; bitRate?: number; frameRate: number; videoCodec: string; hasAudio: boolean; author?: string;
  image?: ImageSet; video?: { thumbnail: VideoAsset }; snapshots?: { timestamp: number; image: ImageSet }[];
}
export interface Audio {
  duration: number; creationDate: string; size: number; bitRate: number; audioCodec: string; format?: string;
  title?: string; artist?: string; album?: string; sampleRate?: number; channels?: number;
  waveform?: number[]; albumArtwork?: ImageSet;
}
export interface DocumentInfo {
  title: string; pageCount: number; isEncrypted: boolean; type?: string; description?: string;
  estimatedReadingTime?: number; rawTextUrl?: string; image?: ImageSet;
  pages?: { pageNumber: number; screenshot?: ImageSet }[]; author?: string; lastModified?: string; language?: string;
}
export interface TextInfo { size?: number; estimatedReadingTime?: number; rawTextUrl?: string; image?: ImageSet }
export interface PageInfo {
  estimatedReadingTimeInMinutes?: number; screenshot?: ImageSet; htmlUrl?: string; markdownUrl?: string; rawTextUrl?: string;
}

export interface VideohostUser {
  id: number; username: string; name?: string; description?: string; externalId?: string; url?: string;
  avatar?: ImageSet; banner?: ImageSet; subscribersCount?: number; videosCount?: number; viewsCount?: number;
  joinedAt?: string; visibility?: Visibility; isFamilySafe?: boolean; verified?: boolean;
}
export interface VideohostVideo {
  id: number; videoId: string; user?: VideohostUser; publishedAt?: string; title?: string; description?: string;
  duration?: number; viewsCount?: number; likesCount?: number; dislikesCount?: number; rating?: number;
  commentsCount?: number; thumbnail?: ImageSet;
}
export interface MicroblogUser {
  id: number; username?: string; name?: string; bio?: string; url?: string; location?: string;
  avatar?: ImageSet; cover?: ImageSet; verified?: boolean; protected?: boolean; sensitive?: boolean;
  followersCount?: number; followingCount?: number; postsCount?: number; joinedAt?: string;
}
export interface MicroblogPost {
  id: number; createdAt?: string; updatedAt?: string; publishedAt?: string; user?: MicroblogUser; text?: string;
  media?: (Video | MediaImage)[]; likesCount?: number; commentsCount?: number; viewsCount?: number;
  bookmarksCount?: number; repostsCount?: number; quotesCount?: number;
}
export interface PhotoshareUser {
  id: number; username: string; verified: boolean; name?: string; bio?: string; url?: string; avatar?: ImageSet;
  followersCount?: number; followingCount?: number; postsCount?: number; visibility?: Visibility;
}
export interface PhotosharePost {
  id: number; publishedAt: string; user?: PhotoshareUser; text?: string; media?: (MediaImage | Video)[];
  likesCount?: number; commentsCount?: number;
}
export interface RetailerProduct {
  productId: string; title?: string; description?: string; currency?: string; price?: number; rating?: number;
  reviewCount?: number; features?: string[]; media?: MediaImage[];
}
export type MarketplaceProduct = Omit<RetailerProduct, 'features'>;
export interface ClipsUser {
  id?: number; username?: string; name?: string; avatar?: ImageSet; bio?: string; url?: string;
  followersCount?: number; followingCount?: number; likesCount?: number; visibility?: Visibility; verified?: boolean;
}
export interface ClipsVideo {
  id?: number; user?: ClipsUser; publishedAt?: string; text?: string; media?: MediaImage[];
  likesCount?: number; commentsCount?: number; playsCount?: number; sharesCount?: number;
}
export interface ForumUser {
  id?: number; username?: string; name?: string; bio?: string; flattenedAvatar?: ImageSet; avatar?: ImageSet;
  avatarBackground?: ImageSet; banner?: ImageSet; karma?: number; postKarma?: number; commentKarma?: number; joinedAt?: string;
}
export interface ForumCommunity {
  id?: number; name?: string; title?: string; description?: string; type?: string; subscribersCount?: number;
  activeUsersCount?: number; createdDate?: string; nsfw?: boolean; banner?: ImageSet; avatar?: ImageSet;
}
export interface ForumPost {
  id?: number; xId?: string; createdAt?: string; updatedAt?: string; publishedAt?: string; user?: ForumUser;
  community?: ForumCommunity; text?: string; likesCount?: number; commentsCount?: number;
  type?: 'IMAGE' | 'VIDEO' | 'TEXT' | 'LINK' | 'GALLERY'; media?: (Video | MediaImage)[];
}
export interface CodehostRepository {
  id?: number; name?: string; owner?: { id: number; username: string }; description?: string;
  starsCount?: number; contributorsCount?: number; watchersCount?: number; commitsCount?: number;
  forksCount?: number; issuesCount?: number; pullRequestsCount?: number;
  languages?: { name: string; color: string; percentage: number }[]; topics?: string[]; lastCommitDate?: string;
}

export interface LinkRecord {
  id: number;
  ok: boolean;
  requestId?: string;
  updatedAt: string;
  url: string;
  domain: string;
  type: LinkType;
  status: number;
  size?: number;
  redirected: boolean;
  redirectionUrl?: string;
  redirectionCount?: number;
  redirectionTrail?: string[];
  title?: string;
  description?: string;
  language?: string;
  icon?: Icon;
  image?: ImageSet;
  video?: Video;
  audio?: Audio;
  document?: DocumentInfo;
  text?: TextInfo;
  page?: PageInfo;
  videohostVideo?: VideohostVideo;
  videohostUser?: VideohostUser;
  microblogUser?: MicroblogUser;
  microblogPost?: MicroblogPost;
  photoshareUser?: PhotoshareUser;
  photosharePost?: PhotosharePost;
  retailerProduct?: RetailerProduct;
  marketplaceProduct?: MarketplaceProduct;
  clipsUser?: ClipsUser;
  clipsVideo?: ClipsVideo;
  forumUser?: ForumUser;
  forumCommunity?: ForumCommunity;
  forumPost?: ForumPost;
  codehostRepository?: CodehostRepository;
}
