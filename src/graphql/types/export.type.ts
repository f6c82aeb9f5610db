import { Field, Float, ID, ObjectType, registerEnumType } from 'type-graphql';
import { renamedTo } from './descriptions';

export enum ExportState {
  ABSENT = 'ABSENT',
  PROCESSING = 'PROCESSING',
  READY = 'READY',
}
registerEnumType(ExportState, {
  name: 'ExportState',
  description: 'Whether a version has an export file (spec operations §3, §4.8).',
  valuesConfig: {
    ABSENT: { description: 'No export file, and none being written.' },
    PROCESSING: { description: 'The export file is being written.' },
    READY: { description: 'The export file can be downloaded.' },
  },
});

@ObjectType('Export', { description: "A repository version's export (REST `…/:version/export/`)." })
export class ExportType {
  @Field(() => ExportState, { description: 'Whether the export file exists yet.' })
  state: ExportState;

  @Field(() => String, {
    nullable: true,
    description: '`[:repositoryId]_[:repoVersion].[:lastUpdated].zip` once ready.',
  })
  fileName: string | null;

  @Field(() => Float, { nullable: true, description: 'Bytes of the zip, once ready.' })
  size: number | null;

  @Field(() => Date, {
    nullable: true,
    description: 'The time in the file name: read changes since it (`updatedSince`).',
    deprecationReason: renamedTo('updatedOn'),
  })
  lastUpdated: Date | null;

  @Field(() => Date, {
    nullable: true,
    description: 'The time in the file name: read changes since it (`updatedSince`).',
  })
  get updatedOn(): Date | null {
    return this.lastUpdated;
  }

  @Field(() => String, {
    nullable: true,
    description: 'A single-use download address that expires (REST `exportURL`), once ready.',
  })
  downloadUrl: string | null;
}

export enum ExportOutcome {
  QUEUED = 'QUEUED',
  EXISTS = 'EXISTS',
  PROCESSING = 'PROCESSING',
}
registerEnumType(ExportOutcome, {
  name: 'ExportOutcome',
  description:
    'What asking for an export did: queued it (REST 202), or it exists (200) or is being written (409).',
  valuesConfig: {
    QUEUED: { description: 'A task to write it was queued (REST 202).' },
    EXISTS: { description: 'The export file exists already (REST 200).' },
    PROCESSING: { description: 'It is being written already (REST 409).' },
  },
});

@ObjectType('RequestExportPayload', { description: 'The answer to asking for an export.' })
export class RequestExportPayload {
  @Field({ description: 'The REST URL of the version.' })
  url: string;

  @Field(() => ID, { description: "The version's id." })
  id: string;

  @Field(() => ExportOutcome, { description: 'What the request did.' })
  outcome: ExportOutcome;

  @Field(() => String, { nullable: true, description: 'The task writing it, when queued.' })
  taskId: string | null;
}
