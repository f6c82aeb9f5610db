import { PassThrough, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import crc32 from 'buffer-crc32';
import { ZipFile } from 'yazl';

/**
 * The JSON documents this service zips (exports, `Compress: true` answers) hold one entry of this
 * name, as OCL's do (spec operations §4.8, core §2.1).
 */
export const ZIP_ENTRY = 'export.json';

/**
 * Deflate level 3, not zlib's default 6: a CIEL export's 640 MB of JSON deflates in 2.4 s of CPU
 * instead of 6.4 s, into 74 MB instead of 66 MB (the CPU competes with the database reading it).
 */
const COMPRESSION_LEVEL = 3;

// yazl computes each entry's CRC-32 through buffer-crc32, a JavaScript loop over every byte
// (1.5 s of a CIEL export's main thread); Node's zlib computes the same value natively (0.2 s).
// buffer-crc32's `unsigned(data, previous)` is the call yazl makes; where Node lacks zlib.crc32
// (before 20.15) it stays as it is.
if (typeof zlib.crc32 === 'function') {
  Object.assign(crc32, {
    unsigned: (data: string | Buffer, previous?: Buffer | number): number =>
      zlib.crc32(data, typeof previous === 'number' ? previous : (previous?.readUInt32BE(0) ?? 0)),
  });
}

/**
 * A zip of one JSON document written as it is made: text written to `json` (which holds up to
 * `highWaterMark` bytes ahead of the compression) comes out zipped from `output`.
 */
export function jsonZip(options: { mtime?: Date; highWaterMark?: number } = {}): {
  json: PassThrough;
  output: Readable;
} {
  const zip = new ZipFile();
  const json = new PassThrough(
    options.highWaterMark ? { highWaterMark: options.highWaterMark } : {},
  );
  zip.addReadStream(json, ZIP_ENTRY, {
    compressionLevel: COMPRESSION_LEVEL,
    ...(options.mtime ? { mtime: options.mtime } : {}),
  });
  zip.end();
  return { json, output: zip.outputStream as Readable };
}

/** A zip of one JSON document already in memory. */
export async function zipText(text: string): Promise<Buffer> {
  const zip = new ZipFile();
  zip.addBuffer(Buffer.from(text), ZIP_ENTRY, { compressionLevel: COMPRESSION_LEVEL });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
