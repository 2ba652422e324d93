import { classify } from '../../lib/extract/classify';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const PDF = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n');
const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0, 0, 0, 0, 0]), Buffer.alloc(64)]);

test.each([
  ['text/html; charset=utf-8', Buffer.from('<!doctype html><title>x</title>'), 'PAGE'],
  ['application/xhtml+xml', Buffer.from('<html xmlns="http://www.w3.org/1999/xhtml"></html>'), 'PAGE'],
  ['image/png', PNG, 'IMAGE'],
  ['application/octet-stream', PNG, 'IMAGE'], // bytes win over a generic header
  ['text/html', PNG, 'IMAGE'], // and over a lying one
  [undefined, PDF, 'DOCUMENT'],
  ['application/pdf', PDF, 'DOCUMENT'],
  ['audio/mpeg', MP3, 'AUDIO'],
  ['video/mp4', Buffer.alloc(16), 'VIDEO'], // declared media without magic: trust the header
  ['text/plain', Buffer.from('just some words'), 'TEXT'],
  ['text/markdown', Buffer.from('# Title'), 'TEXT'],
  ['text/csv', Buffer.from('a,b\n1,2'), 'TEXT'],
  ['application/json', Buffer.from('{"a":1}'), 'TEXT'],
  ['text/plain', Buffer.from('<!DOCTYPE html><html><head><title>x'), 'PAGE'], // mislabelled HTML
  ['image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'IMAGE'],
  [undefined, Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>'), 'IMAGE'],
  ['application/octet-stream', Buffer.from([1, 2, 3, 4]), 'UNKNOWN'],
  [undefined, Buffer.from('<html><body>hi'), 'PAGE'],
])('%s + bytes -> %s', async (ct, bytes, type) => {
  expect((await classify(ct, bytes)).type).toBe(type);
});
