/**
 * Expected failures and the errors the service reports.
 *
 * Every failure the code expects (an upstream that does not answer, an input that cannot be read,
 * a link the guard refuses) is an ExpectedFailure; anything else that is thrown is a bug. Whether
 * a failure may pass on a later try is its `transient` flag, set where it is raised: callers test
 * the class and the flag, never the message.
 *
 * Every error the service reports to a caller is a LinkPreviewError: an HTTP status, a
 * machine-readable errorCode and a human message. Anything else that escapes is a bug and
 * becomes a 500 INTERNAL_ERROR with the stack logged, never returned.
 */
export type ErrorDetails = string | Record<string, unknown>;

export interface FailureOptions {
  /** The failure may pass on a later try: a timeout, a 5xx or 429 answer, an abort. */
  transient?: boolean;
  cause?: unknown;
}

export class ExpectedFailure extends Error {
  readonly transient: boolean;

  constructor(message: string, options: FailureOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.transient = options.transient ?? false;
  }
}

/**
 * A value the code's own flow guarantees (set by an earlier step, or checked just before): the
 * value, typed as present. Its absence is a bug, thrown as a plain Error that names what is missing.
 */
export function required<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`${what} is missing`);
  return value;
}

/** An upstream HTTP status that may change on a later try: any 5xx, and 429 Too Many Requests. */
export function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

export class LinkPreviewError extends ExpectedFailure {
  /** What the error body's `details` says (the field, the URL ...). */
  readonly details?: ErrorDetails;

  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    options: FailureOptions & { details?: ErrorDetails } = {},
  ) {
    const { details, ...failure } = options;
    super(message, failure);
    this.details = details;
  }

  /** The short category shown in the error body's `error` field. */
  get error(): string {
    return STATUS_NAMES[this.status] ?? 'Error';
  }
}

const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/**
 * A 5xx status that reports a fault of the service (a bug: 500), not one of its deliberate answers:
 * 501 Not Implemented (a format GET /oembed does not give) and 503 (overload, a failed deep status
 * check). Faults are logged as errors and counted for the preview-errors alarm.
 */
export function isServerFault(status: number): boolean {
  return status >= 500 && status !== 501 && status !== 503;
}

export class BadRequestError extends LinkPreviewError {
  constructor(errorCode: string, message: string, details?: ErrorDetails) {
    super(400, errorCode, message, { details });
  }
}

export class UnauthorizedError extends LinkPreviewError {
  constructor(message = 'A valid "Authorization: Bearer <key>" header is required.') {
    super(401, 'UNAUTHORIZED', message);
  }
}

/** What the SSRF guard refused: why, and at connect time the host name and the address it resolved to. */
export interface GuardRefusal {
  reason: string;
  hostname?: string;
  address?: string;
  /** The host rule (`pattern`) whose `deny` refused the address connected to (lib/fetch/denied-addresses.ts). */
  hostRule?: string;
}

/**
 * The SSRF guard's refusal (lib/fetch/address-guard.ts), the one error type for it.
 *
 * A URL forbidden on its face (scheme, port, IP literal, local name) is reported to the caller as
 * it is: the link, or a redirect it leads to, is not allowed; details name the URL, never a
 * resolved address. A host name whose DNS answer is forbidden is refused at connect time (the
 * refusal then carries `hostname` and `address`, for the log) and reported as an upstream
 * DNS_FAILURE whose cause it is, like a name that does not resolve (lib/fetch/hop-request.ts):
 * what the service's DNS says is never disclosed.
 */
export class LinkNotAllowedError extends LinkPreviewError {
  /** The errno-style code a socket's lookup reports it with. */
  readonly code = 'ELINKNOTALLOWED';
  readonly reason?: string;
  readonly hostname?: string;
  readonly address?: string;
  readonly hostRule?: string;

  constructor(message: string, details?: ErrorDetails, refusal?: GuardRefusal) {
    super(400, 'LINK_NOT_ALLOWED', message, { details });
    this.reason = refusal?.reason;
    this.hostname = refusal?.hostname;
    this.address = refusal?.address;
    this.hostRule = refusal?.hostRule;
  }
}

/** True when the SSRF guard refused `err`'s fetch: on its face, or at connect time (the DNS_FAILURE it caused). */
export function refusedByGuard(err: unknown): boolean {
  return err instanceof LinkNotAllowedError || (err instanceof Error && err.cause instanceof LinkNotAllowedError);
}

export class NotAcceptableError extends LinkPreviewError {
  constructor(accept: string) {
    super(406, 'NOT_ACCEPTABLE', `None of the requested types (${accept}) can be produced; use application/json, text/plain or multipart/form-data.`);
  }
}

export class InternalError extends LinkPreviewError {
  constructor(cause?: unknown) {
    super(500, 'INTERNAL_ERROR', 'An unexpected error occurred. It has been logged with the request id.', { cause });
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
