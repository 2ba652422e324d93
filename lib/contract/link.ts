/**
 * The Link record and every object of the contract (openapi.yaml, explained in docs/api.md), as types.
 * openapi.yaml is their one source: `npm run contract:types` generates openapi.gen.ts from it
 * (openapi-typescript), and test/contract/generated-types.test.ts fails when that file is stale.
 * Every schema of the document is a type of the same name here (ImageSet, Video, ForumPost, ...);
 * the names below only add the friendlier aliases the code uses.
 */
import { type Document, type Link, type LinkType, linkTypeValues, type Page, type Text } from './openapi.gen.js';

export type * from './openapi.gen.js';

export type LinkRecord = Link;
export type DocumentInfo = Document;
export type TextInfo = Text;
export type PageInfo = Page;

/** Every LinkType, in the document's order. */
export const LINK_TYPES: readonly LinkType[] = linkTypeValues;
