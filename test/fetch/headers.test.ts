/**
 * The one way headers are read (lib/fetch/headers.ts): a header's value, all headers flattened,
 * and the file name of Content-Disposition (RFC 6266, with RFC 8187 `filename*`).
 */
import { fileNameFromDisposition, flatHeaders, header } from '../../lib/fetch/headers';

describe('header and flatHeaders', () => {
  const headers = { 'content-type': 'text/html', 'set-cookie': ['a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT', 'b=2'], 'x-count': 3, 'x-none': undefined };

  test('header: the value, the first of several, a number as text, nothing when absent; any case of the name', () => {
    expect(header(headers, 'content-type')).toBe('text/html');
    expect(header(headers, 'Content-Type')).toBe('text/html');
    expect(header(headers, 'set-cookie')).toBe('a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT');
    expect(header(headers, 'x-count')).toBe('3');
    expect(header(headers, 'x-none')).toBeUndefined();
    expect(header(headers, 'x-missing')).toBeUndefined();
  });

  test('flatHeaders: lower-case names, lists joined by a comma, Set-Cookie by a newline (its values hold commas)', () => {
    expect(flatHeaders({ ...headers, 'X-Mixed': ['a', 'b'] })).toEqual({
      'content-type': 'text/html',
      'set-cookie': 'a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT\nb=2',
      'x-count': '3',
      'x-mixed': 'a, b',
    });
  });
});

describe('fileNameFromDisposition', () => {
  test.each([
    [`attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`, 'résumé.pdf'],
    ['attachment; filename="a b.pdf"', 'a b.pdf'],
    ['attachment; filename=plain.txt', 'plain.txt'],
    ['attachment; FILENAME="upper.txt"', 'upper.txt'],
    // filename* wins over filename, in either order (RFC 6266 section 4.3).
    [`attachment; filename="fallback.pdf"; filename*=UTF-8''%E2%82%AC%20rates.pdf`, '€ rates.pdf'],
    [`attachment; filename*=utf-8'en'%E2%82%AC.pdf; filename="fallback.pdf"`, '€.pdf'],
    [`attachment; filename*=iso-8859-1'de'Gr%FC%DFe.txt`, 'Grüße.txt'],
    // A quoted string's escapes, and a semicolon inside the quotes.
    ['attachment; filename="say \\"hi\\"; now.txt"', 'say "hi"; now.txt'],
    // Only the base name: no path, no control characters.
    ['attachment; filename="../../etc/passwd"', 'passwd'],
    ['attachment; filename="C:\\\\temp\\\\report.pdf"', 'report.pdf'],
    ['attachment; filename="a\u0001b.pdf"', 'ab.pdf'],
  ])('%s -> %s', (value, name) => {
    expect(fileNameFromDisposition(value)).toBe(name);
  });

  test('no usable name: broken or foreign-charset filename* falls back to filename, else nothing', () => {
    expect(fileNameFromDisposition(`attachment; filename*=UTF-8''%E2%82; filename="ok.pdf"`)).toBe('ok.pdf');
    expect(fileNameFromDisposition(`attachment; filename*=shift_jis''%82%A0.txt; filename="ok.txt"`)).toBe('ok.txt');
    expect(fileNameFromDisposition('inline')).toBeUndefined();
    expect(fileNameFromDisposition('attachment; filename=""')).toBeUndefined();
    expect(fileNameFromDisposition(undefined)).toBeUndefined();
  });
});
