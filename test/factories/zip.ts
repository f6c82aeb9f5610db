import crc32 from 'buffer-crc32';
import type { Response } from 'superagent';
import yauzl from 'yauzl';

/** A supertest parser that keeps a binary body (a zip) as a Buffer. */
export function binary(res: Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/**
 * The files of a zip, by name, as text. Each file's CRC-32 is checked against buffer-crc32's own
 * JavaScript computation (`signed`, which the service leaves as it is), so a wrong checksum in
 * the zip fails the test.
 */
export function unzip(buffer: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const files: Record<string, string> = {};
      zip.readEntry();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            const data = Buffer.concat(chunks);
            if (crc32.signed(data) >>> 0 !== entry.crc32) {
              reject(new Error(`${entry.fileName}: the zip's CRC-32 does not match its content`));
              return;
            }
            files[entry.fileName] = data.toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(files));
    });
  });
}
