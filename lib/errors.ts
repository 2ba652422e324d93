/**
 * Every error the service reports to a caller is a LinkPreviewError: an HTTP status, a
 * machine-readable errorCode and a human message. Anything else that escapes is a bug and
 * becomes a 500 INTERNAL_ERROR with the stack logged, never returned.
 */
export type ErrorDetails = string | Record<string, unknown>;

export class LinkPreviewError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly details?: ErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }

  /** The short category shown in the error body's `error` field. */
  get error(): string {
    return STATUS_NAMES[this.status] ?? 'Error';
  }
}

export const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export class BadRequestError extends LinkPreviewError {
  constructor(errorCode: string, message: string, details?: ErrorDetails) {
    super(400, errorCode, message, details);
  }
}

export class UnauthorizedError extends LinkPreviewError {
  constructor(message = 'A valid "Authorization: Bearer <key>" header is required.') {
    super(401, 'UNAUTHORIZED', message);
  }
}

/**
 * The link, or a redirect it leads to, is a URL the SSRF guard forbids on its face: its scheme,
 * port, IP literal or local name. A host name whose DNS answer is forbidden is not reported
 * here but as an upstream DNS_FAILURE, like a name that does not resolve (lib/fetch/safe-fetch.ts):
 * what the service's DNS says is never disclosed. Details name the URL, never a resolved address.
 */
export class LinkNotAllowedError extends LinkPreviewError {
  constructor(message: string, details?: ErrorDetails) {
    super(400, 'LINK_NOT_ALLOWED', message, details);
  }
}

export class NotAcceptableError extends LinkPreviewError {
  constructor(accept: string) {
    super(406, 'NOT_ACCEPTABLE', `None of the requested types (${accept}) can be produced; use application/json, text/plain or multipart/form-data.`);
  }
}

export class InternalError extends LinkPreviewError {
  constructor(cause?: unknown) {
    super(500, 'INTERNAL_ERROR', 'An unexpected error occurred. It has been logged with the request id.', undefined, { cause });
  }
}

/** The error body of the spec (APIErrorResponseBody). `status` always equals the HTTP status. */
export interface ErrorBody {
  ok: false;
  status: number;
  error?: string;
  errorCode?: string;
  message?: string;
  details?: ErrorDetails;
  requestId?: string;
}

export function toErrorBody(err: LinkPreviewError, requestId?: string): ErrorBody {
  const body: ErrorBody = { ok: false, status: err.status, error: err.error, errorCode: err.errorCode, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  if (requestId) body.requestId = requestId;
  return body;
}
