/**
 * How hosted assets are described and served: the names of the metadata they are stored with,
 * and their Content-Security-Policy. No imports: the jobs, the local server and the CDK stack read it.
 */

/**
 * The metadata names assets are stored with (PutOptions.metadata; S3 user metadata): an image's
 * manifest on its `original`, a rendition's size, a page.html's images, and a page version's
 * `versions: stand-in` when it is what could be made of versions that could not be built
 * (lib/page/page-versions.ts). The CDN keeps them from viewers (cdk/constructs/asset-store.ts);
 * the local server never sends them.
 */
export const ASSET_METADATA = { manifest: 'manifest', size: 'size', images: 'images', versions: 'versions' } as const;

/**
 * The Content-Security-Policy of every served asset (the local server's /assets/, CloudFront's
 * response headers policy): a hosted page version runs nothing, loads nothing but its own
 * origin's images, and is sandboxed.
 */
export const ASSET_CONTENT_SECURITY_POLICY = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

/**
 * The page versions' origin on AWS (functions/version-origin.ts; cdk/constructs/asset-store.ts):
 * the longest it holds a request for a version not stored yet (`holdMs`: past the latest a job
 * can end, as the request budget is at most 28 s and a version may be missing 2 s past its
 * job's deadline), and its timeout and CloudFront's wait for its answer (`timeoutS`: the hold and
 * a margin; within the origin response timeout CloudFront allows without a quota increase).
 */
export const VERSION_ORIGIN = { holdMs: 40_000, timeoutS: 45 } as const;
