import type { Readable } from 'node:stream';
import crc32 from 'buffer-crc32';
import { jsonZip, zipText, ZIP_ENTRY } from '../../src/services';
import { unzip } from '../factories/zip';

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// Text beyond ASCII and beyond one byte per character, split inside a character's bytes.
const text = JSON.stringify({
  names: ['Paludisme', 'Малярия', '疟疾', 'مَلاريا'],
  filler: 'x'.repeat(200_000),
});

describe('zips of JSON documents (src/services/transfer/zip.ts)', () => {
  it('zips a document written in pieces, text and bytes, with a correct CRC-32', async () => {
    const zip = jsonZip({ mtime: new Date('2026-01-02T03:04:05Z'), highWaterMark: 1024 });
    const done = collect(zip.output);
    const bytes = Buffer.from(text);
    const cut = bytes.indexOf(Buffer.from('Малярия')) + 1;
    zip.json.write(bytes.subarray(0, cut));
    zip.json.write(bytes.subarray(cut, 100_000));
    zip.json.write(bytes.subarray(100_000).toString('latin1'), 'latin1');
    zip.json.end();
    const files = await unzip(await done);
    expect(Object.keys(files)).toEqual([ZIP_ENTRY]);
    expect(files[ZIP_ENTRY]).toBe(text);
  });

  it('zips a document in memory with a correct CRC-32', async () => {
    const files = await unzip(await zipText(text));
    expect(files[ZIP_ENTRY]).toBe(text);
  });

  it("computes yazl's checksums as buffer-crc32's JavaScript does, piece by piece", () => {
    const bytes = Buffer.from(text);
    const whole = crc32.signed(bytes) >>> 0;
    expect(crc32.unsigned(bytes)).toBe(whole);
    const first = crc32.unsigned(bytes.subarray(0, 12_345));
    expect(crc32.unsigned(bytes.subarray(12_345), first)).toBe(whole);
    expect(crc32.unsigned(bytes.subarray(12_345), crc32(bytes.subarray(0, 12_345)))).toBe(whole);
  });
});
