/**
 * What oEmbed 1.0 (https://oembed.com/, section 2.3) asks of a response, written out apart from
 * the code under test: `type` and `version` "1.0" always; a photo's `url`, `width` and `height`;
 * a video's or rich's `html`, `width` and `height`; a link nothing more; the thumbnail's three
 * fields together or not at all; and every size within the request's maxwidth and maxheight.
 */
export interface Bounds {
  maxwidth?: number;
  maxheight?: number;
}

const TYPES = ['photo', 'video', 'rich', 'link'];
const THUMBNAIL = ['thumbnail_url', 'thumbnail_width', 'thumbnail_height'];
const isSize = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** Every way `answer` breaks the specification (empty when none). */
export function oembedSpecErrors(answer: Record<string, unknown>, bounds: Bounds = {}): string[] {
  const errors: string[] = [];
  if (answer.version !== '1.0') errors.push(`version ${JSON.stringify(answer.version)} is not "1.0"`);
  if (!TYPES.includes(answer.type as string)) return [...errors, `type ${JSON.stringify(answer.type)} is not one of ${TYPES.join(', ')}`];
  const need = answer.type === 'photo' ? ['url', 'width', 'height'] : answer.type === 'link' ? [] : ['html', 'width', 'height'];
  for (const f of need) if (answer[f] === undefined || answer[f] === '') errors.push(`a ${answer.type} needs ${f}`);
  for (const f of ['url', 'html']) if (answer[f] !== undefined && typeof answer[f] !== 'string') errors.push(`${f} is not a string`);
  for (const f of ['width', 'height', 'thumbnail_width', 'thumbnail_height'])
    if (answer[f] !== undefined && !isSize(answer[f])) errors.push(`${f} is not a positive integer`);
  const present = THUMBNAIL.filter((f) => answer[f] !== undefined);
  if (present.length > 0 && present.length < 3) errors.push(`thumbnail fields come together: only ${present.join(', ')}`);
  const over = (w: unknown, h: unknown, what: string) => {
    if (bounds.maxwidth !== undefined && typeof w === 'number' && w > bounds.maxwidth) errors.push(`${what} width ${w} > maxwidth ${bounds.maxwidth}`);
    if (bounds.maxheight !== undefined && typeof h === 'number' && h > bounds.maxheight) errors.push(`${what} height ${h} > maxheight ${bounds.maxheight}`);
  };
  over(answer.width, answer.height, answer.type as string);
  over(answer.thumbnail_width, answer.thumbnail_height, 'thumbnail');
  return errors;
}
