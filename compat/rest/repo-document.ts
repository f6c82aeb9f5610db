import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type {
  RepoDetailInclude,
  RepoRef,
  RepoView,
  ServiceContext,
  Services,
} from '../../src/services';
import { jsonZip, writeTo } from '../../src/services';
import type { Reply } from '../http';
import { referenceJson } from './collection.mapper';
import { conceptContent } from './concept.mapper';
import { mappingContent } from './mapping.mapper';
import { repoDetailBody } from './repo.mapper';

const COMMA = 0x2c;

/**
 * The one serializer of a repository detail with its content (spec core §4.5/§4.6 get
 * parameters): the detail's fields, then `concepts`, `mappings` (and a collection's
 * `references`) as asked, written a batch at a time as the service walks them. A repository
 * get with `includeConcepts`/`includeMappings` answers it, and an export file holds it
 * (spec operations §4.8: exactly that get with `limit=0`).
 */
export async function writeRepoDocument(
  services: Services,
  ctx: ServiceContext,
  at: RepoRef | RepoView,
  include: RepoDetailInclude,
  write: (piece: string | Buffer) => Promise<void>,
  summary = false,
): Promise<void> {
  let section: string | null = null;
  let empty = true;
  const items = async (list: object[]): Promise<void> => {
    if (list.length === 0) return;
    // One stringify for the batch: the array without its brackets is the items joined by ','.
    // The brackets are dropped from the bytes, not the text (no copy of ~200 KB a batch): after
    // an earlier batch, the '[' becomes the ',' that follows it.
    const bytes = Buffer.from(JSON.stringify(list));
    if (empty) {
      await write(bytes.subarray(1, -1));
    } else {
      bytes[0] = COMMA;
      await write(bytes.subarray(0, -1));
    }
    empty = false;
  };
  await services.repositoryDetails.walk(ctx, at, include, {
    detail: async (detail) => write(JSON.stringify(repoDetailBody(detail, summary)).slice(0, -1)),
    section: async (name) => {
      await write(`${section ? ']' : ''},${JSON.stringify(name)}:[`);
      section = name;
      empty = true;
    },
    concepts: (batch) => items(batch.map(conceptContent)),
    mappings: (batch) => items(batch.map(({ view, ends }) => mappingContent(view, ends))),
    references: (batch) => items(batch.map(referenceJson)),
  });
  await write(section ? ']}' : '}');
}

/** Writes to a stream, waiting while it is full (never for a client that went away). */
function writerTo(out: Writable): (piece: string | Buffer) => Promise<void> {
  return (piece) => writeTo(out, piece);
}

/**
 * The document as the answer: JSON streamed, or with the `Compress: true` header a zip holding
 * `export.json` (spec core §2.1, operations §4.10), streamed too.
 */
export function documentReply(
  services: Services,
  ctx: ServiceContext,
  view: RepoView,
  include: RepoDetailInclude,
  compress: boolean,
  summary: boolean,
): Reply {
  if (!compress) {
    return {
      kind: 'stream',
      status: 200,
      type: 'application/json',
      body: (out) => writeRepoDocument(services, ctx, view, include, writerTo(out), summary),
    };
  }
  return {
    kind: 'stream',
    status: 200,
    type: 'application/zip',
    headers: { 'Content-Disposition': 'attachment; filename="export.zip"' },
    body: async (out) => {
      const zip = jsonZip();
      const json = zip.json;
      zip.output.pipe(out, { end: false });
      // A client that goes away stops the walk (and frees its connection) at the next write.
      const gone = (): void => {
        json.destroy();
        zip.output.destroy();
      };
      out.once('close', gone);
      try {
        await writeRepoDocument(services, ctx, view, include, writerTo(json), summary);
        json.end();
        await finished(zip.output);
      } finally {
        out.off('close', gone);
      }
    },
  };
}
