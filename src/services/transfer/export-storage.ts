import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { GetObjectCommand, DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ExportStorageSettings } from '../../config';

/**
 * A file being written: bytes go to `stream`; nothing is readable under its key until `publish`
 * (which makes it so at once, whole); `discard` drops what was written.
 */
export interface PendingFile {
  stream: Writable;
  /** Bytes written so far. */
  readonly size: number;
  publish(): Promise<void>;
  discard(): Promise<void>;
}

/** Where export files live (spec operations §1.7: cached zipped JSON of a repository version). */
export interface ExportStorage {
  /** Starts writing `key`; readers see the old file (or none) until it is published. */
  create(key: string): Promise<PendingFile>;
  /** The file, or null when there is none. */
  open(key: string): Promise<Readable | null>;
  /** Removes the file (nothing when there is none). */
  remove(key: string): Promise<void>;
}

export function createExportStorage(settings: ExportStorageSettings): ExportStorage {
  return settings.kind === 'local'
    ? new LocalExportStorage(settings.directory)
    : new S3ExportStorage(settings);
}

/** Counts what passes through, so a pending file knows its size. */
function counting(): { stream: PassThrough; size: () => number } {
  let size = 0;
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => (size += chunk.length));
  return { stream, size: () => size };
}

/**
 * Files under a directory (`DATA_DIR/exports` by default). A file is written under a temporary
 * name beside its final one, flushed to disk and renamed into place: a process killed while
 * writing leaves only a temporary file (removed at the next write of that key), never a
 * half-written file under the name readers open.
 */
export class LocalExportStorage implements ExportStorage {
  constructor(private readonly directory: string) {}

  async create(key: string): Promise<PendingFile> {
    const target = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await this.removeTemporaries(target);
    const temporary = `${target}.${crypto.randomBytes(6).toString('hex')}.partial`;
    const file = fs.createWriteStream(temporary, { flags: 'wx' });
    const counter = counting();
    counter.stream.pipe(file);
    return {
      stream: counter.stream,
      get size() {
        return counter.size();
      },
      publish: async () => {
        counter.stream.end();
        await finished(file);
        const handle = await fs.promises.open(temporary, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fs.promises.rename(temporary, target);
      },
      discard: async () => {
        counter.stream.destroy();
        file.destroy();
        await fs.promises.rm(temporary, { force: true });
      },
    };
  }

  async open(key: string): Promise<Readable | null> {
    const stream = fs.createReadStream(this.pathOf(key));
    try {
      await once(stream, 'open');
      return stream;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }

  /** Keys are ours (`<repository id>/<version id>.zip`), never a client's text. */
  private pathOf(key: string): string {
    if (!/^[\w./-]+$/.test(key) || key.split('/').includes('..')) {
      throw new Error(`Invalid export key '${key}'`);
    }
    return path.join(this.directory, key);
  }

  /** Temporary files of writes that never finished (a killed process's). */
  private async removeTemporaries(target: string): Promise<void> {
    const base = path.basename(target);
    const entries = await fs.promises.readdir(path.dirname(target));
    await Promise.all(
      entries
        .filter((name) => name.startsWith(`${base}.`) && name.endsWith('.partial'))
        .map((name) => fs.promises.rm(path.join(path.dirname(target), name), { force: true })),
    );
  }
}

/**
 * Objects in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…) through the AWS SDK v3. A file is
 * a multipart upload streamed part by part; S3 makes an object visible only when its upload
 * completes, so an interrupted export leaves no object (and `discard` aborts the upload).
 * Credentials come from the SDK's usual chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`,
 * profiles, instance roles).
 */
export class S3ExportStorage implements ExportStorage {
  private readonly client: S3Client;

  constructor(private readonly settings: Extract<ExportStorageSettings, { kind: 's3' }>) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
    });
  }

  create(key: string): Promise<PendingFile> {
    const counter = counting();
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.settings.bucket,
        Key: this.keyOf(key),
        Body: counter.stream,
        ContentType: 'application/zip',
      },
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
      leavePartsOnError: false,
    });
    const done = upload.done();
    // Observed by publish or discard; never an unhandled rejection meanwhile.
    done.catch(() => undefined);
    return Promise.resolve({
      stream: counter.stream,
      get size() {
        return counter.size();
      },
      publish: async () => {
        counter.stream.end();
        await done;
      },
      discard: async () => {
        await upload.abort().catch(() => undefined);
        counter.stream.destroy();
      },
    });
  }

  async open(key: string): Promise<Readable | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.keyOf(key) }),
      );
      return (answer.Body as Readable | undefined) ?? null;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.keyOf(key) }),
    );
  }

  private keyOf(key: string): string {
    return `${this.settings.prefix}${key}`;
  }
}
