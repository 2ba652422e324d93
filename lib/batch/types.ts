/**
 * A batch of `POST /previews` (docs/batches.md): what is stored of it (BatchMeta, ItemFile), what
 * travels on its queues (ItemMessage, DeliveryMessage) and what the API answers of an item.
 */
import type { LinkRecord } from '../contract/link.js';
import type { PreviewRequest } from '../contract/request.js';

/** At most this many links in one `POST /previews`. */
export const MAX_BATCH_LINKS = 100;

/** `queued`: not started; `running`: being previewed; `done`: its record is there (`ok` may be false); `failed`: no record (refused at submit, or the preview failed). */
export type ItemState = 'queued' | 'running' | 'done' | 'failed';

/** Why an item has no record: the `errorCode` and message `POST /` would have answered. */
export interface ItemError {
  errorCode: string;
  message: string;
}

/** One link of a batch as submitted: valid (its request) or refused (its error). */
export interface ItemSpec {
  /** `<batchId>.<index>`: the item's id, and its record's `requestId`. */
  id: string;
  index: number;
  /** The link as given (a refused one too, cut to 4096 characters). */
  link: string;
  request?: PreviewRequest;
  error?: ItemError;
}

/** `batches/<batchId>/batch.json`: written once, at submit. */
export interface BatchMeta {
  id: string;
  /** Whose batch it is: the id of the key that submitted it (only that key can read it). */
  keyId: string;
  createdAt: string;
  expiresAt: string;
  callbackUrl?: string;
  items: ItemSpec[];
}

/** What became of a webhook: `delivered` (2xx), `gone` (410: stopped), `pending` (to be tried again), `dead` (every try failed). */
export interface DeliveryState {
  state: 'pending' | 'delivered' | 'gone' | 'dead';
  attempts: number;
  /** The receiver's last status, or the last failure's code (TIMEOUT, CONNECTION_REFUSED, …). */
  lastStatus?: number;
  lastError?: string;
  at: string;
}

/** `batches/<batchId>/items/<index>.json`: an item once it has started. */
export interface ItemFile {
  state: 'running' | 'done' | 'failed';
  startedAt: string;
  finishedAt?: string;
  record?: LinkRecord;
  error?: ItemError;
  delivery?: DeliveryState;
}

/** `batches/<batchId>/completed.json`: once every item has finished. */
export interface CompletedFile {
  completedAt: string;
  delivery?: DeliveryState;
}

/** The item queue's message: one link of a batch to preview. */
export interface ItemMessage {
  batchId: string;
  index: number;
}

/** The delivery queue's message: an item's webhook, or the batch's (`index: 'batch'`). */
export interface DeliveryMessage {
  batchId: string;
  index: number | 'batch';
}

/** An item as `POST /previews` and `GET /previews/{batchId}` answer it. */
export interface ItemView {
  id: string;
  index: number;
  link: string;
  state: ItemState;
  errorCode?: string;
  message?: string;
  record?: LinkRecord;
  delivery?: DeliveryState;
}
