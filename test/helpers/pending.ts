/**
 * Whether a promise is still pending once everything already queued has run (its callbacks, and
 * the I/O that has come in: the check waits for setImmediate, after the poll phase).
 */
export async function stillPending(p: Promise<unknown>): Promise<boolean> {
  const settled = p.then(
    () => 'settled',
    () => 'settled',
  );
  return (await Promise.race([settled, new Promise((r) => setImmediate(() => r('pending')))])) === 'pending';
}
