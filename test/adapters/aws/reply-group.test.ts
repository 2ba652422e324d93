/** ReplyGroups: a request's replies in one worker invocation, held until the last, never past a deadline less the margin (clock and timers injected). */
import { HOLD_MARGIN_MS, ReplyGroups } from '../../../lib/adapters/aws/reply-group';

const Q = 'https://sqs.test/000000000000/linklens-reply-a';

function setup() {
  let clock = 1_000_000;
  const sent: { queueUrl: string; body: string }[] = [];
  const groups = new ReplyGroups(
    {
      send: async (queueUrl: string, body: string) => {
        sent.push({ queueUrl, body });
      },
    },
    () => clock,
  );
  return { groups, sent, advance: (ms: number) => (clock += ms), now: () => clock };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('the replies of a request wait for the last of its jobs, then go out in one turn', async () => {
  const { groups, sent, now } = setup();
  const [a, b, c] = ['a', 'b', 'c'].map(() => groups.join(Q, 'req-1'));
  const other = groups.join(Q, 'req-2');
  const far = now() + 60_000;
  const pa = a.reply('A', 'a', far);
  const pb = b.reply('B', 'b', far);
  await jest.advanceTimersByTimeAsync(10_000);
  expect(sent).toEqual([]);
  // Another request's reply is not held by these.
  await other.reply('O', 'o', far);
  expect(sent.map((m) => m.body)).toEqual(['O']);
  await Promise.all([pa, pb, c.reply('C', 'c', far)]);
  expect(sent.map((m) => m.body)).toEqual(['O', 'A', 'B', 'C']);
});

test('a job that ends without a reply leaves: its siblings go without it; leaving or replying twice changes nothing', async () => {
  const { groups, sent, now } = setup();
  const a = groups.join(Q, 'req');
  const b = groups.join(Q, 'req');
  const pa = a.reply('A', 'a', now() + 60_000);
  expect(sent).toEqual([]);
  b.leave();
  b.leave();
  await pa;
  expect(sent.map((m) => m.body)).toEqual(['A']);
  await expect(a.reply('A again', 'a', now() + 60_000)).rejects.toThrow(/already/);
  expect(sent).toHaveLength(1);
});

test('a held reply goes out at its deadline less the hold margin while a sibling still runs', async () => {
  const { groups, sent, now, advance } = setup();
  const a = groups.join(Q, 'req');
  const slow = groups.join(Q, 'req');
  const pa = a.reply('A', 'a', now() + HOLD_MARGIN_MS + 500);
  advance(499);
  await jest.advanceTimersByTimeAsync(499);
  expect(sent).toEqual([]);
  advance(1);
  await jest.advanceTimersByTimeAsync(1);
  await pa;
  expect(sent.map((m) => m.body)).toEqual(['A']);
  // The sibling, later, goes at once: its deadline is within the margin by then.
  await slow.reply('S', 's', now() + HOLD_MARGIN_MS);
  expect(sent.map((m) => m.body)).toEqual(['A', 'S']);
});

test('a reply whose deadline is already within the margin, or whose request has no other job here, goes at once', async () => {
  const { groups, sent, now } = setup();
  const a = groups.join(Q, 'req');
  groups.join(Q, 'req'); // a sibling still running
  await a.reply('A', 'a', now() + HOLD_MARGIN_MS - 1);
  await groups.join(Q, 'lone').reply('L', 'l', now() + 60_000);
  expect(sent.map((m) => m.body)).toEqual(['A', 'L']);
});

test("an extra (the page's content, a screenshot) holds no card reply: ready before the card's, it goes with them; after them, on its own", async () => {
  const { groups, sent, now } = setup();
  const far = now() + 60_000;
  const [image, icon] = ['image', 'icon'].map(() => groups.join(Q, 'req-1'));
  const content = groups.join(Q, 'req-1', 'extra');
  const late = groups.join(Q, 'req-1', 'extra');
  // Ready first: held with the card's replies, not sent alone.
  const pc = content.reply('CONTENT', 'content', far);
  const pi = image.reply('IMAGE', 'image', far);
  await jest.advanceTimersByTimeAsync(10_000);
  expect(sent).toEqual([]);
  // The card's last reply: all three at once, without waiting for the other extra.
  await Promise.all([pc, pi, icon.reply('ICON', 'icon', far)]);
  expect(sent.map((m) => m.body)).toEqual(['CONTENT', 'IMAGE', 'ICON']);
  // The other extra, later: on its own, at once.
  await late.reply('SHOT', 'shot', far);
  expect(sent.map((m) => m.body)).toEqual(['CONTENT', 'IMAGE', 'ICON', 'SHOT']);
  // A request of extras only: each goes at once; an extra that leaves changes nothing.
  const alone = groups.join(Q, 'req-2', 'extra');
  groups.join(Q, 'req-2', 'extra').leave();
  await alone.reply('ALONE', 'alone', far);
  expect(sent.map((m) => m.body).at(-1)).toBe('ALONE');
});
