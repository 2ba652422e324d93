/** Prices as shop pages print them, in every store country's locale (lib/platforms/shared/price.ts, used by Amazon and Etsy). */
import { parseLocaleNumber, parsePrice } from '../../../lib/platforms/shared/price';

describe('locale prices', () => {
  test.each([
    ['1.234,56 €', 'de', 1234.56, 'EUR'],
    ['€149,00', 'es', 149, 'EUR'],
    ['$1,234.56', 'com', 1234.56, 'USD'],
    ['$1,234', 'com', 1234, 'USD'],
    ['1.234 €', 'de', 1234, 'EUR'],
    ["CHF 1'234.50", 'com', 1234.5, 'CHF'],
    ['₹1,23,456.00', 'in', 123456, 'INR'],
    ['¥1,280', 'cn', 1280, 'CNY'],
    ['$10.99 - $19.99', 'com', 10.99, 'USD'],
    ['MX$1,299.00', 'com.mx', 1299, 'MXN'],
    ['$1,299.00', 'com.mx', 1299, 'MXN'],
    ['AED 99.00', 'ae', 99, 'AED'],
    ['12,99', 'fr', 12.99, 'EUR'],
    ['1 299,00 kr', 'se', 1299, 'SEK'],
  ])('%s on .%s', (raw, tld, price, currency) => {
    expect(parsePrice(raw, tld)).toEqual({ price, currency });
  });
  test('numbers', () => {
    expect(parseLocaleNumber('1.234.567')).toBe(1234567);
    expect(parseLocaleNumber('1,5')).toBe(1.5);
    expect(parseLocaleNumber('abc')).toBeUndefined();
  });
});
