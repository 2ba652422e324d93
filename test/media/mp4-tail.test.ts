/** Finding an MP4 index beyond a prefix: pure box walking over hand-made layouts. */
import { indexOffsetBeyond } from '../../lib/media/mp4-tail';

function box(type: string, size: number, body = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body, Buffer.alloc(Math.max(0, size - 8 - body.length))]);
}

describe('indexOffsetBeyond', () => {
  const ftyp = box('ftyp', 24, Buffer.from('69736f6d0000020069736f6d69736f32', 'hex'));

  test('ftyp, mdat past the prefix: the index starts where mdat ends', () => {
    const mdatHead = box('mdat', 8);
    mdatHead.writeUInt32BE(1_000_000, 0);
    const prefix = Buffer.concat([ftyp, mdatHead, Buffer.alloc(4096)]);
    expect(indexOffsetBeyond(prefix, 1_000_000 + 24 + 5000)).toBe(24 + 1_000_000);
  });

  test('a 64-bit mdat size', () => {
    const head = Buffer.alloc(16);
    head.writeUInt32BE(1, 0);
    head.write('mdat', 4, 'latin1');
    head.writeBigUInt64BE(5_000_000_000n, 8);
    expect(indexOffsetBeyond(Buffer.concat([ftyp, head, Buffer.alloc(100)]), 5_000_000_000 + 24 + 9000)).toBe(5_000_000_024);
  });

  test('the index in the prefix (faststart): nothing to read', () => {
    const prefix = Buffer.concat([ftyp, box('moov', 200), box('mdat', 8)]);
    expect(indexOffsetBeyond(prefix, 10_000_000)).toBeUndefined();
  });

  test('an index that starts in the prefix but runs past it is read from its start', () => {
    const prefix = Buffer.concat([ftyp, box('free', 16), box('moov', 64)]);
    prefix.writeUInt32BE(500_000, 24 + 16);
    expect(indexOffsetBeyond(prefix, 2_000_000)).toBe(40);
  });

  test('not an MP4, a box running to the end, or a size pointing past the file: undefined', () => {
    expect(indexOffsetBeyond(Buffer.alloc(4096, 7), 1_000_000)).toBeUndefined();
    const toEnd = Buffer.concat([ftyp, box('mdat', 8), Buffer.alloc(100)]);
    toEnd.writeUInt32BE(0, 24);
    expect(indexOffsetBeyond(toEnd, 1_000_000)).toBeUndefined();
    const past = Buffer.concat([ftyp, box('mdat', 8), Buffer.alloc(100)]);
    past.writeUInt32BE(2_000_000, 24);
    expect(indexOffsetBeyond(past, 1_000_000)).toBeUndefined();
    const junk = Buffer.concat([ftyp, Buffer.from([0, 0, 0, 4, 1, 2, 3, 4]), Buffer.alloc(100)]);
    expect(indexOffsetBeyond(junk, 1_000_000)).toBeUndefined();
  });
});
